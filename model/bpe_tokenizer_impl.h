// SPDX-License-Identifier: Apache-2.0
// Internals of BpeTokenizer shared by its two front ends (tokenizer.json in
// bpe_tokenizer_json.cc, in-memory parts in bpe_tokenizer_parts.cc): the spec a
// front end fills in, and the built pipeline.
#ifndef FOCAL_MODEL_BPE_TOKENIZER_IMPL_H_
#define FOCAL_MODEL_BPE_TOKENIZER_IMPL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "model/bpe_pre_tokenizer.h"
#include "model/bpe_tokenizer.h"

namespace focal::model {

struct NormalizerStep {
  enum class Type { kPrepend, kReplace };
  Type type = Type::kPrepend;
  std::string pattern;  // Replace: the literal replaced
  std::string content;  // Prepend: what is prepended; Replace: the replacement
};

struct DecoderStep {
  enum class Type { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace };
  Type type = Type::kByteLevel;
  std::string pattern, content;  // Replace
  char32_t strip_char = ' ';     // Strip
  size_t start = 0, stop = 0;    // Strip
  char32_t replacement = 0;      // Metaspace
  bool prepend = true;           // Metaspace: prepend_scheme != never
};

// What a front end describes; BuildBpeImpl checks and compiles it.
struct BpeSpec {
  std::string source;  // the file (or parts' source), first in every error
  // model: token -> id as listed, and merges in rank order. `vocab_field`
  // and `merges_field` name them in errors.
  std::vector<std::pair<std::string, int64_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  std::string vocab_field = "model.vocab", merges_field = "model.merges";
  bool has_unk = false;
  std::string unk_token;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  bool has_decoder = false;
  std::vector<DecoderStep> decoder;
  std::vector<BpeAddedToken> added;  // ids as the file gives them
  std::string added_field = "added_tokens";
  // Special tokens add_special_tokens=True puts around the text.
  std::vector<int32_t> prefix, suffix;
  int32_t bos_id = -1, eos_id = -1;
};

// Added tokens of one matching pass (not normalized / normalized), found
// leftmost-longest as the library's Aho-Corasick automaton does.
struct AddedMatcher {
  struct Pattern {
    std::string text;
    int32_t id;
    bool lstrip, rstrip;
  };
  std::vector<Pattern> patterns;               // longest first
  std::array<std::vector<int>, 256> by_first;  // indices into patterns
  void Add(Pattern p);
  void Finish();
  // Splits the pieces that are not tokens yet around the matches.
  void Split(std::vector<Piece>* pieces) const;
};

struct BpeTokenizer::Impl {
  std::string path, sha256;
  absl::flat_hash_map<std::string, int32_t> vocab;  // the model's, not added
  // (left id << 32 | right id) -> (rank, merged id)
  absl::flat_hash_map<uint64_t, std::pair<uint32_t, int32_t>> merges;
  enum Kind : uint8_t { kAbsent, kModel, kAdded, kSpecial };
  std::vector<std::string> id_to_token;
  std::vector<uint8_t> kind;
  int32_t unk_id = -1;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  std::array<int32_t, 256> byte_ids;  // <0xNN> tokens, -1 when absent
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  bool has_decoder = false;
  std::vector<DecoderStep> decoder;
  AddedMatcher raw_added, normalized_added;
  std::vector<int32_t> prefix, suffix;
  int32_t bos_id = -1, eos_id = -1;

  absl::StatusOr<std::vector<int32_t>> EncodeText(absl::string_view text) const;
  void Normalize(std::string* s) const;
  void Bpe(absl::string_view word, std::vector<int32_t>* out) const;
};

absl::StatusOr<std::unique_ptr<BpeTokenizer::Impl>> BuildBpeImpl(BpeSpec spec);

// An error naming the spec's source and field.
inline absl::Status SpecError(const BpeSpec& spec, absl::string_view field,
                              absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(spec.source, ": ", field, ": ", what));
}

// One decoder step over the token list (bpe_decoder.cc).
std::vector<std::string> RunBpeDecoder(const DecoderStep& d, std::vector<std::string> tokens);

}  // namespace focal::model

#endif  // FOCAL_MODEL_BPE_TOKENIZER_IMPL_H_
