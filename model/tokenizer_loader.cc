// SPDX-License-Identifier: Apache-2.0
#include "model/tokenizer_loader.h"

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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
    return absl::UnimplementedError(
        absl::StrCat(json_path,
                     ": the tokenizer.json (BPE) loader is not implemented yet; only a "
                     "sentencepiece tokenizer.model can be loaded"));
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
  FOCAL_ASSIGN_OR_RETURN(const std::string kind, gguf.GetString("tokenizer.ggml.model"));
  return absl::UnimplementedError(absl::StrCat(
      gguf.path(), ": the GGUF-embedded tokenizer (tokenizer.ggml.model '", kind,
      "') is not implemented yet"));
}

}  // namespace focal::model
