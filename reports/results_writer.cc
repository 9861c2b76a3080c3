// SPDX-License-Identifier: Apache-2.0
#include "reports/results_writer.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace focal::reports {

absl::StatusOr<std::string> ResultsToJson(const RunResults& results) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(results, &out, opts);
  if (!st.ok()) return absl::InternalError(absl::StrCat("results to JSON: ", st.ToString()));
  return out;
}

absl::StatusOr<RunResults> ResultsFromJson(const std::string& json, const std::string& source) {
  RunResults r;
  google::protobuf::util::JsonParseOptions opts;
  auto st = google::protobuf::util::JsonStringToMessage(json, &r, opts);
  if (!st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a results file: ", st.ToString()));
  }
  return r;
}

std::string SummaryTable(const RunResults& results) {
  std::string out = "| Model | Tasks | Version | n-shot | Metric |   | Value |   | Stderr |\n"
                    "|---|---|---:|---:|---|---|---:|---|---:|\n";
  for (const ModelRun& m : results.models()) {
    // The directory's last component keeps the table narrow; the full path
    // is in the results file.
    std::string path = m.model_path();
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const std::string model = absl::StrCat(path.substr(path.find_last_of('/') + 1), " ",
                                           m.variant());
    for (const TaskResult& t : m.tasks()) {
      for (const MetricValue& v : t.metrics()) {
        const std::string se = std::isnan(v.stderr()) ? "N/A" : absl::StrFormat("%.4f", v.stderr());
        std::string metric = v.name();
        if (v.context_length() > 0) absl::StrAppend(&metric, "@", v.context_length());
        if (v.has_gold_depth()) absl::StrAppend(&metric, " depth ", v.gold_depth());
        absl::StrAppend(&out, "| ", model, " | ", t.task(), " | ", t.version(), " | ",
                        t.num_fewshot(), " | ", metric, " | ", v.higher_is_better() ? "↑" : "↓",
                        " | ", absl::StrFormat("%.4f", v.value()), " | ± | ", se, " |\n");
      }
    }
  }
  for (const ModelRun& m : results.models()) {
    if (m.ruler_by_length().empty()) continue;
    absl::StrAppend(&out, "\nRULER average over tasks (", m.variant(), "):");
    for (const LengthSummary& l : m.ruler_by_length()) {
      absl::StrAppend(&out, absl::StrFormat(" %d: %.2f (%d tasks);", l.context_length(),
                                            l.average(), l.num_tasks()));
    }
    absl::StrAppend(&out, " effective length ", m.effective_length(),
                    m.length_extrapolated() ? " (RoPE extrapolated)" : "", "\n");
  }
  return out;
}

}  // namespace focal::reports
