// SPDX-License-Identifier: Apache-2.0
#include "model/tokenizer.h"

#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "model/sentencepiece_adapter.h"

namespace focal::model {

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

absl::StatusOr<Tokenizer> Tokenizer::Load(absl::string_view path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::string(path), ec)) {
    return absl::NotFoundError(absl::StrCat("tokenizer '", path, "' does not exist"));
  }
  std::string error;
  auto sp = SentencePieceAdapter::Load(std::string(path), &error);
  if (sp == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load sentencepiece tokenizer '", path, "': ", error));
  }
  Tokenizer t;
  t.sp_ = std::move(sp);
  t.path_ = std::string(path);
  return t;
}

absl::StatusOr<std::vector<int32_t>> Tokenizer::Encode(absl::string_view text,
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

absl::StatusOr<std::string> Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::string text, error;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", id, " is outside the ",
                                                     vocab_size(), "-piece vocabulary"));
    }
  }
  if (!sp_->Decode(std::vector<int32_t>(ids.begin(), ids.end()), &text, &error)) {
    return absl::InternalError(absl::StrCat("sentencepiece decode failed: ", error));
  }
  return text;
}

std::string Tokenizer::IdToPiece(int32_t id) const { return sp_->IdToPiece(id); }
int32_t Tokenizer::vocab_size() const { return sp_->vocab_size(); }
int32_t Tokenizer::bos_id() const { return sp_->bos_id(); }
int32_t Tokenizer::eos_id() const { return sp_->eos_id(); }

}  // namespace focal::model
