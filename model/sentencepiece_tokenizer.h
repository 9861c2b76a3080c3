// SPDX-License-Identifier: Apache-2.0
// SentencePieceTokenizer: a sentencepiece .model with the HF Llama tokenizer's
// conventions (BOS prepended on request, no EOS appended, ids as in
// tokenizer.model; the encoding details are in sentencepiece_adapter.cc).
#ifndef FOCAL_MODEL_SENTENCEPIECE_TOKENIZER_H_
#define FOCAL_MODEL_SENTENCEPIECE_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/tokenizer.h"

namespace focal::model {

class SentencePieceAdapter;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads `path` (a sentencepiece .model); errors name the file.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Load(absl::string_view path);
  ~SentencePieceTokenizer() override;

  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text, bool add_bos) const override;
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  std::string IdToPiece(int32_t id) const override;

  int32_t vocab_size() const override;
  int32_t bos_id() const override;
  int32_t eos_id() const override;
  absl::string_view name() const override { return "sentencepiece"; }
  const std::string& path() const override { return path_; }
  const std::string& sha256() const override { return sha256_; }

 private:
  SentencePieceTokenizer() = default;
  std::unique_ptr<SentencePieceAdapter> sp_;
  std::string path_;
  std::string sha256_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_SENTENCEPIECE_TOKENIZER_H_
