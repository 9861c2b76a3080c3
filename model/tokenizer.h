// SPDX-License-Identifier: Apache-2.0
// Tokenizer: a sentencepiece model with the HF Llama tokenizer's conventions
// (BOS prepended on request, no EOS appended, ids as in tokenizer.model).
#ifndef FOCAL_MODEL_TOKENIZER_H_
#define FOCAL_MODEL_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::model {

class SentencePieceAdapter;

class Tokenizer {
 public:
  // Loads `path` (a sentencepiece .model); errors name the file.
  static absl::StatusOr<Tokenizer> Load(absl::string_view path);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Token ids of `text`, with BOS first when `add_bos` (HF LlamaTokenizer's
  // add_bos_token; an empty text then gives just BOS).
  absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text, bool add_bos) const;
  // Text of `ids`; BOS/EOS/control ids produce no text.
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const;
  std::string IdToPiece(int32_t id) const;

  int32_t vocab_size() const;
  int32_t bos_id() const;  // -1 when the model has none
  int32_t eos_id() const;
  const std::string& path() const { return path_; }

 private:
  Tokenizer() = default;
  std::unique_ptr<SentencePieceAdapter> sp_;
  std::string path_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_TOKENIZER_H_
