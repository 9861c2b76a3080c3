// SPDX-License-Identifier: Apache-2.0
// BpeTokenizer: an HF `tokenizer.json` whose model is BPE, encoding exactly as
// the `tokenizers` library (0.22) does: byte-level BPE (GPT-2, Llama 3,
// SmolLM/StarCoder) and sentencepiece-style BPE with byte fallback (Llama 2,
// Mistral). What is implemented:
//   normalizer     null, Prepend, Replace (string pattern), Sequence
//   pre_tokenizer  null, ByteLevel, Digits, Metaspace, Sequence, Split with a
//                  string pattern or one of the regexes of SplitRegex
//                  (GPT-2, Llama 3, Qwen2)
//   model          BPE: vocab, merges ("a b" or ["a", "b"]), unk_token,
//                  fuse_unk, byte_fallback, ignore_merges
//   post_processor null, TemplateProcessing, ByteLevel, Sequence
//   decoder        null, ByteLevel, Replace (string), ByteFallback, Fuse,
//                  Strip, Metaspace, Sequence
//   added_tokens   special or not, lstrip, rstrip, normalized
// Anything else (other component types, regex patterns, BPE dropout,
// continuing_subword_prefix, end_of_word_suffix, single_word added tokens) is
// refused with an error naming the file and the field: never approximated.
// `truncation` and `padding` are ignored, as transformers overrides them.
//
// Encode(text, add_bos) is `tokenizers`' encode(text, add_special_tokens=
// False) -- added and special tokens spelt in the text still match, as in
// transformers' default (split_special_tokens=False) -- with bos_id() put
// first when add_bos. That is what lm-eval's HF backend feeds the model:
// it encodes with add_special_tokens=False and prepends BOS itself.
// EncodeWithSpecialTokens is encode(text) with the post-processor's (or
// tokenizer_config.json's) special tokens around it, i.e.
// add_special_tokens=True.
//
// Decode is `tokenizers`' decode(ids, skip_special_tokens=True): special
// added tokens produce no text. transformers' clean_up_tokenization_spaces is
// not applied.
#ifndef FOCAL_MODEL_BPE_TOKENIZER_H_
#define FOCAL_MODEL_BPE_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/tokenizer.h"

namespace focal::model {

// The tokenizer families a GGUF file can name (tokenizer.ggml.model and
// tokenizer.ggml.pre), as the normalizer/pre-tokenizer/decoder their HF
// tokenizer.json files use:
//   kGpt2           ByteLevel(add_prefix_space=false, GPT-2 regex); decoder ByteLevel
//   kLlama3         Split(Llama 3 regex, Isolated) + ByteLevel(no regex),
//                   ignore_merges; decoder ByteLevel
//   kSmolLm         Digits(individual_digits) + ByteLevel(GPT-2 regex); decoder
//                   ByteLevel (SmolLM/SmolLM2, StarCoder)
//   kSentencePiece  normalizer Prepend("▁") + Replace(" ", "▁"), no
//                   pre-tokenizer, byte_fallback and fuse_unk; decoder
//                   Replace("▁", " ") + ByteFallback + Fuse + Strip(" ", 1, 0)
//                   (Llama 2, Mistral as tokenizer.json)
//   kLlamaGguf      transformers 5's LlamaTokenizer as it is built for a GGUF
//                   'llama' vocabulary: no normalizer, Metaspace("▁",
//                   prepend_scheme "first", no split), byte_fallback and
//                   fuse_unk but no unknown token in the model (a character
//                   with neither a token nor <0xNN> byte tokens is dropped);
//                   decoder as kSentencePiece
enum class BpePreTokenizerKind { kGpt2, kLlama3, kSmolLm, kSentencePiece, kLlamaGguf };

// The kind for GGUF's tokenizer.ggml.pre (model "gpt2"):
//   "default", "gpt-2"       -> kGpt2 ("default" is what files written before
//                               the key existed get; their HF tokenizers were
//                               GPT-2's. llama.cpp's own "default" splitting
//                               differs.)
//   "llama-bpe"              -> kLlama3
//   "smollm", "starcoder"    -> kSmolLm
// Other names are Unimplemented, naming the name. GGUF model "llama" (a
// sentencepiece vocabulary) is kLlamaGguf, with merges derived from the
// token scores (MergesFromScores); that is the GGUF loader's business.
absl::StatusOr<BpePreTokenizerKind> BpePreTokenizerKindFromGgufPre(absl::string_view pre);

// The merges transformers (5.x, tokenization_utils_base.generate_merges)
// derives from a sentencepiece vocabulary and its scores: for every token, in
// order, each split into two tokens (at a code point) that are both in the
// vocabulary, ordered by their ids; then all of them stably sorted by the
// whole token's score, the left part's and the right part's length in code
// points, each descending. InvalidArgument naming `source` and `field` with
// the index for a NaN score, a token that is not UTF-8 or listed twice, or
// lengths that differ.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> MergesFromScores(
    absl::Span<const std::string> tokens, absl::Span<const float> scores, absl::string_view source,
    absl::string_view field);

