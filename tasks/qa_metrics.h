// SPDX-License-Identifier: Apache-2.0
// Short-answer QA metrics as SQuAD v1.1's evaluate script and LongBench
// (LongBench/metrics.py: normalize_answer, f1_score, qa_f1_score) compute
// them, plus HELMET's substring exact match. Scores are in [0, 1], the max
// over the gold answers (0 with no gold answer).
//
// ExactMatch and TokenF1 take the raw generation and apply QaPrediction() first:
// the first line after any leading newlines, stripped. This is LongBench's
// post-processing for its few-shot tasks (eval.py:
// `prediction.lstrip('\n').split('\n')[0]`); LongBench does *not* cut its
// hotpotqa predictions (it scores all 32 generated tokens), but hotpotqa_long
// stops generation at "\n" as HELMET does, which this makes explicit and
// idempotent.
#ifndef FOCAL_TASKS_QA_METRICS_H_
#define FOCAL_TASKS_QA_METRICS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::tasks {

// prediction.lstrip("\n").split("\n")[0].strip() (Python's str.strip()).
std::string QaPrediction(absl::string_view generation);

// SQuAD's normalize_answer: lower-case, drop string.punctuation (ASCII),
// drop the words a/an/the (re.sub(r"\b(a|an|the)\b", " ", s)), collapse
// whitespace (" ".join(s.split())). Python semantics on UTF-8 text:
//  * lower(): CPython 3.11's (Unicode 14.0) one-to-one mappings for every
//    code point, plus U+0130 -> "i\u0307"; Greek capital sigma always becomes
//    σ (Python picks ς at the end of a word).
//  * \b: Python's Unicode word characters [\pL\pN_] (re2 classes), so "the"
//    inside "éthe" stays a part of its word.
//  * split(): Python's Unicode whitespace (NBSP, U+2000..U+200A, ...).
std::string NormalizeAnswer(absl::string_view s);

// 1 if NormalizeAnswer(prediction) == NormalizeAnswer(gold) for some gold.
double ExactMatch(absl::string_view prediction, absl::Span<const std::string> golds);

// SQuAD token F1 on the normalised answers split on spaces: common =
// Counter(pred) & Counter(gold); 0 when nothing is shared; else
// 2 * precision * recall / (precision + recall). Max over golds.
double TokenF1(absl::string_view prediction, absl::Span<const std::string> golds);

// HELMET's substring_exact_match: 1 if NormalizeAnswer(gold) is a substring
// of NormalizeAnswer(prediction) for some gold. Unlike the two above it
// takes the prediction whole (HELMET scores raw outputs with it; the
// "substring_match" metric applies QaPrediction first).
double SubstringMatch(absl::string_view prediction, absl::Span<const std::string> golds);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_QA_METRICS_H_
