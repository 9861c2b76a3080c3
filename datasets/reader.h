// SPDX-License-Identifier: Apache-2.0
// Dataset readers: one per file format, chosen by id from an explicit list.
#ifndef FOCAL_DATASETS_READER_H_
#define FOCAL_DATASETS_READER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/doc.h"

namespace focal::datasets {

// Reader ids:
//   "arc"             AI2 ARC jsonl: {"id", "question": {"stem", "choices": [{"text",
//                     "label"}]}, "answerKey"}; extra fields (e.g. "para") ignored. The
//                     Hugging Face layout {"id", "question": "...", "choices": {"text": [...],
//                     "label": [...]}, "answerKey"} is read too.
//                     -> fields {question}, choices (file order), gold = index of answerKey
//                     among the labels ("A".."E" or "1".."5"); at least 2 choices.
//   "hellaswag"       original jsonl (ctx_a, ctx_b, activity_label, endings, label as an
//                     integer or a digit string) with lm-eval's preprocessing
//                     (datasets/text_util.h) -> fields {query}, choices, gold. 4 endings.
//   "hellaswag_llamacpp"  llama.cpp's 6-lines-per-item plain text (query line, gold
//                     line, 4 ending lines); query and endings get lm-eval's
//                     preprocess() too -> fields {query}, choices, gold.
//   "piqa"            jsonl {goal, sol1, sol2} plus a labels file (one 0/1 per line,
//                     exactly one per record), given as option "labels" (default:
//                     <data>-labels.lst next to it, i.e. valid.jsonl -> valid-labels.lst;
//                     not needed when the records carry "label" themselves)
//                     -> fields {goal}, choices {sol1, sol2}, gold.
//   "boolq"           jsonl {question, passage, answer (bool) | label (0/1)} -> fields
//                     {question, passage}, gold = 1 for true.
//   "lambada"         jsonl {"text"} (OpenAI detokenised) -> fields {text, context, target}
//                     with context = all words but the last (split on ' '), target =
//                     ' ' + last word.
//   "lambada_plain"   one passage per line (original release), same fields.
//   "winogrande"      jsonl {sentence, option1, option2, answer "1"|"2"} -> fields
//                     {sentence, prefix (up to the blank "_"), continuation (after it,
//                     stripped)}, choices {option1, option2}, gold; lm-eval's split.
// Options are reader-specific key/values (e.g. "labels" for piqa); an option the reader
// does not take is an InvalidArgument error.
//
// Text files are read as lines ("\n" or "\r\n"); blank lines at the end are ignored, a
// blank line elsewhere is an error. Errors: NotFound (naming the path) for a missing file;
// InvalidArgument reading "<path>:<line>: ..." for malformed JSON (with its column),
// missing or mistyped fields (named, e.g. 'question.stem'), wrong choice counts and
// labels out of range; InvalidArgument for an unknown reader id (listing the known ones)
// and for a file with no documents. Unknown JSON fields are ignored.
absl::StatusOr<std::vector<Doc>> ReadDocs(absl::string_view reader_id, absl::string_view path,
                                          const std::map<std::string, std::string>& options = {});

// What reader `reader_id`'s layout cannot reproduce of lm-eval's prompts
// (results carry it as TaskResult.note); empty when nothing.
std::string ReaderCaveat(absl::string_view reader_id);

// The reader ids above, sorted.
std::vector<std::string> ReaderIds();

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_READER_H_
