// SPDX-License-Identifier: Apache-2.0
#include "reports/results_writer.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver_util.h"
#include "reports/length_summary.h"

namespace focal::reports {

absl::StatusOr<std::string> ToPrettyJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  // What MessageToJsonString does, but through a deterministic serialization:
  // map entries come out ordered by key, so equal reports print equal.
  std::string binary;
  {
    google::protobuf::io::StringOutputStream sos(&binary);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&cos);
  }
  constexpr char kUrlPrefix[] = "type.googleapis.com";
  std::unique_ptr<google::protobuf::util::TypeResolver> resolver(
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          kUrlPrefix, message.GetDescriptor()->file()->pool()));
  std::string out;
  auto st = google::protobuf::util::BinaryToJsonString(
      resolver.get(), absl::StrCat(kUrlPrefix, "/", message.GetDescriptor()->full_name()), binary,
      &out, opts);
  if (!st.ok()) {
    return absl::InternalError(absl::StrCat(message.GetTypeName(), " to JSON: ", st.ToString()));
  }
  return out;
}

absl::StatusOr<std::string> ResultsToJson(const RunResults& results) {
  return ToPrettyJson(results);
}

std::string ModelLabel(const ModelRun& m) {
  // The directory's last component keeps tables narrow; the full path is in
  // the results file.
  std::string path = m.model_path();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return absl::StrCat(path.substr(path.find_last_of('/') + 1), " ", m.variant());
}

std::string MetricLabel(const std::string& metric, int64_t context_length,
                        const double* gold_depth) {
  std::string m = metric;
  if (context_length > 0) absl::StrAppend(&m, "@", context_length);
  if (gold_depth != nullptr) absl::StrAppend(&m, " depth ", *gold_depth);
  return m;
}

std::string EscapeLatex(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '%' || c == '&' || c == '#') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<RunResults> ResultsFromJson(const std::string& json, const std::string& source) {
  RunResults r;
  google::protobuf::util::JsonParseOptions opts;
  auto st = google::protobuf::util::JsonStringToMessage(json, &r, opts);
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a results file: ", st.ToString()));
  }
  return r;
}

std::string SummaryTable(const RunResults& results) {
  std::string out;
  if (!results.config().data_warning().empty()) {
    absl::StrAppend(&out, "**Warning:** ", results.config().data_warning(), "\n\n");
  }
  absl::StrAppend(&out,
                  "| Model | Tasks | Version | n-shot | Metric |   | Value |   | Stderr |\n"
                  "|---|---|---:|---:|---|---|---:|---|---:|\n");
  for (const ModelRun& m : results.models()) {
    const std::string model = ModelLabel(m);
    for (const TaskResult& t : m.tasks()) {
      for (const MetricValue& v : t.metrics()) {
        const std::string se = std::isnan(v.stderr()) ? "N/A" : absl::StrFormat("%.4f", v.stderr());
        const double depth = v.gold_depth();
        const std::string metric =
            MetricLabel(v.name(), v.context_length(), v.has_gold_depth() ? &depth : nullptr);
        absl::StrAppend(&out, "| ", model, " | ", t.task(), " | ", t.version(), " | ",
                        t.num_fewshot(), " | ", metric, " | ", v.higher_is_better() ? "↑" : "↓",
                        " | ", std::isnan(v.value()) ? "N/A" : absl::StrFormat("%.4f", v.value()),
                        " | ± | ", se, " |\n");
      }
    }
  }
  std::set<std::string> noted;  // once per task, whatever the number of models
  for (const ModelRun& m : results.models()) {
    for (const TaskResult& t : m.tasks()) {
      // A shard can hold none of a task's documents (fewer than shards).
      if (t.num_docs() == 0 && noted.insert(t.task()).second) {
        absl::StrAppend(&out, "\nNote (", t.task(), "): no documents in this shard (",
                        results.config().shard_index(), "/", results.config().shard_count(),
                        "); `merge` joins the shards\n");
      }
      if (!t.note().empty() && noted.insert(t.task()).second) {
        absl::StrAppend(&out, "\nNote (", t.task(), "): ", t.note(), "\n");
      }
    }
  }
  for (const ModelRun& m : results.models()) {
    std::string current;  // HELMET category averages, one line per category
    for (const LengthSummary& l : m.category_by_length()) {
      if (l.category() != current) {
        absl::StrAppend(&out, "\n", LengthCategoryTitle(l.category()), " average over tasks (",
                        m.variant(), "):");
        current = l.category();
      }
      absl::StrAppend(&out, absl::StrFormat(" %d: %.2f (%d tasks);", l.context_length(),
                                            l.average(), l.num_tasks()));
    }
    if (!current.empty()) absl::StrAppend(&out, "\n");
  }
  for (const ModelRun& m : results.models()) {
    if (m.ruler_by_length().empty()) continue;
    absl::StrAppend(&out, "\nRULER average over tasks (", m.variant(), "):");
    int64_t fewest = kRulerTaskCount;
    for (const LengthSummary& l : m.ruler_by_length()) {
      absl::StrAppend(&out, absl::StrFormat(" %d: %.2f (%d tasks);", l.context_length(),
                                            l.average(), l.num_tasks()));
      fewest = std::min(fewest, l.num_tasks());
    }
    absl::StrAppend(&out, " effective length ", m.effective_length(),
                    m.length_extrapolated() ? " (RoPE extrapolated)" : "",
                    PartialRulerLabel("ruler", fewest), "\n");
  }
  return out;
}

}  // namespace focal::reports
