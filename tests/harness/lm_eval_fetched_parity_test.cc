// SPDX-License-Identifier: Apache-2.0
// Parity with lm-evaluation-harness on the data users get: the files
// scripts/fetch_data.sh fetches (datasets/catalog.json), the default model
// (SmolLM2-135M-Instruct, Q4_1 GGUF), zero-shot. WinoGrande on its whole
// validation split (1267 documents: its choices vary the context, lm-eval's
// "multiple input"); HellaSwag and BoolQ, whose fetched rows differ from the
// ../shared files of lm_eval_smollm2_parity_test (lm-eval's own HellaSwag rows
// through its preprocess(); SuperGLUE's "title -- passage"), on their first
// 100 documents. Checks and tolerances as lm_eval_smollm2_parity_test
// (tests/harness/lm_eval_parity.h); goldens from
// tests/reference/lm_eval_parity_reference.py --data-layout fetched.
#include <memory>

#include "gtest/gtest.h"
#include "tests/harness/lm_eval_parity.h"
#include "tests/testing/test_util.h"

namespace focal::harness {
namespace {

ParityCase WinograndeCase() {
  ParityCase c = FetchedDataCase(testing::DefaultModelGguf(), "scripts/fetch_default_model.sh",
                                 "lm_eval_smollm2_winogrande",
                                 {{"winogrande", "winogrande/winogrande_xl_dev.jsonl"}}, 0);
  c.per_token_tolerance = LmEvalTolerances().per_token_large_vocab;
  return c;
}

class LmEvalWinograndeParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = LmEvalParity::Run(WinograndeCase()).release(); }
  void SetUp() override {
    LmEvalParity::RequireInputs(WinograndeCase());
    ASSERT_NE(run_, nullptr) << "the evaluation did not run";
  }
  static LmEvalParity* run_;
};
LmEvalParity* LmEvalWinograndeParityTest::run_ = nullptr;

TEST_F(LmEvalWinograndeParityTest, GoldensMatchTheInputs) { run_->GoldensMatchTheInputs(); }
TEST_F(LmEvalWinograndeParityTest, EveryRequestMatches) { run_->EveryRequestMatches(); }
TEST_F(LmEvalWinograndeParityTest, AggregatesMatch) { run_->AggregatesMatch(); }

ParityCase RowsCase() {
  ParityCase c = FetchedDataCase(
      testing::DefaultModelGguf(), "scripts/fetch_default_model.sh", "lm_eval_smollm2_fetched",
      {{"hellaswag", "hellaswag/hellaswag_val.jsonl"}, {"boolq", "boolq/validation.jsonl"}}, 100);
  c.per_token_tolerance = LmEvalTolerances().per_token_large_vocab;
  return c;
}

class LmEvalFetchedRowsParityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = LmEvalParity::Run(RowsCase()).release(); }
  void SetUp() override {
    LmEvalParity::RequireInputs(RowsCase());
    ASSERT_NE(run_, nullptr) << "the evaluation did not run";
  }
  static LmEvalParity* run_;
};
LmEvalParity* LmEvalFetchedRowsParityTest::run_ = nullptr;

TEST_F(LmEvalFetchedRowsParityTest, GoldensMatchTheInputs) { run_->GoldensMatchTheInputs(); }
TEST_F(LmEvalFetchedRowsParityTest, EveryRequestMatches) { run_->EveryRequestMatches(); }
TEST_F(LmEvalFetchedRowsParityTest, AggregatesMatch) { run_->AggregatesMatch(); }

}  // namespace
}  // namespace focal::harness
