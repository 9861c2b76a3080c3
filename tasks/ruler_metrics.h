// SPDX-License-Identifier: Apache-2.0
// RULER's scoring (NVIDIA/RULER scripts/eval/evaluate.py and
// scripts/eval/synthetic/constants.py), per sample in [0, 1]; RULER reports
// the mean x 100 per task and length (rounded to 2 decimals for display).
//
// Every metric takes the raw generation and applies RulerPostprocess first.
// Case-insensitive means Python's str.lower() on both sides, implemented for
// ASCII and Latin-1 letters (U+00C0..U+00DE but U+00D7); other characters
// compare exactly (RULER's golds are digits, uuids, ASCII words and SQuAD /
// HotpotQA answers).
#ifndef FOCAL_TASKS_RULER_METRICS_H_
#define FOCAL_TASKS_RULER_METRICS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::tasks {

// postprocess_pred: strip(), every char in \x00-\x1f -> "\n", strip()
// (Python's str.strip(), Unicode whitespace included).
std::string RulerPostprocess(absl::string_view prediction);

// Python's str.lower() on UTF-8 for the scripts RULER's and HELMET's data use
// (ASCII, Latin-1, Latin Extended-A, Greek with final sigma, Cyrillic; other
// code points unchanged).
std::string PythonLower(absl::string_view s);

// string_match_all: the fraction of golds that occur, case-insensitively, as
// substrings of the post-processed prediction (0 with no gold).
double StringMatchAll(absl::string_view prediction, absl::Span<const std::string> golds);

// string_match_part as NVIDIA RULER computes it: 1 if any gold occurs
// case-insensitively in the post-processed prediction, else 0. (lm-eval's
// RULER port returns the fraction of golds matched instead.)
double StringMatchPart(absl::string_view prediction, absl::Span<const std::string> golds);

// RULER's "effective length": the threshold is Llama-2-7B-chat's 4K average
// (85.6, README). `averages[i]` (0-100, the mean of the 13 task scores) was
// measured at `lengths[i]`. Returns the longest length L such that the
// average at L and at every shorter measured length is >= threshold (the
// README underlines scores >= 85.6, e.g. Qwen3-32B's 85.6 at 128K, and every
// model it evaluated has its effective length at the end of such a run), or
// 0 when the shortest length is already below (RULER writes "<4K"). When all
// lengths pass, the longest one is returned (RULER writes ">128K").
// Lengths may come in any order; InvalidArgument for mismatched sizes, no
// lengths, a repeated length, or a non-finite average.
absl::StatusOr<int64_t> EffectiveLength(absl::Span<const int64_t> lengths,
                                        absl::Span<const double> averages, double threshold = 85.6);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_RULER_METRICS_H_
