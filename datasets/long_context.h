// SPDX-License-Identifier: Apache-2.0
// Long-context generation samples (RULER-style synthetic tasks and
// HotpotQA-style multi-document QA), built to fit a context length counted
// in the evaluated model's own tokens. datasets/ never sees the model: the
// harness passes a token counter bound to the model's tokenizer.
#ifndef FOCAL_DATASETS_LONG_CONTEXT_H_
#define FOCAL_DATASETS_LONG_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::datasets {

// One greedy-generation request and what scores it.
struct GenerationSample {
  std::string task;                  // e.g. "ruler_niah_single_1", "hotpotqa_long"
  int64_t length = 0;                // the context-length bucket (tokens)
  int64_t index = 0;                 // sample number within (task, length)
  std::string input;                 // everything the model reads, answer prefix included
  std::vector<std::string> outputs;  // gold answers
  int64_t max_new_tokens = 0;        // RULER's tokens_to_generate
  std::vector<std::string> stop;     // stop strings (may be empty)
  // For the per-sample log: needle depths and character positions, keys, the
  // gold-document depth, ... (free-form, JSON-safe strings).
  std::map<std::string, std::string> meta;
  // Put before the generated text when scoring: HELMET scores the prompt's
  // answer prefix plus the output (helmet_ruler_recall); empty elsewhere.
  std::string score_prefix;
};

// Number of tokens the model will read for `text` (BOS included).
using TokenCounter = std::function<absl::StatusOr<int64_t>(absl::string_view)>;
// The prefix of `text` that its first `n` tokens cover (the model's
// tokenizer, no BOS; n < 0: all but the last -n tokens): where HELMET cuts a
// context that is too long.
using TokenPrefix = std::function<absl::StatusOr<std::string>(absl::string_view text, int64_t n)>;

// TokenPrefix from a tokenizer's ids for `text` (no BOS) and its decoder:
// the decoded first n tokens, aligned to `text` (a leading space a
// sentencepiece decoder drops or adds is matched; the result is the longest
// common prefix, so it is always a prefix of `text`).
absl::StatusOr<std::string> PrefixOfTokens(
    absl::string_view text, absl::Span<const int32_t> ids, int64_t n,
    const std::function<absl::StatusOr<std::string>(absl::Span<const int32_t>)>& decode);

struct GeneratorOptions {
  TokenCounter count_tokens;  // required
  TokenPrefix token_prefix;   // required by the HELMET generators
  // Tokens of a text without BOS or any special token (HF's
  // tokenizer.tokenize): what RULER's generator counts (ruler_exact.h).
  TokenCounter count_text_tokens;
  uint64_t seed = 42;         // RULER's default random_seed
  int64_t num_samples = 500;  // per task and length (RULER's default)
  // Data files (the ../shared/data layout; empty = the bundled samples).
  std::string essay_haystack;  // PaulGrahamEssays.json: {"text": ...}
  std::string squad;           // SQuAD-format json (XQuAD en)
  std::string hotpotqa;        // HotpotQA dev-distractor jsonl
  std::string word_list;       // the key word list (bundled by default)
};

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_LONG_CONTEXT_H_
