// SPDX-License-Identifier: Apache-2.0
// HELMET's scoring (princeton-nlp/HELMET @4526dfbd: eval.py, data.py,
// utils.py). Without a chat template HELMET prepends the prompt's answer
// prefix to the generated text ("label:", "Corresponding value:",
// "Answer:") and parses the answer out of that output with parse_output:
// the first match of (?:prefix)(.*)(?:\n|$), case-insensitive, else the
// first line; stripped; one repeated leading prefix removed; stripped.
//  * ICL: exact_match (SQuAD's normalize_answer on both sides) of the parsed
//    answer against the gold label.
//  * JSON KV and RAG: substring_exact_match (normalised gold inside the
//    normalised prediction), the max of the raw output's and the parsed
//    answer's scores.
// Values in [0, 1]; reported x 100.
#ifndef FOCAL_TASKS_HELMET_METRICS_H_
#define FOCAL_TASKS_HELMET_METRICS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::tasks {

// HELMET's parse_output(output, prefix).
std::string HelmetParseOutput(absl::string_view output, absl::string_view prefix);

// generation = the model's text after the prompt (the prefix is prepended here).
double HelmetIclExactMatch(absl::string_view generation, absl::Span<const std::string> golds);
double HelmetKvSubstringMatch(absl::string_view generation, absl::Span<const std::string> golds);
double HelmetRagSubstringMatch(absl::string_view generation, absl::Span<const std::string> golds);
// HELMET's ruler_recall (data.py, load_ruler): the fraction of golds g with
// g.lower() in output.lower(), where output is the answer prefix plus the
// generation as is (no post-processing). The prefix varies with the query,
// so the sample carries it (GenerationSample::score_prefix).
double HelmetRulerRecall(absl::string_view output, absl::Span<const std::string> golds);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_HELMET_METRICS_H_
