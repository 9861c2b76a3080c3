// SPDX-License-Identifier: Apache-2.0
// Per-length category averages: RULER's (with its effective length) and
// HELMET's ICL, recall and RAG, in a run's summary and in a comparison
// (table rows per category, hand-computed means).
#include "reports/length_summary.h"

#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reports/benchmark_table.h"
#include "reports/comparison.h"
#include "reports/stats.h"

namespace focal::reports {
namespace {

using ::testing::HasSubstr;

void AddTask(ModelRun& run, const std::string& task, const std::string& metric, int64_t length,
             double value) {
  TaskResult* t = run.add_tasks();
  t->set_task(task);
  MetricValue* mv = t->add_metrics();
  mv->set_name(metric);
  mv->set_context_length(length);
  mv->set_value(value);
}

TEST(LengthSummaryTest, CategoriesByName) {
  EXPECT_EQ(LengthCategoryOf("ruler_vt"), "ruler");
  EXPECT_EQ(LengthCategoryOf("helmet_icl_nlu"), "helmet_icl");
  EXPECT_EQ(LengthCategoryOf("helmet_json_kv"), "helmet_recall");
  EXPECT_EQ(LengthCategoryOf("helmet_ruler_niah_mk_2"), "helmet_recall");
  EXPECT_EQ(LengthCategoryOf("helmet_rag_nq"), "helmet_rag");
  EXPECT_EQ(LengthCategoryOf("hotpotqa_long"), "");
  EXPECT_EQ(LengthCategoryOf("arc_easy"), "");
  EXPECT_EQ(LengthCategoryTitle("helmet_icl"), "HELMET ICL");
}

TEST(LengthSummaryTest, AveragesPerCategoryAndLength) {
  ModelRun run;
  AddTask(run, "ruler_niah_single_1", "string_match_all", 4096, 90);
  AddTask(run, "helmet_icl_trec_coarse", "helmet_icl_exact_match", 4096, 40);
  AddTask(run, "helmet_icl_banking77", "helmet_icl_exact_match", 4096, 61);
  AddTask(run, "helmet_icl_banking77", "helmet_icl_exact_match", 8192, 30);
  AddTask(run, "helmet_json_kv", "helmet_kv_substring_match", 4096, 12);
  AddTask(run, "hotpotqa_long", "substring_match", 4096, 77);
  ASSERT_TRUE(SetLengthSummaries(run).ok());
  ASSERT_EQ(run.ruler_by_length_size(), 1);
  EXPECT_EQ(run.ruler_by_length(0).average(), 90);
  EXPECT_EQ(run.effective_length(), 4096);
  ASSERT_EQ(run.category_by_length_size(), 3);
  EXPECT_EQ(run.category_by_length(0).category(), "helmet_icl");
  EXPECT_EQ(run.category_by_length(0).context_length(), 4096);
  EXPECT_DOUBLE_EQ(run.category_by_length(0).average(), 50.5);
  EXPECT_EQ(run.category_by_length(0).num_tasks(), 2);
  EXPECT_EQ(run.category_by_length(1).context_length(), 8192);
  EXPECT_EQ(run.category_by_length(1).average(), 30);
  EXPECT_EQ(run.category_by_length(2).category(), "helmet_recall");
  EXPECT_EQ(run.category_by_length(2).average(), 12);
}

TEST(LengthSummaryTest, ComparisonHasARowPerCategoryAndLength) {
  RunResults runs;
  runs.add_models()->set_variant("base");
  runs.add_models()->set_variant("focal(t=0.4)");
  // Per-document 0/1 scores (the comparison scales them by 100).
  std::vector<PerDocScores> scores(2);
  auto put = [&](int model, const std::string& key, const std::string& metric,
                 std::vector<double> xs) {
    scores[model].values[key][metric] = std::move(xs);
    scores[model].requests_sha256[key] = "same";
  };
  put(0, "helmet_icl_trec_coarse@4096", "helmet_icl_exact_match", {1, 0, 0, 0});
  put(1, "helmet_icl_trec_coarse@4096", "helmet_icl_exact_match", {1, 1, 0, 0});
  put(0, "helmet_icl_nlu@4096", "helmet_icl_exact_match", {1, 1, 0, 0});
  put(1, "helmet_icl_nlu@4096", "helmet_icl_exact_match", {1, 1, 1, 0});
  put(0, "helmet_json_kv@4096", "helmet_kv_substring_match", {1, 1});
  put(1, "helmet_json_kv@4096", "helmet_kv_substring_match", {1, 0});
  put(0, "ruler_vt@4096", "string_match_all", {1, 1});
  put(1, "ruler_vt@4096", "string_match_all", {1, 1});
  CompareOptions o;
  o.bootstrap_iters = 100;
  auto rep = BuildComparison(runs, scores, o);
  ASSERT_TRUE(rep.ok()) << rep.status();
  ASSERT_EQ(rep->lengths_size(), 3);
  EXPECT_EQ(rep->lengths(0).category(), "ruler");
  EXPECT_EQ(rep->lengths(1).category(), "helmet_icl");
  EXPECT_DOUBLE_EQ(rep->lengths(1).base_average(), 37.5);   // (25 + 50) / 2
  EXPECT_DOUBLE_EQ(rep->lengths(1).focal_average(), 62.5);  // (50 + 75) / 2
  EXPECT_EQ(rep->lengths(2).category(), "helmet_recall");
  EXPECT_DOUBLE_EQ(rep->lengths(2).relative_improvement(), -0.5);
  const std::string md = ComparisonMarkdown(*rep);
  EXPECT_THAT(md, HasSubstr("## RULER average per length"));
  EXPECT_THAT(md, HasSubstr("## HELMET ICL average per length"));
  // The ICL average's interval: the two tasks as strata, resampled within each.
  const std::vector<double> a1 = {1, 0, 0, 0}, b1 = {1, 1, 0, 0}, a2 = {1, 1, 0, 0},
                            b2 = {1, 1, 1, 0};
  const std::vector<PairedStratum> icl = {{a2, b2, 100}, {a1, b1, 100}};  // task-name order
  auto ci = StratifiedPairedBootstrapDiff(icl, 100);
  ASSERT_TRUE(ci.ok());
  ASSERT_TRUE(rep->lengths(1).has_ci_low());
  EXPECT_DOUBLE_EQ(rep->lengths(1).ci_low(), ci->low);
  EXPECT_DOUBLE_EQ(rep->lengths(1).ci_high(), ci->high);
  EXPECT_EQ(rep->lengths(1).num_pairs(), 8);
  EXPECT_FALSE(ci->low > 0);  // two improved documents of eight: not significant, not bold
  EXPECT_THAT(md, HasSubstr(absl::StrFormat(
                      "| focal(t=0.4) | 4096 | 37.5000 | 62.5000 | 25.0000 | [%.4f, %.4f] | 8 | "
                      "+66.7%% |",
                      ci->low, ci->high)));
  EXPECT_THAT(md, HasSubstr("## HELMET recall average per length"));
  // One RULER task of 13: the average and effective length are labelled partial.
  EXPECT_EQ(rep->lengths(0).num_tasks(), 1);
  EXPECT_THAT(md, HasSubstr("(partial: 1 of RULER's 13 tasks; not RULER's average or "
                            "effective length)"));
  EXPECT_EQ(PartialRulerLabel("ruler", 13), "");
  EXPECT_EQ(PartialRulerLabel("helmet_icl", 5), "");
}

TEST(LengthSummaryTest, ReportTableHasCategoryRows) {
  RunResults r;
  ModelRun& run = *r.add_models();
  run.set_model_path("models/m");
  run.set_variant("base");
  AddTask(run, "helmet_icl_trec_coarse", "helmet_icl_exact_match", 4096, 40);
  AddTask(run, "helmet_icl_nlu", "helmet_icl_exact_match", 4096, 60);
  AddTask(run, "ruler_vt", "string_match_all", 4096, 70);
  ASSERT_TRUE(SetLengthSummaries(run).ok());
  auto md = BenchmarkTable({r}, "md", "");
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_THAT(*md, HasSubstr("| HELMET ICL average | over_tasks@4096 | 50.0000 |"));
  EXPECT_THAT(*md, HasSubstr("| RULER average | over_tasks@4096 | 70.0000 |"));
}

}  // namespace
}  // namespace focal::reports
