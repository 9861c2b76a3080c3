// SPDX-License-Identifier: Apache-2.0
#include "tasks/metric_registry.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tasks/metrics.h"
#include "tasks/task.h"
#include "tasks/task_registry.h"
#include "tests/testing/test_util.h"

namespace focal::tasks {
namespace {

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

TEST(MetricRegistryTest, EachMetricDeclaredOnceAndComplete) {
  std::set<std::string> seen;
  for (const std::string& name : MetricNames()) {
    EXPECT_TRUE(seen.insert(name).second) << name << " declared twice";
    const MetricDef* m = FindMetric(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_FALSE(m->output_types.empty()) << name;
    for (OutputType t : m->output_types) {
      // A metric applies to a task kind only with the per-document function it needs.
      if (t == GENERATE_UNTIL) {
        EXPECT_NE(m->generation, nullptr) << name;
      } else {
        EXPECT_NE(m->choices, nullptr) << name;
      }
    }
  }
  EXPECT_EQ(FindMetric("accuracy"), nullptr);
}

TEST(MetricRegistryTest, AggregationsAreLmEvals) {
  const std::vector<double> lls = {-1.5, -0.25, -3.0, -0.75};
  const MetricDef& ppl = *FindMetric("perplexity");
  EXPECT_FALSE(ppl.higher_is_better);
  EXPECT_EQ(ppl.paired, PairedStatistic::kRatio);
  EXPECT_EQ(AggregateValue(ppl, lls), Perplexity(lls));
  EXPECT_EQ(AggregateStderr(ppl, lls), PerplexityBootstrapStderr(lls));
  const std::vector<double> hits = {1, 0, 1, 1};
  const MetricDef& acc = *FindMetric("acc");
  EXPECT_TRUE(acc.higher_is_better);
  EXPECT_EQ(acc.paired, PairedStatistic::kDifference);
  EXPECT_EQ(AggregateValue(acc, hits), 0.75);
  EXPECT_EQ(AggregateStderr(acc, hits), MeanStderr(hits));
  // Long-context scores are reported on 0-100.
  EXPECT_EQ(FindMetric("string_match_all")->scale, 100);
  EXPECT_EQ(acc.scale, 1);
}

TEST(MetricRegistryTest, PerDocumentFunctions) {
  const LoglikelihoodResult rs[] = {{-2.0, false}, {-1.0, true}};
  const ChoiceOutcome o{.results = rs, .best = 1, .best_norm = 0, .gold = 1};
  EXPECT_EQ(FindMetric("acc")->choices(o), 1.0);
  EXPECT_EQ(FindMetric("acc_norm")->choices(o), 0.0);
  EXPECT_EQ(FindMetric("perplexity")->choices(o), -2.0);  // the target's loglikelihood
  const std::vector<std::string> golds = {"Paris"};
  // LongBench QA metrics read the first line of the generation.
  EXPECT_EQ(FindMetric("exact_match")->generation(" Paris\nand more", golds), 1.0);
  EXPECT_EQ(FindMetric("exact_match")->generation("It is Paris", golds), 0.0);
  EXPECT_EQ(FindMetric("substring_match")->generation("It is Paris", golds), 1.0);
}

TEST(MetricRegistryTest, SpecsNameOnlyMetricsOfTheirKind) {
  auto spec = ParseTaskSpec(R"(name: "g" output_type: MULTIPLE_CHOICE doc_to_text: "a"
      metrics: ["string_match_all"])",
                            "g");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(Task::FromSpec(*spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metric 'string_match_all' is not defined for MULTIPLE_CHOICE")));
  spec =
      ParseTaskSpec(R"(name: "g" output_type: GENERATE_UNTIL metrics: ["string_match_all"])", "g");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(Task::FromSpec(*spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("generator is empty")));
  spec = ParseTaskSpec(R"(name: "g" output_type: GENERATE_UNTIL generator: "ruler"
      metrics: ["acc"])",
                       "g");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(Task::FromSpec(*spec),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'acc' is not defined for GENERATE_UNTIL")));
}

}  // namespace
}  // namespace focal::tasks
