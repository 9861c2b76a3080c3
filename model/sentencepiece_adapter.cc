// SPDX-License-Identifier: Apache-2.0
// Keep absl out of this file (see the header).
#include "model/sentencepiece_adapter.h"

#include <sentencepiece_processor.h>

namespace focal::model {

struct SentencePieceAdapter::Impl {
  sentencepiece::SentencePieceProcessor sp;
};

SentencePieceAdapter::SentencePieceAdapter() : impl_(new Impl) {}
SentencePieceAdapter::~SentencePieceAdapter() = default;

std::unique_ptr<SentencePieceAdapter> SentencePieceAdapter::Load(const std::string& path,
                                                                 std::string* error) {
  std::unique_ptr<SentencePieceAdapter> a(new SentencePieceAdapter());
  auto st = a->impl_->sp.Load(path);
  if (!st.ok()) {
    *error = st.ToString();
    return nullptr;
  }
  return a;
}

bool SentencePieceAdapter::Encode(const std::string& text, std::vector<int32_t>* ids,
                                  std::string* error) const {
  std::vector<int> out;
  auto st = impl_->sp.Encode(text, &out);
  if (!st.ok()) {
    *error = st.ToString();
    return false;
  }
  ids->assign(out.begin(), out.end());
  return true;
}

bool SentencePieceAdapter::Decode(const std::vector<int32_t>& ids, std::string* text,
                                  std::string* error) const {
  std::vector<int> in(ids.begin(), ids.end());
  auto st = impl_->sp.Decode(in, text);
  if (!st.ok()) {
    *error = st.ToString();
    return false;
  }
  return true;
}

std::string SentencePieceAdapter::IdToPiece(int32_t id) const { return impl_->sp.IdToPiece(id); }

int32_t SentencePieceAdapter::vocab_size() const { return impl_->sp.GetPieceSize(); }
int32_t SentencePieceAdapter::bos_id() const { return impl_->sp.bos_id(); }
int32_t SentencePieceAdapter::eos_id() const { return impl_->sp.eos_id(); }
int32_t SentencePieceAdapter::unk_id() const { return impl_->sp.unk_id(); }
int32_t SentencePieceAdapter::pad_id() const { return impl_->sp.pad_id(); }

}  // namespace focal::model
