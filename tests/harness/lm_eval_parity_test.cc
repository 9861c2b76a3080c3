// SPDX-License-Identifier: Apache-2.0
// Parity with lm-evaluation-harness on stories260K (converted from ../shared
// by the build), zero-shot on the first 200 documents of the seven tasks and
// 3-shot on the first 40 of five, the data read from ../shared/data (checks:
// tests/harness/lm_eval_parity.h; goldens: tests/testdata/golden/
// lm_eval_stories260k*/ from tests/reference/lm_eval_parity_reference.py,
// whose docstring gives both commands). Its 512-token vocabulary keeps
// lm-eval's float32 log_softmax exact enough for a flat 1e-4.
//
// 3-shot: lm-eval's installed configs draw ARC-Easy's, PIQA's and BoolQ's
// examples from their training split and lambada_standard's from its
// validation split, which the reference filled with the file given here as
// --fewshot-data (k drawn, the current document kept); lambada_openai's
// config has only a test split, so lm-eval draws from the evaluated file
// itself, current document kept, which is what focal-eval does without
// --fewshot-data for that task (its spec's fewshot_from_eval_split).
#include "tests/harness/lm_eval_parity.h"

#include <memory>

#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::harness {
namespace {

ParityCase ZeroShotCase() {
  return SharedDataCase(testing::Stories260KDir(),
                        "the build's stories260K_model target (from ../shared/models/stories260K)",
                        "lm_eval_stories260k", 200);
}

ParityCase ThreeShotCase() {
  ParityCase c = ZeroShotCase();
  c.golden_dir = testing::SourcePath("tests/testdata/golden/lm_eval_stories260k_3shot/");
  const std::map<std::string, std::string> all = SharedTaskFiles();
  c.data.clear();
  for (const char* t : {"arc_easy", "piqa", "boolq", "lambada_openai", "lambada_standard"}) {
    c.data[t] = all.at(t);
  }
  c.fewshot_data = {{"arc_easy", testing::SharedPath("data/arc/ARC-Easy-Dev.jsonl")},
                    {"lambada_standard", all.at("lambada_standard")},
                    {"piqa", all.at("piqa")},
                    {"boolq", all.at("boolq")}};
  c.required.push_back(c.fewshot_data.at("arc_easy"));
  c.limit = 40;
  c.num_fewshot = 3;
  return c;
}

template <ParityCase (*kCase)()>
class ParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = LmEvalParity::Run(kCase()).release(); }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    LmEvalParity::RequireInputs(kCase());
    ASSERT_NE(run_, nullptr) << "the evaluation did not run";
  }
  static inline LmEvalParity* run_ = nullptr;
};

using LmEvalParityTest = ParityTest<ZeroShotCase>;
TEST_F(LmEvalParityTest, GoldensMatchTheInputs) { run_->GoldensMatchTheInputs(); }
TEST_F(LmEvalParityTest, EveryRequestMatches) { run_->EveryRequestMatches(); }
TEST_F(LmEvalParityTest, AggregatesMatch) { run_->AggregatesMatch(); }

using LmEvalFewshotParityTest = ParityTest<ThreeShotCase>;
TEST_F(LmEvalFewshotParityTest, GoldensMatchTheInputs) { run_->GoldensMatchTheInputs(); }
TEST_F(LmEvalFewshotParityTest, EveryRequestMatches) { run_->EveryRequestMatches(); }
TEST_F(LmEvalFewshotParityTest, AggregatesMatch) { run_->AggregatesMatch(); }

}  // namespace
}  // namespace focal::harness
