// SPDX-License-Identifier: Apache-2.0
// "hotpotqa_long": HotpotQA multi-hop questions answered from a context grown
// to a given length (in the evaluated model's tokens) with distractor
// paragraphs, the two gold paragraphs placed at a chosen relative depth.
//
// Prompt: LongBench v1's hotpotqa prompt (THUDM/LongBench,
// LongBench/config/dataset2prompt.json) with passages rendered as LongBench's
// own hotpotqa/2wikimqa data are: "Passage {i}:\n{title}\n{text}", i from 1,
// joined by "\n"; text = "".join(sentences) (HotpotQA sentences carry their
// own leading spaces; RULER's qa.py joins them the same way). 32 new tokens,
// stopped at "\n" (HELMET's setting; LongBench itself lets the model run the
// 32 tokens and scores the whole output, see tasks/qa_metrics.h).
//
// Per question (HotpotQA dev jsonl records {_id, question, answer,
// supporting_facts: [[title, sent_id], ...], context: [[title, [sentence,
// ...]], ...]}):
//  * gold passages = the context paragraphs whose titles are in
//    supporting_facts, kept adjacent and in context order. A record lacking
//    any of them in its own context (common in the shared 500-record file,
//    whose contexts look retrieved rather than distractor-setting) cannot be
//    answered from its context and is skipped; the counts go into meta.
//  * distractors, in fill order: the record's own non-gold paragraphs (context
//    order), then other records' paragraphs in a seeded order (deduplicated;
//    never one titled like a gold paragraph or equal to one of the record's
//    own). When that pool runs out the other records' paragraphs are used
//    again, in the same order, and meta says so ("distractors_repeated").
//  * fit: the longest prefix of the fill order with count_tokens(input) + 32
//    <= length, then a first-fit scan of the next 64 candidates adds each
//    (shorter) one that still fits (it stops after 4 failed exact counts),
//    so the slack stays below the cheapest passage it left out. Every accepted
//    prompt is counted exactly with the real token counter; per-passage
//    counts only steer the search. Whole passages only, never cut.
//  * layout: the chosen distractors are ordered by seeded random keys drawn
//    per fill-order position, so a longer context keeps a shorter one's
//    distractors in the same relative order; the gold block is inserted at
//    passage index round(gold_depth * n), n = number of distractors
//    (0 = first, 1 = last; halves round away from zero).
//  * randomness: PyRandom (base/py_random.h) (CPython's MT19937). Per sample two 32-bit
//    seeds are drawn, in sample order, from PyRandom(options.seed): one orders
//    the other records' paragraphs (random.shuffle), one draws the layout
//    keys (random.random()). Neither depends on length or depth, so every
//    length and depth of one question uses the same distractor order.
// Samples are the usable questions in file order; at most options.num_samples.
//
// meta: id, type, gold_titles (JSON array), gold_passages (1-based passage
// numbers, "4,5"), gold_depth (asked), gold_depth_achieved (gold start index /
// number of distractors; 0 with none), gold_char_depth (character offset of
// the gold block in the context / context length), num_passages,
// num_distractors, own_distractors, other_distractors, used_other_questions,
// distractors_repeated, pool_paragraphs, input_tokens, slack_tokens (length -
// input_tokens - 32), prefix_distractors (the fill-order prefix; the rest came
// from the first-fit scan), smallest_unused_passage_tokens (the cheapest
// passage the fit looked at and left out, in tokens: exact, or the per-passage
// estimate minus 4; slack_tokens is below it),
// questions_usable, questions_skipped_missing_gold.
#ifndef FOCAL_DATASETS_HOTPOTQA_LONG_H_
#define FOCAL_DATASETS_HOTPOTQA_LONG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/long_context.h"

namespace focal::datasets {

inline constexpr char kHotpotQaLongTask[] = "hotpotqa_long";
inline constexpr int64_t kHotpotQaLongMaxNewTokens = 32;  // LongBench dataset2maxlen.json

// The depths `--gold-depth sweep` runs: 0, 0.25, 0.5, 0.75, 1.
std::vector<double> HotpotQaSweepDepths();

// One passage as LongBench renders it: "Passage {number}:\n{title}\n{text}".
std::string RenderHotpotQaPassage(int64_t number, absl::string_view title, absl::string_view text);

// LongBench's hotpotqa prompt with `context` (passages joined by "\n") and
// `question` filled in; ends with "\nAnswer:".
std::string RenderHotpotQaPrompt(absl::string_view context, absl::string_view question);

// Builds the samples for one context length and gold depth (see above).
// Errors: InvalidArgument for length <= 0, gold_depth outside [0, 1] (or
// NaN), num_samples <= 0, no count_tokens, no hotpotqa path, malformed data
// ("<path>:<line>: ..."), a length too small for a question's gold passages,
// question and answer budget (naming the question id); NotFound for a
// missing file; FailedPrecondition when no record has its gold paragraphs or
// the paragraph pool cannot fill the length even with repetition (a file
// with a single record); errors of count_tokens as they come.
absl::StatusOr<std::vector<GenerationSample>> MakeHotpotQaLongSamples(
    int64_t length, double gold_depth, const GeneratorOptions& options);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_HOTPOTQA_LONG_H_
