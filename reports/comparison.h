// SPDX-License-Identifier: Apache-2.0
// Builds the paired base-vs-focal comparison from per-document scores, and
// renders it (Markdown, CSV, LaTeX; JSON through protobuf).
#ifndef FOCAL_REPORTS_COMPARISON_H_
#define FOCAL_REPORTS_COMPARISON_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/results.pb.h"

namespace focal::reports {

// Per-document scores of one model: task key -> metric -> values, plus the
// checksum of the requests behind them.
struct PerDocScores {
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  std::map<std::string, std::string> requests_sha256;
};

struct CompareOptions {
  int64_t bootstrap_iters = 10000;
  uint64_t seed = 1234;
  double confidence = 0.95;
};

// models(0) of `runs` is the base; every other model is compared with it.
// FailedPrecondition when a task's request checksums differ between models
// (results of different requests are never paired).
// How a compared model is named in the tables: its variant ("base",
// "focal(t=0.4, retrofit)"), and its backend when that differs from the
// base's (a model beside itself at another precision: "base, cpu:bf16").
std::string VariantLabel(const ModelRun& model, const ModelRun& base);

absl::StatusOr<ComparisonReport> BuildComparison(const RunResults& runs,
                                                 const std::vector<PerDocScores>& scores,
                                                 const CompareOptions& options);

// Attention diagnostics per model, per layer: the mean over heads and over
// every measured task (each task and length weighted equally).
struct LayerCurve {
  int model_index = 0;
  std::string label;                // ModelLabel of the model
  std::vector<double> entropy;      // per layer, nats
  std::vector<double> needle_mass;  // per layer; empty without needle tasks
};
std::vector<LayerCurve> AttentionCurves(const ComparisonReport& report);

// The category of a row (reports/length_summary.h); reports written before
// HELMET have none, and then every row is RULER's.
inline std::string LengthCategoryOf(const LengthComparison& l) {
  return l.category().empty() ? "ruler" : l.category();
}
// A category average's row as the Markdown and HTML tables print it ("-" where a report
// written before the paired interval has none).
struct AverageCells {
  std::string base, focal, diff, ci, pairs, relative;
  bool significant = false;  // the interval excludes no change: the tables embolden diff
};
AverageCells FormatAverage(const LengthComparison& l);
// The fewest tasks behind a category's averages (RULER's 13 when unknown).
int64_t FewestTasks(const ComparisonReport& report, const std::string& category);
// The categories of report.lengths() in their order.
std::vector<std::string> LengthCategories(const ComparisonReport& report);

std::string ComparisonMarkdown(const ComparisonReport& report);
// One row per model x task x length x layer x head.
std::string ComparisonAttentionCsv(const ComparisonReport& report);
std::string ComparisonCsv(const ComparisonReport& report);
std::string ComparisonLatex(const ComparisonReport& report);
absl::StatusOr<std::string> ComparisonJson(const ComparisonReport& report);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_COMPARISON_H_
