// SPDX-License-Identifier: Apache-2.0
#include "model/tokenizer_loader.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/bpe_tokenizer.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/unicode.h"

namespace focal::model {

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(absl::string_view model_dir) {
  std::error_code ec;
  // exists, not is_regular_file: a tokenizer.model that is not a regular
  // file gets the sentencepiece loader's error rather than "no tokenizer".
  const std::string sp_path = absl::StrCat(model_dir, "/tokenizer.model");
  if (std::filesystem::exists(sp_path, ec)) {
    FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> tok,
                           SentencePieceTokenizer::Load(sp_path));
    return tok;
  }
  const std::string json_path = absl::StrCat(model_dir, "/tokenizer.json");
  if (std::filesystem::exists(json_path, ec)) {
    FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tok, BpeTokenizer::Load(json_path));
    return tok;
  }
  return absl::NotFoundError(absl::StrCat("model directory '", model_dir,
                                          "' has no tokenizer.model (sentencepiece) or "
                                          "tokenizer.json"));
}

namespace {

// tokenizer.ggml.merges, "a b" each.
absl::Status ParseGgufMerges(const GgufFile& gguf, const GgufTokenizerData& data,
                             BpeTokenizerParts* parts) {
  for (size_t i = 0; i < data.merges.size(); ++i) {
    const std::string& m = data.merges[i];
    const size_t sp = m.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == m.size() ||
        m.find(' ', sp + 1) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": tokenizer.ggml.merges[", i,
                                                     "] '", m, "' is not two tokens"));
    }
    parts->merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
  }
  return absl::OkStatus();
}

// llama.cpp's token types (llama_token_type): 0 undefined, 1 normal,
// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
constexpr int32_t kControl = 3, kUserDefined = 4, kMaxTokenType = 6;

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadGgufBpe(const GgufFile& gguf,
                                                       const GgufTokenizerData& data) {
  BpeTokenizerParts parts;
  auto kind = BpePreTokenizerKindFromGgufPre(data.pre.empty() ? "default" : data.pre);
  if (!kind.ok()) return Annotate(kind.status(), absl::StrCat(gguf.path(), ": tokenizer.ggml.pre"));
  parts.kind = *kind;
  parts.vocab = data.tokens;
  Sha256 identity;  // the tokenizer's own content, apart from the weights
  absl::StrAppend(&parts.source, gguf.path(), "#tokenizer");
  FOCAL_RETURN_IF_ERROR(ParseGgufMerges(gguf, data, &parts));
  for (const std::string& m : data.merges) {
    identity.Update(m);
    identity.Update("\n", 1);
  }
  for (size_t id = 0; id < data.tokens.size(); ++id) {
    // The pre-tokenizer and decoders read tokens as UTF-8 (GGUF strings are
    // UTF-8 by the spec; nothing checked them on read).
    if (!IsValidUtf8(data.tokens[id])) {
      return absl::InvalidArgumentError(
          absl::StrCat(gguf.path(), ": tokenizer.ggml.tokens[", id, "] is not valid UTF-8"));
    }
    identity.Update(data.tokens[id]);
    identity.Update("\n", 1);
    const int32_t type = id < data.token_type.size() ? data.token_type[id] : 1;
    // llama.cpp's token types: 3 control (special), 4 user-defined (added, not special).
    if (type == kControl || type == kUserDefined) {
      BpeAddedToken t;
      t.id = static_cast<int32_t>(id);
      t.content = data.tokens[id];
      t.special = type == kControl;
      parts.added.push_back(std::move(t));
    }
  }
  for (int32_t t : data.token_type) identity.Update(&t, sizeof(t));
  identity.Update(data.pre);
  parts.bos_id = data.bos_id.has_value() ? static_cast<int32_t>(*data.bos_id) : -1;
  parts.eos_id = data.eos_id.has_value() ? static_cast<int32_t>(*data.eos_id) : -1;
  parts.unk_id = data.unknown_id.has_value() ? static_cast<int32_t>(*data.unknown_id) : -1;
  parts.add_bos = data.add_bos.value_or(false);
  parts.add_eos = data.add_eos.value_or(false);
  parts.sha256 = identity.HexDigest();
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tok, BpeTokenizer::FromParts(parts));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

