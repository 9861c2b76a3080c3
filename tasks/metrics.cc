// SPDX-License-Identifier: Apache-2.0
#include "tasks/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace focal::tasks {

double Mean(absl::Span<const double> xs) {
  double s = 0;
  for (double x : xs) s += x;  // left to right, like Python's sum()
  return s / static_cast<double>(xs.size());
}

double SampleStddev(absl::Span<const double> xs) {
  if (xs.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double mu = Mean(xs);
  double s = 0;
  for (double x : xs) s += (x - mu) * (x - mu);
  return std::sqrt(s / static_cast<double>(xs.size() - 1));
}

double MeanStderr(absl::Span<const double> xs) {
  return SampleStddev(xs) / std::sqrt(static_cast<double>(xs.size()));
}

double Perplexity(absl::Span<const double> lls) { return std::exp(-Mean(lls)); }

double PerplexityBootstrapStderr(absl::Span<const double> lls, int64_t iters) {
  const int64_t chunk = std::min<int64_t>(1000, iters);
  const int64_t n = static_cast<int64_t>(lls.size());
  if (n == 0 || chunk <= 0) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> stats;
  stats.reserve(iters);
  for (int64_t i = 0; i < iters / chunk; ++i) {
    PyRandom rnd(static_cast<uint64_t>(i));
    for (int64_t r = 0; r < chunk; ++r) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += lls[rnd.ChoiceIndex(n)];
      stats.push_back(std::exp(-(s / static_cast<double>(n))));
    }
  }
  return SampleStddev(stats);
}

}  // namespace focal::tasks
