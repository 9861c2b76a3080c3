// SPDX-License-Identifier: Apache-2.0
// Paired statistics for base-vs-focal comparisons on identical documents.
#ifndef FOCAL_REPORTS_STATS_H_
#define FOCAL_REPORTS_STATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace focal::reports {

struct Interval {
  double low = 0;
  double high = 0;
};

// Percentile bootstrap of mean(b) - mean(a) over paired documents: `iters`
// resamples of document indices (seeded, CPython-compatible generator),
// the (1 - level)/2 and (1 + level)/2 quantiles (linear interpolation).
absl::StatusOr<Interval> PairedBootstrapDiff(absl::Span<const double> a, absl::Span<const double> b,
                                             int64_t iters = 10000, uint64_t seed = 1234,
                                             double level = 0.95);

// The same for the perplexity ratio exp(-mean(b_ll)) / exp(-mean(a_ll)).
absl::StatusOr<Interval> PairedBootstrapPerplexityRatio(absl::Span<const double> a_ll,
                                                        absl::Span<const double> b_ll,
                                                        int64_t iters = 10000, uint64_t seed = 1234,
                                                        double level = 0.95);

// One stratum of a stratified paired bootstrap: paired per-document values
// of one task (and metric, length, depth).
struct PairedStratum {
  absl::Span<const double> a, b;
  double scale = 1;  // the stratum's values are reported x scale
};

// The interval of an average over strata, mean over s of scale_s x
// (mean(b_s) - mean(a_s)), as a category average (RULER, HELMET recall) is
// built from its tasks: each resample draws, within every stratum in order,
// as many documents as it has (the same for a and b), so the strata's sizes
// are kept. One stratum gives PairedBootstrapDiff's interval x scale.
absl::StatusOr<Interval> StratifiedPairedBootstrapDiff(absl::Span<const PairedStratum> strata,
                                                       int64_t iters = 10000, uint64_t seed = 1234,
                                                       double level = 0.95);

struct McNemar {
  int64_t only_a = 0;  // a right, b wrong
  int64_t only_b = 0;  // b right, a wrong
  double p_value = 1;  // exact two-sided binomial test on the discordant pairs
};
// Exact McNemar test for paired 0/1 outcomes.
absl::StatusOr<McNemar> McNemarExact(absl::Span<const double> a, absl::Span<const double> b);

struct WinTieLoss {
  int64_t wins = 0;  // b > a
  int64_t ties = 0;
  int64_t losses = 0;  // b < a
};
WinTieLoss CountWinTieLoss(absl::Span<const double> a, absl::Span<const double> b);

// Quantile q in [0, 1] of sorted values, linear interpolation (numpy default).
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_STATS_H_