struct BpeAddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool single_word = false;  // refused when true
};

// A tokenizer from memory (e.g. GGUF metadata) instead of a tokenizer.json.
struct BpeTokenizerParts {
  // id -> token, spelt as tokenizer.json and GGUF spell them: byte-level
  // vocabularies in GPT-2's printable stand-ins ("Ġthe"), sentencepiece ones
  // with '▁' and <0xNN> byte tokens. Tokens of `added` are found here too.
  std::vector<std::string> vocab;
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  // Tokens matched in the text before BPE; ids index `vocab`. From GGUF:
  // token_type 3 (control) as special, 4 (user-defined) as not special,
  // neither normalized.
  std::vector<BpeAddedToken> added;
  BpePreTokenizerKind kind = BpePreTokenizerKind::kGpt2;
  int32_t bos_id = -1, eos_id = -1;
  int32_t unk_id = -1;                    // kSentencePiece: the unknown token
  bool add_bos = false, add_eos = false;  // what add_special_tokens=True adds
  std::string source;                     // named by errors and returned by path()
  std::string sha256;                     // identity of what the parts came from
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Loads `path` (a tokenizer.json) and, when present beside it,
  // tokenizer_config.json: its bos_token / eos_token name BOS and EOS and its
  // add_bos_token / add_eos_token say what EncodeWithSpecialTokens adds,
  // overriding the post-processor. Without it BOS (EOS) is the special token
  // the post-processor's single template puts before (after) the text, if
  // any. sha256() is that of tokenizer.json's bytes, followed by
  // tokenizer_config.json's when that file is used. Errors name the file and
  // the field.
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> Load(absl::string_view path);
  static absl::StatusOr<std::unique_ptr<BpeTokenizer>> FromParts(const BpeTokenizerParts& parts);
  ~BpeTokenizer() override;

  // Encode: see the file comment. InvalidArgument for text that is not UTF-8.
  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text, bool add_bos) const override;
  absl::StatusOr<std::vector<int32_t>> EncodeWithSpecialTokens(absl::string_view text) const;
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  // The token as the vocabulary spells it ("" for an unknown id).
  std::string IdToPiece(int32_t id) const override;
  bool HasToken(int32_t id) const override;

  // Highest id + 1, over the model vocabulary and the added tokens.
  int32_t vocab_size() const override;
  int32_t bos_id() const override;
  int32_t eos_id() const override;
  // What EncodeWithSpecialTokens puts before and after the text.
  const std::vector<int32_t>& prefix_ids() const;
  const std::vector<int32_t>& suffix_ids() const;
  bool adds_bos() const override;
  absl::string_view name() const override { return "bpe"; }
  const std::string& path() const override;
  const std::string& sha256() const override;

  struct Impl;  // the pipeline, in bpe_tokenizer_impl.h

 private:
  explicit BpeTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_BPE_TOKENIZER_H_
