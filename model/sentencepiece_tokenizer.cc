// SPDX-License-Identifier: Apache-2.0
#include "model/sentencepiece_tokenizer.h"

#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/sentencepiece_adapter.h"

namespace focal::model {

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Load(
    absl::string_view path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::string(path), ec)) {
    return absl::NotFoundError(absl::StrCat("tokenizer '", path, "' does not exist"));
  }
  // One read serves both the hash and the model, so they cannot disagree.
  FOCAL_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  std::string error;
  auto sp = SentencePieceAdapter::Load(bytes, &error);
  if (sp == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load sentencepiece tokenizer '", path, "': ", error));
  }
  std::unique_ptr<SentencePieceTokenizer> t(new SentencePieceTokenizer());
  t->sp_ = std::move(sp);
  t->path_ = std::string(path);
  t->sha256_ = Sha256Hex(bytes);
  return t;
}

absl::StatusOr<std::vector<int32_t>> SentencePieceTokenizer::Encode(absl::string_view text,
                                                                    bool add_bos) const {
  std::vector<int32_t> ids;
  std::string error;
  if (!text.empty() && !sp_->Encode(std::string(text), &ids, &error)) {
    return absl::InternalError(absl::StrCat("sentencepiece encode failed: ", error));
  }
  if (add_bos) {
    if (bos_id() < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("tokenizer '", path_, "' has no BOS token but BOS was requested"));
    }
    ids.insert(ids.begin(), bos_id());
  }
  return ids;
}

absl::StatusOr<std::string> SentencePieceTokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string text, error;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is outside the ", vocab_size(), "-piece vocabulary"));
    }
  }
  if (!sp_->Decode(std::vector<int32_t>(ids.begin(), ids.end()), &text, &error)) {
    return absl::InternalError(absl::StrCat("sentencepiece decode failed: ", error));
  }
  return text;
}

std::string SentencePieceTokenizer::IdToPiece(int32_t id) const {
  // sentencepiece aborts (a failed CHECK) on an id outside the vocabulary,
  // e.g. bos_id() -1 of a model without BOS.
  if (id < 0 || id >= vocab_size()) return "";
  return sp_->IdToPiece(id);
}
int32_t SentencePieceTokenizer::vocab_size() const { return sp_->vocab_size(); }
int32_t SentencePieceTokenizer::bos_id() const { return sp_->bos_id(); }
int32_t SentencePieceTokenizer::eos_id() const { return sp_->eos_id(); }

}  // namespace focal::model
