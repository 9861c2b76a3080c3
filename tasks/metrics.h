// SPDX-License-Identifier: Apache-2.0
// Aggregations and standard errors exactly as lm-eval computes them
// (lm_eval/api/metrics.py): sequential double sums, Bessel-corrected sample
// stddev, and the seeded bootstrap for perplexity, bit for bit with Python's
// `random` module.
#ifndef FOCAL_TASKS_METRICS_H_
#define FOCAL_TASKS_METRICS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace focal::tasks {

double Mean(absl::Span<const double> xs);
// sqrt(sum((x - mean)^2) / (n - 1)); NaN when n < 2.
double SampleStddev(absl::Span<const double> xs);
// SampleStddev / sqrt(n): lm-eval's stderr of a "mean" metric.
double MeanStderr(absl::Span<const double> xs);
// exp(-mean(ll)): lm-eval's perplexity aggregation over documents.
double Perplexity(absl::Span<const double> lls);
// lm-eval's bootstrap_stderr(perplexity, lls, iters): iters / 1000 chunks, chunk
// i drawing 1000 resamples with random.Random(i).choices(lls, k=len(lls)); the
// stderr is the sample stddev of the resampled perplexities.
double PerplexityBootstrapStderr(absl::Span<const double> lls, int64_t iters = 100000);

// CPython's random.Random: MT19937 seeded like random.seed(int) and random().
class PyRandom {
 public:
  explicit PyRandom(uint64_t seed);
  uint32_t NextU32();
  double Random();  // [0, 1) with 53 random bits, as CPython
  // random.choices(population of size n) index: floor(random() * n).
  int64_t ChoiceIndex(int64_t n) { return static_cast<int64_t>(Random() * static_cast<double>(n)); }
  // getrandbits(k) for 1 <= k <= 32.
  uint32_t GetRandBits(int k) { return NextU32() >> (32 - k); }
  // _randbelow(n): getrandbits(n.bit_length()) until below n (n < 2^32).
  int64_t RandBelow(int64_t n);
  // random.sample(range(n), k) as CPython 3.11 draws it (pool or set method).
  std::vector<int64_t> Sample(int64_t n, int64_t k);

 private:
  void InitGenrand(uint32_t s);
  uint32_t mt_[624];
  int mti_ = 625;
};

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_METRICS_H_
