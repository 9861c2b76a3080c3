// SPDX-License-Identifier: Apache-2.0
#include "model/tokenizer_loader.h"

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/bpe_tokenizer.h"
#include "model/sentencepiece_tokenizer.h"

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

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& gguf) {
  if (!gguf.Has("tokenizer.ggml.model")) {
    return absl::NotFoundError(
        absl::StrCat(gguf.path(), ": GGUF has no tokenizer (no tokenizer.ggml.model)"));
  }
  FOCAL_ASSIGN_OR_RETURN(GgufTokenizerData data, ReadGgufTokenizer(gguf));
  if (data.model != "gpt2") {
    // "llama" vocabularies are sentencepiece scores, not merges.
    return absl::UnimplementedError(absl::StrCat(
        gguf.path(), ": the GGUF-embedded tokenizer model '", data.model,
        "' is not implemented (only 'gpt2', byte-level BPE)"));
  }
  BpeTokenizerParts parts;
  auto kind = BpePreTokenizerKindFromGgufPre(data.pre.empty() ? "default" : data.pre);
  if (!kind.ok()) return Annotate(kind.status(), absl::StrCat(gguf.path(), ": tokenizer.ggml.pre"));
  parts.kind = *kind;
  parts.vocab = data.tokens;
  Sha256 identity;  // the tokenizer's own content, apart from the weights
  absl::StrAppend(&parts.source, gguf.path(), "#tokenizer");
  for (size_t i = 0; i < data.merges.size(); ++i) {
    const std::string& m = data.merges[i];
    const size_t sp = m.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == m.size() ||
        m.find(' ', sp + 1) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": tokenizer.ggml.merges[", i,
                                                     "] '", m, "' is not two tokens"));
    }
    parts.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    identity.Update(m);
    identity.Update("\n", 1);
  }
  for (size_t id = 0; id < data.tokens.size(); ++id) {
    identity.Update(data.tokens[id]);
    identity.Update("\n", 1);
    const int32_t type = id < data.token_type.size() ? data.token_type[id] : 1;
    // llama.cpp's token types: 3 control (special), 4 user-defined (added, not special).
    if (type == 3 || type == 4) {
      BpeAddedToken t;
      t.id = static_cast<int32_t>(id);
      t.content = data.tokens[id];
      t.special = type == 3;
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

}  // namespace focal::model
