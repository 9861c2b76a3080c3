// SPDX-License-Identifier: Apache-2.0
// Tokenizer: what the harness needs from a model's tokenizer, whatever its
// file format. Implementations reproduce the HF transformers tokenizer of the
// checkpoint (what lm-eval scores with), so token ids match lm-eval's.
// LoadTokenizer (model/tokenizer_loader.h) picks the implementation.
#ifndef FOCAL_MODEL_TOKENIZER_H_
#define FOCAL_MODEL_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::model {

class Tokenizer {
 public:
  Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;
  virtual ~Tokenizer() = default;

  // Token ids of `text` as the HF tokenizer encodes it (no whitespace
  // collapsing, no EOS appended), with BOS first when `add_bos` (HF's
  // add_bos_token; an empty text then gives just BOS). FailedPrecondition
  // when BOS is requested but the tokenizer has none.
  virtual absl::StatusOr<std::vector<int32_t>> Encode(absl::string_view text,
                                                      bool add_bos) const = 0;
  // Text of `ids`; BOS/EOS/control ids produce no text. InvalidArgument for
  // an id outside the vocabulary.
  virtual absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const = 0;
  virtual std::string IdToPiece(int32_t id) const = 0;
  // Whether `id` names a token (a tokenizer.json vocabulary may have gaps).
  virtual bool HasToken(int32_t id) const { return id >= 0 && id < vocab_size(); }
  // Text of ids a model generated: ids the tokenizer lacks give no text, as
  // HF's tokenizers decode them. A model's embedding may be padded past its
  // tokenizer (e.g. to a multiple of 64 rows), and greedy decoding can land
  // there; Decode would refuse the whole sequence.
  absl::StatusOr<std::string> DecodeGenerated(absl::Span<const int32_t> ids) const {
    std::vector<int32_t> known;
    known.reserve(ids.size());
    for (int32_t id : ids) {
      if (HasToken(id)) known.push_back(id);
    }
    return Decode(known);
  }

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 when there is none
  virtual int32_t eos_id() const = 0;  // -1 when there is none
  // Whether the tokenizer's own convention prepends BOS (HF's
  // add_special_tokens / add_bos_token): `--add-bos auto` follows it, as
  // lm-eval's HF backend does. HF's Llama tokenizer does whenever it has a BOS.
  virtual bool adds_bos() const { return bos_id() >= 0; }
  // The kind of tokenizer, e.g. "sentencepiece" (inspect output, reports).
  virtual absl::string_view name() const = 0;
  // The file it was loaded from.
  virtual const std::string& path() const = 0;
  // Hex SHA-256 of the bytes it was loaded from, computed once at load:
  // identifies the tokenizer in results and cache keys.
  virtual const std::string& sha256() const = 0;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_TOKENIZER_H_
