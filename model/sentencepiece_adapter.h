// SPDX-License-Identifier: Apache-2.0
// The ONLY translation unit that includes sentencepiece_processor.h:
// sentencepiece 0.1.97 declares `namespace absl { using std::string_view; }`,
// which clashes with Debian's Abseil. This header uses std types only.
#ifndef FOCAL_MODEL_SENTENCEPIECE_ADAPTER_H_
#define FOCAL_MODEL_SENTENCEPIECE_ADAPTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace focal::model {

class SentencePieceAdapter {
 public:
  // Loads the bytes of a .model file (the caller reads them once, so that
  // what it hashes is what was loaded); on failure returns nullptr and sets
  // *error.
  static std::unique_ptr<SentencePieceAdapter> Load(const std::string& model, std::string* error);
  ~SentencePieceAdapter();

  // Returns false and sets *error on failure.
  bool Encode(const std::string& text, std::vector<int32_t>* ids, std::string* error) const;
  bool Decode(const std::vector<int32_t>& ids, std::string* text, std::string* error) const;
  std::string IdToPiece(int32_t id) const;
  int32_t vocab_size() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  int32_t unk_id() const;
  int32_t pad_id() const;

 private:
  SentencePieceAdapter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_SENTENCEPIECE_ADAPTER_H_
