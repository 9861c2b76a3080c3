// SPDX-License-Identifier: Apache-2.0
// Internal to ruler_exact*.cc: the parts the task families share.
#ifndef FOCAL_DATASETS_RULER_EXACT_INTERNAL_H_
#define FOCAL_DATASETS_RULER_EXACT_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/ruler_exact.h"

namespace focal::datasets::ruler_exact {

// One task of synthetic.yaml + constants.py, with the base template and the answer
// prefix appended as prepare.py does.
struct Spec {
  absl::string_view name;
  enum { kNiah, kVt, kCwe, kFwe, kQa } family;
  int64_t tokens_to_generate;
  absl::string_view haystack = "";  // niah: repeat | essay | needle
  absl::string_view key_type = "", value_type = "";
  int num_k = 1, num_v = 1, num_q = 1;
  absl::string_view dataset = "";  // qa
};

inline constexpr absl::string_view kNoise =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

// A Python exception inside generate_input_output: RULER's sample loops
// catch it and retry with a smaller haystack.
inline absl::Status PyError(absl::string_view what) { return absl::OutOfRangeError(what); }

// sorted(set(v)).
inline std::vector<std::string> SortedUnique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The niah family (ruler_exact_niah.cc).
absl::StatusOr<std::vector<Sample>> GenerateNiah(const Spec& spec, int64_t max_len, int64_t num,
                                                 uint64_t seed, const Sources& src,
                                                 const CountTokens& count);

// One generate_input_output call with `units` haystack units: input, golds.
// OutOfRange stands for a Python exception RULER's sample loop catches.
using MakeFn =
    std::function<absl::StatusOr<std::pair<std::string, std::vector<std::string>>>(int64_t units)>;

// RULER's per-sample loop: draw with `units`; while the sample is longer than
// max_len - t, draw again with `inc` fewer units (never below `inc`).
absl::StatusOr<std::vector<Sample>> SampleLoop(absl::string_view task, int64_t num, int64_t units,
                                               int64_t inc, int64_t max_len, int64_t t,
                                               const MakeFn& make, const CountTokens& count);

// The refusal where RULER would loop forever.
absl::Status TooShort(absl::string_view task, int64_t max_len, int64_t tokens);

// "1. a 2. b ..." (cwe's numbered lists).
std::string Numbered(const std::vector<std::string>& words);

// qa_1 (SQuAD, `squad`) and qa_2 (HotpotQA).
absl::StatusOr<std::vector<Sample>> GenerateQa(absl::string_view task, bool squad, int64_t max_len,
                                               int64_t num, uint64_t seed, const Sources& src,
                                               const CountTokens& count);

}  // namespace focal::datasets::ruler_exact

#endif  // FOCAL_DATASETS_RULER_EXACT_INTERNAL_H_
