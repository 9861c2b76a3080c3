// SPDX-License-Identifier: Apache-2.0
// Parity with lm-evaluation-harness, for any model and golden directory
// written by tests/reference/lm_eval_parity_reference.py (lm-eval 0.4.13
// through its own installed task configs, only the data source replaced by
// the ../shared/data files). `focal-eval run`'s own path (RunEvaluation:
// readers, task specs, few-shot sampling, request building, tokenization,
// scoring, metrics) runs on the same files, and every document is checked:
// the SHA-256 of each context and continuation string (the goldens hold no
// text), the exact token ids, each loglikelihood, is_greedy, acc/acc_norm,
// gold, and the aggregates with their stderrs.
#ifndef FOCAL_TESTS_HARNESS_LM_EVAL_PARITY_H_
#define FOCAL_TESTS_HARNESS_LM_EVAL_PARITY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "engine/task_details.h"
#include "reports/results.pb.h"

namespace focal::harness {

struct ParityCase {
  std::string model;                                           // GGUF file or HF directory
  std::string golden_dir;                                      // ends in '/'
  std::map<std::string, std::string> data;                     // task -> file, as --data TASK=PATH
  std::map<std::string, std::string> fewshot_data;             // task -> file, as --fewshot-data
  std::vector<std::string> required;                           // files that must exist
  std::string model_hint;                                      // how to get the model when missing
  std::string data_hint = "../shared beside the source tree";  // how to get the data
  // The folder the goldens' data paths (_meta) are relative to; empty:
  // ../shared/data/. Ends in '/'.
  std::string data_root;
  int64_t limit = 200;  // 0: every document
  int num_fewshot = 0;
  // |ll - golden| allowed beyond 1e-4 and two float32 ulps, per continuation
  // token (lm-eval's float32 log_softmax over a large vocabulary; see
  // lm_eval_smollm2_parity_test.cc).
  double per_token_tolerance = 0;
};

// The loglikelihood tolerance rule, read from
// tests/testdata/golden/lm_eval_tolerance.json (bench/lm_eval_compare.py
// reads the same file).
struct LmEvalTolerance {
  double absolute = 0;
  double float32_ulps = 0;
  double per_token_large_vocab = 0;
};
const LmEvalTolerance& LmEvalTolerances();

// The seven tasks' files under ../shared/data, as the reference script reads
// them (ARC-Challenge: its dev split, the only one in ../shared).
std::map<std::string, std::string> SharedTaskFiles();
// A zero-shot case over SharedTaskFiles() (PIQA's labels required too).
ParityCase SharedDataCase(std::string model, std::string model_hint, const std::string& golden,
                          int64_t limit);
// A zero-shot case over files of the data cache (scripts/fetch_data.sh),
// task -> path under it, as tests/reference/task_files.py's FETCHED_FILES.
ParityCase FetchedDataCase(std::string model, std::string model_hint, const std::string& golden,
                           const std::map<std::string, std::string>& files, int64_t limit);

// One evaluation of a case, then the three checks (gtest EXPECTs).
class LmEvalParity {
 public:
  // Null when a required file is missing (the test then skips or fails via
  // RequireInputs); a failed evaluation fails the calling test.
  static std::unique_ptr<LmEvalParity> Run(const ParityCase& c);
  // FOCAL_REQUIRE_FILE for the model and every data file; call first in SetUp.
  static void RequireInputs(const ParityCase& c);

  void GoldensMatchTheInputs() const;
  void EveryRequestMatches() const;
  void AggregatesMatch() const;

 private:
  explicit LmEvalParity(ParityCase c) : case_(std::move(c)) {}
  double LlTolerance(double golden, size_t n_tokens) const;
  JsonValue Aggregate() const;

  ParityCase case_;
  reports::RunResults results_;
  engine::ModelDetails details_;
  std::map<std::string, std::vector<JsonValue>> samples_;  // task -> docs in order
};

}  // namespace focal::harness

#endif  // FOCAL_TESTS_HARNESS_LM_EVAL_PARITY_H_
