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
#include "base/py_random.h"

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

// CPython's random.Random lives in base (datasets use it too).
using ::focal::PyRandom;

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_METRICS_H_
