// SPDX-License-Identifier: Apache-2.0
#include "reports/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tasks/metrics.h"

namespace focal::reports {
namespace {

absl::Status CheckPaired(absl::Span<const double> a, absl::Span<const double> b) {
  if (a.size() != b.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("paired statistics need equal lengths, got ", a.size(), " and ", b.size()));
  }
  if (a.empty()) return absl::InvalidArgumentError("paired statistics need at least one document");
  return absl::OkStatus();
}

// Every bootstrap here: `iters` statistics drawn from one PyRandom stream (Python's random,
// so a Python reference reproduces the draws), then the two-sided quantiles.
template <typename Draw>
Interval BootstrapQuantiles(int64_t iters, uint64_t seed, double level, Draw draw) {
  tasks::PyRandom rnd(seed);
  std::vector<double> stats;
  stats.reserve(iters);
  for (int64_t r = 0; r < iters; ++r) stats.push_back(draw(rnd));
  std::sort(stats.begin(), stats.end());
  return {Quantile(stats, (1 - level) / 2), Quantile(stats, (1 + level) / 2)};
}

// One resample of n paired documents per draw, handed to `stat` as indices.
template <typename Stat>
Interval Bootstrap(int64_t n, int64_t iters, uint64_t seed, double level, Stat stat) {
  std::vector<int64_t> idx(n);
  return BootstrapQuantiles(iters, seed, level, [&](tasks::PyRandom& rnd) {
    for (int64_t i = 0; i < n; ++i) idx[i] = rnd.ChoiceIndex(n);
    return stat(idx);
  });
}

}  // namespace

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nan("");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

absl::StatusOr<Interval> PairedBootstrapDiff(absl::Span<const double> a, absl::Span<const double> b,
                                             int64_t iters, uint64_t seed, double level) {
  if (absl::Status s = CheckPaired(a, b); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(a.size());
  return Bootstrap(n, iters, seed, level, [&](const std::vector<int64_t>& idx) {
    double d = 0;
    for (int64_t i : idx) d += b[i] - a[i];
    return d / static_cast<double>(n);
  });
}

absl::StatusOr<Interval> PairedBootstrapPerplexityRatio(absl::Span<const double> a_ll,
                                                        absl::Span<const double> b_ll,
                                                        int64_t iters, uint64_t seed,
                                                        double level) {
  if (absl::Status s = CheckPaired(a_ll, b_ll); !s.ok()) return s;
  const int64_t n = static_cast<int64_t>(a_ll.size());
  return Bootstrap(n, iters, seed, level, [&](const std::vector<int64_t>& idx) {
    double sa = 0, sb = 0;
    for (int64_t i : idx) {
      sa += a_ll[i];
      sb += b_ll[i];
    }
    // exp(-mean_b) / exp(-mean_a), computed as one exp to avoid overflow.
    return std::exp((sa - sb) / static_cast<double>(n));
  });
}

absl::StatusOr<Interval> StratifiedPairedBootstrapDiff(absl::Span<const PairedStratum> strata,
                                                       int64_t iters, uint64_t seed, double level) {
  if (strata.empty()) return absl::InvalidArgumentError("a stratified bootstrap needs a stratum");
  for (const PairedStratum& s : strata) {
    if (absl::Status st = CheckPaired(s.a, s.b); !st.ok()) return st;
  }
  return BootstrapQuantiles(iters, seed, level, [&](tasks::PyRandom& rnd) {
    double total = 0;
    for (const PairedStratum& s : strata) {
      const int64_t n = static_cast<int64_t>(s.a.size());
      double d = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = rnd.ChoiceIndex(n);
        d += s.b[k] - s.a[k];
      }
      total += s.scale * d / static_cast<double>(n);
    }
    return total / static_cast<double>(strata.size());
  });
}

absl::StatusOr<McNemar> McNemarExact(absl::Span<const double> a, absl::Span<const double> b) {
  if (absl::Status s = CheckPaired(a, b); !s.ok()) return s;
  McNemar m;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool ra = a[i] > 0.5, rb = b[i] > 0.5;
    m.only_a += ra && !rb;
    m.only_b += rb && !ra;
  }
  const int64_t n = m.only_a + m.only_b;
  if (n == 0) return m;
  // Two-sided exact binomial(n, 1/2): 2 * P(X <= min(b, c)), capped at 1.
  // Log-space terms keep large n finite.
  const int64_t k = std::min(m.only_a, m.only_b);
  double tail = 0;
  for (int64_t i = 0; i <= k; ++i) {
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                     n * std::log(2.0));
  }
  m.p_value = std::min(1.0, 2 * tail);
  return m;
}

WinTieLoss CountWinTieLoss(absl::Span<const double> a, absl::Span<const double> b) {
  WinTieLoss w;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (b[i] > a[i]) {
      ++w.wins;
    } else if (b[i] < a[i]) {
      ++w.losses;
    } else {
      ++w.ties;
    }
  }
  return w;
}

}  // namespace focal::reports
