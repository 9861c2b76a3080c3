// SPDX-License-Identifier: Apache-2.0
// Writers for RunResults: protobuf JSON (the results file) and the summary
// table printed after a run (lm-eval's layout, one block per model).
#ifndef FOCAL_REPORTS_RESULTS_WRITER_H_
#define FOCAL_REPORTS_RESULTS_WRITER_H_

#include <string>

#include "absl/status/statusor.h"
#include "reports/results.pb.h"

namespace focal::reports {

// Pretty JSON with proto field names; every field printed, including zeros.
absl::StatusOr<std::string> ResultsToJson(const RunResults& results);
absl::StatusOr<RunResults> ResultsFromJson(const std::string& json, const std::string& source);

// Markdown table: | Model | Tasks | Version | n-shot | Metric | Value | | Stderr |.
std::string SummaryTable(const RunResults& results);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_RESULTS_WRITER_H_
