// SPDX-License-Identifier: Apache-2.0
#include "tasks/metric_registry.h"

#include "tasks/helmet_metrics.h"
#include "tasks/metrics.h"
#include "tasks/qa_metrics.h"
#include "tasks/ruler_metrics.h"
#include "tasks/task.h"

namespace focal::tasks {
namespace {

double Acc(const ChoiceOutcome& o) { return o.best == o.gold ? 1.0 : 0.0; }
double AccNorm(const ChoiceOutcome& o) { return o.best_norm == o.gold ? 1.0 : 0.0; }
// lm-eval aggregates perplexity from each document's loglikelihood.
double TargetLoglikelihood(const ChoiceOutcome& o) { return o.results[0].ll; }

// LongBench: a QA answer is the first line of the generation.
double QaExactMatch(absl::string_view g, absl::Span<const std::string> golds) {
  return ExactMatch(QaPrediction(g), golds);
}
double QaF1(absl::string_view g, absl::Span<const std::string> golds) {
  return TokenF1(QaPrediction(g), golds);
}
double QaSubstringMatch(absl::string_view g, absl::Span<const std::string> golds) {
  return SubstringMatch(QaPrediction(g), golds);
}

const std::vector<MetricDef>& Metrics() {
  static const std::vector<MetricDef>* metrics = new std::vector<MetricDef>{
      {.name = "acc",
       .output_types = {MULTIPLE_CHOICE, MULTIPLE_INPUT, LOGLIKELIHOOD},
       .choices = Acc},
      {.name = "acc_norm", .output_types = {MULTIPLE_CHOICE, MULTIPLE_INPUT}, .choices = AccNorm},
      {.name = "perplexity",
       .output_types = {LOGLIKELIHOOD},
       .choices = TargetLoglikelihood,
       .aggregation = Aggregation::kPerplexity,
       .higher_is_better = false,
       .paired = PairedStatistic::kRatio},
      // RULER (tasks/ruler_metrics.h).
      {.name = "string_match_all",
       .output_types = {GENERATE_UNTIL},
       .generation = StringMatchAll,
       .scale = 100},
      {.name = "string_match_part",
       .output_types = {GENERATE_UNTIL},
       .generation = StringMatchPart,
       .scale = 100},
      // LongBench-style QA (tasks/qa_metrics.h).
      {.name = "exact_match",
       .output_types = {GENERATE_UNTIL},
       .generation = QaExactMatch,
       .scale = 100},
      {.name = "f1", .output_types = {GENERATE_UNTIL}, .generation = QaF1, .scale = 100},
      {.name = "substring_match",
       .output_types = {GENERATE_UNTIL},
       .generation = QaSubstringMatch,
       .scale = 100},
      // HELMET (tasks/helmet_metrics.h).
      {.name = "helmet_icl_exact_match",
       .output_types = {GENERATE_UNTIL},
       .generation = HelmetIclExactMatch,
       .scale = 100},
      {.name = "helmet_kv_substring_match",
       .output_types = {GENERATE_UNTIL},
       .generation = HelmetKvSubstringMatch,
       .scale = 100},
      {.name = "helmet_ruler_recall",
       .output_types = {GENERATE_UNTIL},
       .generation = HelmetRulerRecall,
       .scale = 100},
      {.name = "helmet_rag_substring_match",
       .output_types = {GENERATE_UNTIL},
       .generation = HelmetRagSubstringMatch,
       .scale = 100},
  };
  return *metrics;
}

}  // namespace

const MetricDef* FindMetric(absl::string_view name) {
  for (const MetricDef& m : Metrics()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> MetricNames() {
  std::vector<std::string> out;
  for (const MetricDef& m : Metrics()) out.emplace_back(m.name);
  return out;
}

double AggregateValue(const MetricDef& metric, absl::Span<const double> values) {
  return metric.aggregation == Aggregation::kPerplexity ? Perplexity(values) : Mean(values);
}

double AggregateStderr(const MetricDef& metric, absl::Span<const double> values) {
  return metric.aggregation == Aggregation::kPerplexity ? PerplexityBootstrapStderr(values)
                                                        : MeanStderr(values);
}

}  // namespace focal::tasks
