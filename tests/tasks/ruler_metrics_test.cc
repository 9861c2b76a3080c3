// SPDX-License-Identifier: Apache-2.0
// RULER's scoring: postprocess_pred, string_match_all / string_match_part
// (NVIDIA's any-match), the metric of each task and the effective length,
// with expected values worked out from RULER's Python (quoted).
#include "tasks/ruler_metrics.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/asset_root.h"
#include "base/json.h"
#include "datasets/ruler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tasks/metric_registry.h"
#include "tasks/task_registry.h"
#include "tests/testing/test_util.h"

namespace focal::tasks {
namespace {

using ::focal::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Golds = std::vector<std::string>;

// RULER's evaluate.py (postprocess_pred, string_match_all/part) on the
// project's edge cases (tests/testdata/ruler_eval/cases.jsonl): per-sample
// scores and the task scores, from tests/reference/ruler_eval_reference.py.
TEST(RulerMetricsTest, EqualsRulersEvaluateOnEdgeCases) {
  const std::vector<JsonValue> cases =
      testing::ReadJsonLines(testing::SourcePath("tests/testdata/ruler_eval/cases.jsonl"));
  std::istringstream golden(testing::ReadFileOrDie(
      testing::SourcePath("tests/testdata/golden/ruler_reference/eval_scores.txt")));
  std::string line;
  double sum_all = 0, sum_part = 0;
  size_t n = 0;
  while (std::getline(golden, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string id;
    double want_all, want_part;
    f >> id >> want_all >> want_part;
    if (id == "task") {
      ASSERT_EQ(n, cases.size());
      // RULER reports round(mean, 2).
      EXPECT_DOUBLE_EQ(std::round(sum_all / n * 100) / 100, want_all);
      EXPECT_DOUBLE_EQ(std::round(sum_part / n * 100) / 100, want_part);
      continue;
    }
    ASSERT_LT(n, cases.size());
    const JsonValue& c = cases[n++];
    std::vector<std::string> refs;
    for (const JsonValue& r : c.Find("refs")->array()) refs.push_back(r.string_value());
    const std::string& pred = c.Find("pred")->string_value();
    const double all = 100 * StringMatchAll(pred, refs), part = 100 * StringMatchPart(pred, refs);
    EXPECT_NEAR(all, want_all, 1e-9) << "case " << id;
    EXPECT_EQ(part, want_part) << "case " << id;
    sum_all += all;
    sum_part += part;
  }
  EXPECT_EQ(n, cases.size());
}

TEST(RulerMetricsTest, Postprocess) {
  // re.sub(r'[\x00-\x1f]', '\n', s.strip()).strip()
  EXPECT_EQ(RulerPostprocess("  \n The answer\tis\x01 42 \n"), "The answer\nis\n 42");
  EXPECT_EQ(RulerPostprocess(std::string("a\0b", 3)), "a\nb");
  EXPECT_EQ(RulerPostprocess("\x1f x \x1f"), "x");
  EXPECT_EQ(RulerPostprocess("\xc2\xa0 x \xe3\x80\x80"), "x");  // NBSP, ideographic space
  EXPECT_EQ(RulerPostprocess("\x7f"), "\x7f");                  // DEL is not in \x00-\x1f
  EXPECT_EQ(RulerPostprocess(""), "");
}

TEST(RulerMetricsTest, StringMatchAllIsTheFractionFound) {
  const Golds golds = {"1234567", "7654321", "1111111"};
  EXPECT_DOUBLE_EQ(StringMatchAll("The numbers are 1234567 and 7654321.", golds), 2.0 / 3.0);
  EXPECT_EQ(StringMatchAll("1234567, 7654321, 1111111", golds), 1.0);
  EXPECT_EQ(StringMatchAll("none of them", golds), 0.0);
  EXPECT_EQ(StringMatchAll("", golds), 0.0);
  EXPECT_EQ(StringMatchAll("anything", {}), 0.0);
  // Substring semantics: a longer number contains the gold, punctuation
  // around it does not matter, and nothing is normalised inside it.
  EXPECT_EQ(StringMatchAll("112345678", {"1234567"}), 1.0);
  EXPECT_EQ(StringMatchAll("(1234567).", {"1234567"}), 1.0);
  EXPECT_EQ(StringMatchAll("1,234,567", {"1234567"}), 0.0);
  EXPECT_EQ(StringMatchAll("wise-owl", {"wise owl"}), 0.0);
  // A repeated gold counts each time it is listed.
  EXPECT_EQ(StringMatchAll("abc", {"abc", "abc", "xyz", "xyz"}), 0.5);
}

TEST(RulerMetricsTest, CaseInsensitive) {
  EXPECT_EQ(StringMatchAll("VAR ABCDE and VAR fghij", {"abcde", "FGHIJ"}), 1.0);
  EXPECT_EQ(StringMatchAll("Answer: PARIS", {"Paris"}), 1.0);
  EXPECT_EQ(StringMatchAll("CAFÉ ÀÖ", {"café", "àö"}), 1.0);  // Latin-1 letters too
  EXPECT_EQ(StringMatchAll("×", {"÷"}), 0.0);                 // U+00D7 is not a letter
}

TEST(RulerMetricsTest, ControlCharactersBecomeNewlines) {
  // The prediction's \t and \r become \n before matching; the gold is not
  // post-processed (RULER compares r.lower() in pred.lower()).
  EXPECT_EQ(StringMatchAll("a\tb", {"a\nb"}), 1.0);
  EXPECT_EQ(StringMatchAll("a\r\nb", {"a\n\nb"}), 1.0);
  EXPECT_EQ(StringMatchAll("a\nb", {"a\tb"}), 0.0);
}

TEST(RulerMetricsTest, StringMatchPartIsAnyMatch) {
  // NVIDIA: max(1.0 if r in pred else 0.0 for r in ref) -> 1 when any gold
  // occurs (lm-eval's port would give 0.5 here).
  const Golds golds = {"Denver Broncos", "the Broncos"};
  EXPECT_EQ(StringMatchPart("It was the broncos.", golds), 1.0);
  EXPECT_EQ(StringMatchPart("Denver", golds), 0.0);
  EXPECT_EQ(StringMatchPart("", golds), 0.0);
  EXPECT_EQ(StringMatchPart("x", {}), 0.0);
  EXPECT_EQ(StringMatchPart(" \n Kansas Song\n", {"kansas song"}), 1.0);
}

// Each RULER task's spec names RULER's metric for it.
TEST(RulerMetricsTest, MetricOfEachTask) {
  auto registry = TaskRegistry::Load(absl::StrCat(AssetRoot(), "/tasks/specs"));
  ASSERT_TRUE(registry.ok()) << registry.status();
  for (const std::string& task : datasets::RulerTaskNames()) {
    const Task* t = registry->Find(task);
    ASSERT_NE(t, nullptr) << task;
    const bool qa = task == "ruler_qa_1" || task == "ruler_qa_2";
    EXPECT_THAT(t->spec().metrics(), ElementsAre(qa ? "string_match_part" : "string_match_all"))
        << task;
  }
  const Golds golds = {"a1", "b2"};
  EXPECT_EQ(FindMetric("string_match_all")->generation("a1", golds), 0.5);
  EXPECT_EQ(FindMetric("string_match_part")->generation("a1", golds), 1.0);
}

TEST(RulerMetricsTest, EffectiveLengthAsInTheReadme) {
  const std::vector<int64_t> lengths = {4096, 8192, 16384, 32768, 65536, 131072};
  // README rows: Llama3.1 (70B) -> 64K; Qwen3-32B -> >128K (85.6 counts);
  // Qwen2 (72B) -> 32K; LWM (7B) -> <4K.
  EXPECT_EQ(*EffectiveLength(lengths, {96.5, 95.8, 95.4, 94.8, 88.4, 66.6}), 65536);
  EXPECT_EQ(*EffectiveLength(lengths, {98.4, 96.0, 96.2, 94.4, 91.8, 85.6}), 131072);
  EXPECT_EQ(*EffectiveLength(lengths, {96.9, 96.1, 94.9, 94.1, 79.8, 53.7}), 32768);
  EXPECT_EQ(*EffectiveLength(lengths, {82.3, 78.4, 73.7, 69.1, 68.1, 65.0}), 0);
  // A length after the first failure does not count, lengths may be
  // unordered, and the threshold is a parameter.
  EXPECT_EQ(*EffectiveLength({4096, 8192, 16384}, {90.0, 80.0, 90.0}), 4096);
  EXPECT_EQ(*EffectiveLength({16384, 4096, 8192}, {90.0, 90.0, 80.0}), 4096);
  EXPECT_EQ(*EffectiveLength({4096, 8192}, {70.0, 60.0}, 50.0), 8192);
}

TEST(RulerMetricsTest, EffectiveLengthErrors) {
  EXPECT_THAT(EffectiveLength({4096}, {90.0, 80.0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 lengths and 2")));
  EXPECT_THAT(EffectiveLength({}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least one")));
  EXPECT_THAT(EffectiveLength({4096, 4096}, {90.0, 90.0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("given twice")));
  EXPECT_THAT(EffectiveLength({4096}, {std::nan("")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not finite")));
}

}  // namespace
}  // namespace focal::tasks
