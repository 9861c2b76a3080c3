// SPDX-License-Identifier: Apache-2.0
// BpeTokenizer's in-memory front end: a vocabulary, merges (or merges derived
// from sentencepiece scores, as transformers derives them for a GGUF) and one
// of the pipelines named by BpePreTokenizerKind (GGUF's tokenizer.ggml.pre).
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "model/bpe_tokenizer.h"
#include "model/bpe_tokenizer_impl.h"
#include "model/unicode.h"

namespace focal::model {

absl::StatusOr<BpePreTokenizerKind> BpePreTokenizerKindFromGgufPre(absl::string_view pre) {
  if (pre == "default" || pre == "gpt-2") return BpePreTokenizerKind::kGpt2;
  if (pre == "llama-bpe") return BpePreTokenizerKind::kLlama3;
  if (pre == "smollm" || pre == "starcoder") return BpePreTokenizerKind::kSmolLm;
  return absl::UnimplementedError(absl::StrCat(
      "GGUF tokenizer.ggml.pre '", pre,
      "' is not a pre-tokenizer we implement (default, gpt-2, llama-bpe, smollm, starcoder)"));
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> MergesFromScores(
    absl::Span<const std::string> tokens, absl::Span<const float> scores, absl::string_view source,
    absl::string_view field) {
  const auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", field, ": ", what));
  };
  if (tokens.size() != scores.size()) {
    return error(absl::StrCat(scores.size(), " scores for ", tokens.size(), " tokens"));
  }
  absl::flat_hash_map<absl::string_view, int32_t> ids;
  ids.reserve(tokens.size());
  std::vector<int32_t> lengths(tokens.size());  // in code points
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    // Python sorts NaN keys inconsistently: such a vocabulary has no order.
    if (std::isnan(scores[i])) return error(absl::StrCat("score ", i, " ('", t, "') is NaN"));
    if (!IsValidUtf8(t)) return error(absl::StrCat("token ", i, " is not valid UTF-8"));
    if (!ids.emplace(t, static_cast<int32_t>(i)).second) {
      return error(absl::StrCat("token ", i, " '", t, "' is listed twice (first as ", ids[t], ")"));
    }
    int32_t n = 0;
    for (size_t pos = 0; pos < t.size(); pos += Utf8Length(static_cast<unsigned char>(t[pos]))) {
      ++n;
    }
    lengths[i] = n;
  }
  struct Candidate {
    int32_t left, right;  // token ids
    float score;          // of the whole token
  };
  std::vector<Candidate> all;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const absl::string_view t = tokens[i];
    // Splits in code point order give increasing left ids only by chance:
    // transformers orders each token's splits by (left id, right id).
    std::vector<Candidate> local;
    if (t.empty()) continue;  // nothing to split
    for (size_t cut = Utf8Length(static_cast<unsigned char>(t[0])); cut < t.size();
         cut += Utf8Length(static_cast<unsigned char>(t[cut]))) {
      auto l = ids.find(t.substr(0, cut));
      if (l == ids.end()) continue;
      auto r = ids.find(t.substr(cut));
      if (r == ids.end()) continue;
      local.push_back({l->second, r->second, scores[i]});
    }
    std::sort(local.begin(), local.end(), [](const Candidate& a, const Candidate& b) {
      return std::tie(a.left, a.right) < std::tie(b.left, b.right);
    });
    all.insert(all.end(), local.begin(), local.end());
  }
  // sorted(..., key=(score, len(left), len(right)), reverse=True) keeps equal
  // keys in their original order: a stable sort on the descending key.
  std::stable_sort(all.begin(), all.end(), [&](const Candidate& a, const Candidate& b) {
    return std::make_tuple(a.score, lengths[a.left], lengths[a.right]) >
           std::make_tuple(b.score, lengths[b.left], lengths[b.right]);
  });
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(all.size());
  for (const Candidate& c : all) merges.emplace_back(tokens[c.left], tokens[c.right]);
  return merges;
}

BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::~BpeTokenizer() = default;

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::FromParts(
    const BpeTokenizerParts& parts) {
  BpeSpec spec;
  spec.source = parts.source;
  spec.vocab_field = "vocab";
  spec.merges_field = "merges";
  spec.added_field = "added";
  spec.vocab.reserve(parts.vocab.size());
  for (size_t i = 0; i < parts.vocab.size(); ++i) spec.vocab.emplace_back(parts.vocab[i], i);
  spec.merges = parts.merges;
  spec.added = parts.added;
  const auto byte_level = [&](bool use_regex) {
    PreTokenizerStep s;
    s.type = PreTokenizerStep::Type::kByteLevel;
    s.add_prefix_space = false;
    s.use_regex = use_regex;
    return s;
  };
  spec.has_decoder = true;
  switch (parts.kind) {
    case BpePreTokenizerKind::kGpt2:
      spec.pre_tokenizer = {byte_level(true)};
      spec.decoder = {DecoderStep{}};
      break;
    case BpePreTokenizerKind::kLlama3: {
      PreTokenizerStep split;
      split.type = PreTokenizerStep::Type::kSplit;
      split.regex = SplitRegex::kLlama3;
      split.behavior = SplitBehavior::kIsolated;
      spec.pre_tokenizer = {split, byte_level(false)};
      spec.ignore_merges = true;
      spec.decoder = {DecoderStep{}};
      break;
    }
    case BpePreTokenizerKind::kSmolLm: {
      PreTokenizerStep digits;
      digits.type = PreTokenizerStep::Type::kDigits;
      digits.individual_digits = true;
      spec.pre_tokenizer = {digits, byte_level(true)};
      spec.decoder = {DecoderStep{}};
      break;
    }
    case BpePreTokenizerKind::kSentencePiece:
    case BpePreTokenizerKind::kLlamaGguf: {
      if (parts.kind == BpePreTokenizerKind::kSentencePiece) {
        spec.normalizer = {{NormalizerStep::Type::kPrepend, "", "\xE2\x96\x81"},
                           {NormalizerStep::Type::kReplace, " ", "\xE2\x96\x81"}};
      } else {
        PreTokenizerStep metaspace;
        metaspace.type = PreTokenizerStep::Type::kMetaspace;
        metaspace.replacement = "\xE2\x96\x81";
        metaspace.prepend_scheme = PreTokenizerStep::Prepend::kFirst;
        metaspace.split = false;
        spec.pre_tokenizer = {metaspace};
      }
      spec.byte_fallback = true;
      spec.fuse_unk = true;
      // transformers builds the GGUF tokenizer's BPE model without unk_token.
      if (parts.unk_id >= 0 && parts.kind == BpePreTokenizerKind::kSentencePiece) {
        if (parts.unk_id >= static_cast<int32_t>(parts.vocab.size())) {
          return SpecError(spec, "unk_id", absl::StrCat(parts.unk_id, " is not a token"));
        }
        spec.has_unk = true;
        spec.unk_token = parts.vocab[parts.unk_id];
      }
      DecoderStep replace, fallback, fuse, strip;
      replace.type = DecoderStep::Type::kReplace;
      replace.pattern = "\xE2\x96\x81";
      replace.content = " ";
      fallback.type = DecoderStep::Type::kByteFallback;
      fuse.type = DecoderStep::Type::kFuse;
      strip.type = DecoderStep::Type::kStrip;
      strip.strip_char = ' ';
      strip.start = 1;
      strip.stop = 0;
      spec.decoder = {replace, fallback, fuse, strip};
      break;
    }
  }
  const int32_t n = static_cast<int32_t>(parts.vocab.size());
  for (auto [id, field, add] : {std::tuple{parts.bos_id, "bos_id", parts.add_bos},
                                std::tuple{parts.eos_id, "eos_id", parts.add_eos}}) {
    if (id >= n || id < -1) return SpecError(spec, field, absl::StrCat(id, " is not a token"));
    if (add && id < 0) {
      return SpecError(spec, field, "is needed (the text is to get it) but is -1");
    }
  }
  spec.bos_id = parts.bos_id;
  spec.eos_id = parts.eos_id;
  if (parts.add_bos) spec.prefix = {parts.bos_id};
  if (parts.add_eos) spec.suffix = {parts.eos_id};
  absl::StatusOr<std::unique_ptr<Impl>> impl = BuildBpeImpl(std::move(spec));
  if (!impl.ok()) return impl.status();
  (*impl)->sha256 = parts.sha256;
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(*std::move(impl)));
}

}  // namespace focal::model
