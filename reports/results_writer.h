// SPDX-License-Identifier: Apache-2.0
// Writers for RunResults: protobuf JSON (the results file) and the summary
// table printed after a run (lm-eval's layout, one block per model).
#ifndef FOCAL_REPORTS_RESULTS_WRITER_H_
#define FOCAL_REPORTS_RESULTS_WRITER_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "reports/results.pb.h"

namespace focal::reports {

// Pretty JSON with proto field names; every field printed, including zeros.
absl::StatusOr<std::string> ToPrettyJson(const google::protobuf::Message& message);
absl::StatusOr<std::string> ResultsToJson(const RunResults& results);

// "<last component of the model path> <variant>", the column/row label of a
// model in every table.
std::string ModelLabel(const ModelRun& model);
// A metric name with its long-context qualifiers: "acc", "string_match_all@4096",
// "substring_match@2048 depth 0.5".
std::string MetricLabel(const std::string& metric, int64_t context_length,
                        const double* gold_depth);
// Escapes LaTeX's special characters that occur in task and metric names.
std::string EscapeLatex(const std::string& s);
absl::StatusOr<RunResults> ResultsFromJson(const std::string& json, const std::string& source);

// Markdown table: | Model | Tasks | Version | n-shot | Metric | Value | | Stderr |.
std::string SummaryTable(const RunResults& results);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_RESULTS_WRITER_H_