// A sentencepiece ("llama") vocabulary, built as transformers 5.24 builds it
// (integrations/gguf/gguf_tokenizer_mapping.py): LlamaTokenizer(vocab, merges
// derived from the scores) -- see BpePreTokenizerKind::kLlamaGguf -- whose
// constructor adds "<s>", "</s>" and "<unk>" as special tokens (appended
// after the vocabulary when it lacks them); then control tokens become
// special and user-defined ones plain added tokens (still special for
// decoding if they were one of those three); then the tokens named by the
// bos/eos/unknown/padding ids become special unless already added. All of
// them are matched in the text before BPE, special or not. BOS is
// added by default (tokenizer.ggml.add_bos_token, default true), EOS only
// with add_eos_token. tokenizer.ggml.add_space_prefix is ignored, as
// transformers ignores it: a "▁" is always prepended to the text's start.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadGgufLlama(const GgufFile& gguf,
                                                         const GgufTokenizerData& data) {
  const std::string& file = gguf.path();
  if (gguf.Has("general.architecture")) {
    FOCAL_ASSIGN_OR_RETURN(const std::string arch, gguf.GetString("general.architecture"));
    // transformers gives these architectures other sentencepiece pipelines.
    for (absl::string_view other : {"gemma", "gemma2", "gemma3", "phi3"}) {
      if (arch == other) {
        return absl::UnimplementedError(
            absl::StrCat(file, ": a 'llama' (sentencepiece) vocabulary of architecture '", arch,
                         "' is not implemented (transformers builds it differently from Llama's)"));
      }
    }
  }
  if (!data.pre.empty() && data.pre != "default") {
    return absl::UnimplementedError(absl::StrCat(
        file, ": tokenizer.ggml.pre '", data.pre,
        "' with a 'llama' (sentencepiece) vocabulary is not implemented (only none or 'default')"));
  }
  const size_t n = data.tokens.size();
  if (n == 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": tokenizer.ggml.tokens is empty"));
  }
  for (size_t id = 0; id < n; ++id) {
    // The decoders read tokens as UTF-8 (merges given by the file skip the
    // check MergesFromScores makes).
    if (!IsValidUtf8(data.tokens[id])) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": tokenizer.ggml.tokens[", id, "] is not valid UTF-8"));
    }
  }
  for (size_t i = 0; i < data.token_type.size(); ++i) {
    const int32_t type = data.token_type[i];
    if (type < 0 || type > kMaxTokenType) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": tokenizer.ggml.token_type[", i,
                                                     "] = ", type, " (token '", data.tokens[i],
                                                     "') is not a llama.cpp token type (0 to 6)"));
    }
  }
  BpeTokenizerParts parts;
  parts.kind = BpePreTokenizerKind::kLlamaGguf;
  parts.vocab = data.tokens;
  absl::StrAppend(&parts.source, file, "#tokenizer");
  if (!data.merges.empty()) {
    // transformers prefers merges the file gives.
    FOCAL_RETURN_IF_ERROR(ParseGgufMerges(gguf, data, &parts));
  } else if (data.scores.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file,
                     ": tokenizer.ggml.scores is missing; a 'llama' (sentencepiece) "
                     "vocabulary needs them (its merges are derived from the scores)"));
  } else {
    FOCAL_ASSIGN_OR_RETURN(parts.merges, MergesFromScores(data.tokens, data.scores, file,
                                                          "tokenizer.ggml.tokens/scores"));
  }

  // content -> (id, special), in the order transformers adds them.
  absl::flat_hash_map<std::string, std::pair<int32_t, bool>> added;
  absl::flat_hash_map<absl::string_view, int32_t> ids;
  for (size_t i = 0; i < n; ++i) ids.emplace(data.tokens[i], static_cast<int32_t>(i));
  int32_t next_id = static_cast<int32_t>(n);
  for (const char* name : {"<s>", "</s>", "<unk>"}) {
    auto it = ids.find(name);
    added[name] = {it != ids.end() ? it->second : next_id++, true};
  }
  // `special` is what decoding skips: `tokenizers` keeps a token that was
  // once added as special in its special set even when it is added again as
  // a plain one (a user-defined "</s>" stays special).
  for (size_t i = 0; i < data.token_type.size(); ++i) {
    if (data.token_type[i] == kControl || data.token_type[i] == kUserDefined) {
      auto [it, inserted] = added.try_emplace(data.tokens[i], static_cast<int32_t>(i), false);
      it->second.second = it->second.second || data.token_type[i] == kControl;
    }
  }
  for (const std::optional<int64_t>& id :
       {data.bos_id, data.eos_id, data.unknown_id, data.padding_id}) {
    if (id.has_value()) added.try_emplace(data.tokens[*id], static_cast<int32_t>(*id), true);
  }
  for (const auto& [content, id_special] : added) {
    BpeAddedToken t;
    t.id = id_special.first;
    t.content = content;
    t.special = id_special.second;
    parts.added.push_back(std::move(t));
  }
  // New ids must come in the order they were given.
  std::sort(parts.added.begin(), parts.added.end(),
            [](const BpeAddedToken& a, const BpeAddedToken& b) { return a.id < b.id; });

  parts.bos_id = data.bos_id.has_value() ? static_cast<int32_t>(*data.bos_id) : -1;
  parts.eos_id = data.eos_id.has_value() ? static_cast<int32_t>(*data.eos_id) : -1;
  // transformers adds nothing (and says nothing) when the flag names a token
  // the file lacks.
  parts.add_bos = data.add_bos.value_or(true) && parts.bos_id >= 0;
  parts.add_eos = data.add_eos.value_or(false) && parts.eos_id >= 0;

  Sha256 identity;  // what the tokenizer is made of
  identity.Update("llama\n", 6);
  for (const std::string& t : data.tokens) {
    identity.Update(t);
    identity.Update("\n", 1);
  }
  for (float x : data.scores) identity.Update(&x, sizeof(x));
  for (int32_t t : data.token_type) identity.Update(&t, sizeof(t));
  for (const std::string& m : data.merges) {
    identity.Update(m);
    identity.Update("\n", 1);
  }
  for (const std::optional<int64_t>& id :
       {data.bos_id, data.eos_id, data.unknown_id, data.padding_id}) {
    const int64_t v = id.value_or(-1);
    identity.Update(&v, sizeof(v));
  }
  identity.Update(absl::StrCat(parts.add_bos, parts.add_eos));
  parts.sha256 = identity.HexDigest();
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tok, BpeTokenizer::FromParts(parts));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& gguf) {
  if (!gguf.Has("tokenizer.ggml.model")) {
    return absl::NotFoundError(
        absl::StrCat(gguf.path(), ": GGUF has no tokenizer (no tokenizer.ggml.model)"));
  }
  FOCAL_ASSIGN_OR_RETURN(GgufTokenizerData data, ReadGgufTokenizer(gguf));
  if (data.model == "gpt2") return LoadGgufBpe(gguf, data);
  if (data.model == "llama") return LoadGgufLlama(gguf, data);
  return absl::UnimplementedError(absl::StrCat(
      gguf.path(), ": the GGUF-embedded tokenizer model '", data.model,
      "' is not implemented (only 'gpt2', byte-level BPE, and 'llama', sentencepiece)"));
}

}  // namespace focal::model
