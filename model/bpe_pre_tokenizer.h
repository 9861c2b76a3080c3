// SPDX-License-Identifier: Apache-2.0
// The text-splitting stages of an HF tokenizer.json BPE tokenizer, as the
// `tokenizers` library (0.22) runs them: pre-tokenizers (ByteLevel, Split,
// Digits, Metaspace) over "pieces" of text. The split regexes these files
// use need look-ahead (`\s+(?!\S)`), which RE2 lacks, so each supported
// regex is a hand-written scanner giving the same matches as Oniguruma (what
// the `tokenizers` wheels use); any other regex is refused by the loader.
#ifndef FOCAL_MODEL_BPE_PRE_TOKENIZER_H_
#define FOCAL_MODEL_BPE_PRE_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace focal::model {

// The split regexes we implement, by the models that use them.
enum class SplitRegex {
  // GPT-2 (also ByteLevel's built-in regex):
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
  //   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  // Qwen2: as Llama 3 with \p{N} (single digits) for \p{N}{1,3}.
  kQwen2,
};
// The regex `pattern` (as written in tokenizer.json) is, or nullopt.
std::optional<SplitRegex> RecognizeSplitRegex(absl::string_view pattern);
// The pattern text of `re` (for messages and round trips).
absl::string_view SplitRegexPattern(SplitRegex re);

// A contiguous part of the text being tokenized; [begin, end) byte spans
// below are into `text`.
struct Piece {
  std::string text;
  // It starts where the original input starts (Metaspace's "first" scheme).
  bool at_start = false;
  // >= 0 once the piece is a token (an added token matched in the text).
  int32_t id = -1;
};

// A span of a piece with whether the pattern matched it; the spans of one
// piece tile it in order (the `tokenizers` Pattern::find_matches shape).
struct Span {
  size_t begin, end;
  bool is_match;
};
// Non-overlapping leftmost matches of `re` in `text` (valid UTF-8), with the
// gaps between them as non-match spans.
std::vector<Span> FindRegexSpans(SplitRegex re, absl::string_view text);

// SplitDelimiterBehavior: what becomes of the matches when splitting.
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
// The [begin, end) parts `spans` split into under `behavior` (empty parts
// included; callers drop them as the library does).
std::vector<std::pair<size_t, size_t>> ApplySplitBehavior(const std::vector<Span>& spans,
                                                          SplitBehavior behavior);

struct PreTokenizerStep {
  enum class Type { kByteLevel, kSplit, kDigits, kMetaspace };
  Type type = Type::kByteLevel;
  // ByteLevel: prepend ' ' to each piece not starting with one; split with
  // the GPT-2 regex; then map every byte to its printable stand-in.
  bool add_prefix_space = false;
  bool use_regex = true;
  // Split: a regex, or a literal string when `regex` is empty.
  std::optional<SplitRegex> regex;
  std::string literal;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  // Digits: every \p{N} its own piece, or runs of them.
  bool individual_digits = false;
  // Metaspace: ' ' -> replacement, prepend it per scheme, split before it.
  std::string replacement;
  enum class Prepend { kAlways, kFirst, kNever };
  Prepend prepend_scheme = Prepend::kAlways;
  bool split = true;
};

// Runs `step` over the pieces that are not tokens yet, dropping empty ones.
void RunPreTokenizer(const PreTokenizerStep& step, std::vector<Piece>* pieces);

// Replaces every occurrence of `from` (non-empty), left to right.
void ReplaceAllLiteral(std::string* s, absl::string_view from, absl::string_view to);

// GPT-2's bytes_to_unicode: the printable code point standing for each byte
// in byte-level vocabularies ('Ġ' for ' '), and its inverse (-1 = none).
char32_t ByteToUnicode(uint8_t b);
int ByteFromUnicode(char32_t cp);

}  // namespace focal::model

#endif  // FOCAL_MODEL_BPE_PRE_TOKENIZER_H_
