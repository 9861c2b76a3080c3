// SPDX-License-Identifier: Apache-2.0
// `focal-eval report`: any number of saved run results (any models) as one
// benchmark table: rows are task x metric (x length), columns are models,
// the best value of each row in bold; optionally deltas against a baseline.
#ifndef FOCAL_REPORTS_BENCHMARK_TABLE_H_
#define FOCAL_REPORTS_BENCHMARK_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/results.pb.h"

namespace focal::reports {

// format: "md", "csv", "latex", "html" or "json" (all runs merged into one
// RunResults). baseline: a column label (see the header of the md output:
// "<model dir name> <variant>") or empty.
absl::StatusOr<std::string> BenchmarkTable(const std::vector<RunResults>& runs,
                                           const std::string& format, const std::string& baseline);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_BENCHMARK_TABLE_H_
