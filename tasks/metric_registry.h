// SPDX-License-Identifier: Apache-2.0
// Every metric, declared once: how one document is scored, how documents are
// aggregated (value and stderr), its reported scale, its direction, and the
// paired statistic `compare` uses. run, merge and compare read these
// definitions instead of special-casing metric names.
#ifndef FOCAL_TASKS_METRIC_REGISTRY_H_
#define FOCAL_TASKS_METRIC_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tasks/task_spec.pb.h"

namespace focal::tasks {

struct LoglikelihoodResult;

// A loglikelihood document's outcome: for multiple choice, the argmax choice
// by loglikelihood and by loglikelihood per character; for a single target,
// best is 0 when the target is the greedy continuation (else -1) and gold 0.
struct ChoiceOutcome {
  absl::Span<const LoglikelihoodResult> results;
  int best = -1;
  int best_norm = -1;
  int gold = 0;
};

enum class Aggregation {
  kMean,        // mean, stderr = sample stddev / sqrt(n) (lm-eval's mean)
  kPerplexity,  // exp(-mean(ll)), lm-eval's bootstrap stderr
};

// The paired statistic of base vs focal in `compare`.
enum class PairedStatistic {
  kDifference,  // focal - base, paired bootstrap interval, McNemar for 0/1 values
  kRatio,       // focal / base of the aggregate (perplexity), paired bootstrap of the ratio
};

struct MetricDef {
  absl::string_view name;
  std::vector<OutputType> output_types;  // the task kinds it applies to
  // Per-document value: loglikelihood tasks use `choices`, generation tasks
  // `generation` (the raw generated text and the gold answers).
  double (*choices)(const ChoiceOutcome&) = nullptr;
  double (*generation)(absl::string_view prediction, absl::Span<const std::string> golds) = nullptr;
  Aggregation aggregation = Aggregation::kMean;
  // Reported value = scale x per-document value (long-context scores read 0-100).
  double scale = 1;
  bool higher_is_better = true;
  PairedStatistic paired = PairedStatistic::kDifference;
};

// nullptr for an unknown metric.
const MetricDef* FindMetric(absl::string_view name);
// Every metric name, in declaration order.
std::vector<std::string> MetricNames();

// The aggregate value and its standard error over per-document values.
double AggregateValue(const MetricDef& metric, absl::Span<const double> values);
double AggregateStderr(const MetricDef& metric, absl::Span<const double> values);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_METRIC_REGISTRY_H_
