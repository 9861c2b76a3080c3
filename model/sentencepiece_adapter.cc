// SPDX-License-Identifier: Apache-2.0
// Keep absl out of this file (see the header).
//
// Encoding follows HF transformers' Llama tokenizer (what lm-eval scores
// with), which converts the sentencepiece model into: no whitespace
// collapsing, every ' ' becomes '▁', and one '▁' is prepended when the
// model's add_dummy_prefix is set and the text does not already start with a
// space. Raw sentencepiece differs when its normalizer has
// remove_extra_whitespaces (it collapses runs of spaces and drops trailing
// ones: tok512 has it, Llama 2's tokenizer does not) and for texts that start
// with a space (it always adds the dummy prefix). We therefore load a second
// copy of the model with both normalizer flags off for encoding; decoding
// uses the model as shipped.
#include "model/sentencepiece_adapter.h"

#include <sentencepiece_processor.h>

namespace focal::model {
namespace {

// Minimal protobuf wire-format reading (std only): sentencepiece's ModelProto
// field 3 is normalizer_spec, whose field 3 is add_dummy_prefix (default true).
bool ReadVarint(const std::string& s, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[pos++]);
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Walks the fields of a serialized message; calls fn(field, wire_type,
// varint value, payload) for each. Returns false on malformed input.
template <typename Fn>
bool ForEachField(const std::string& s, Fn fn) {
  size_t pos = 0;
  while (pos < s.size()) {
    uint64_t key, v = 0;
    if (!ReadVarint(s, pos, key)) return false;
    const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
    std::string payload;
    if (wire == 0) {
      if (!ReadVarint(s, pos, v)) return false;
    } else if (wire == 1) {
      pos += 8;
    } else if (wire == 5) {
      pos += 4;
    } else if (wire == 2) {
      uint64_t len;
      if (!ReadVarint(s, pos, len) || len > s.size() - pos) return false;
      payload = s.substr(pos, len);
      pos += len;
    } else {
      return false;
    }
    if (pos > s.size()) return false;
    fn(field, wire, v, payload);
  }
  return true;
}

bool AddDummyPrefix(const std::string& model) {
  bool dummy = true;  // proto2 default
  ForEachField(model, [&](int f, int w, uint64_t, const std::string& spec) {
    if (f != 3 || w != 2) return;
    ForEachField(spec, [&](int g, int gw, uint64_t v, const std::string&) {
      if (g == 3 && gw == 0) dummy = v != 0;
    });
  });
  return dummy;
}

// sentencepiece keeps the pieces in a trie whose builder (Darts) throws on
// a piece holding a NUL byte: an abort here, where nothing catches. Returns
// what is wrong with the model's pieces, or "" when nothing is.
std::string CheckPieces(const std::string& model) {
  std::string problem;
  int64_t index = 0;
  const bool parsed = ForEachField(model, [&](int f, int w, uint64_t, const std::string& msg) {
    if (f != 1 || w != 2) return;  // ModelProto.pieces
    std::string piece;
    const bool ok = ForEachField(msg, [&](int g, int gw, uint64_t, const std::string& text) {
      if (g == 1 && gw == 2) piece = text;  // SentencePiece.piece; the last one counts
    });
    if (problem.empty() && !ok) problem = "pieces[" + std::to_string(index) + "] is malformed";
    if (problem.empty() && piece.find('\0') != std::string::npos) {
      problem = "pieces[" + std::to_string(index) + "] contains a NUL byte";
    }
    ++index;
  });
  if (problem.empty() && !parsed) problem = "not a serialized sentencepiece model";
  return problem;
}

}  // namespace

struct SentencePieceAdapter::Impl {
  sentencepiece::SentencePieceProcessor encoder;  // HF-style normalizer
  sentencepiece::SentencePieceProcessor decoder;  // the model as shipped
  bool add_dummy_prefix = true;
};

SentencePieceAdapter::SentencePieceAdapter() : impl_(new Impl) {}
SentencePieceAdapter::~SentencePieceAdapter() = default;

std::unique_ptr<SentencePieceAdapter> SentencePieceAdapter::Load(const std::string& model,
                                                                 std::string* error) {
  if (std::string problem = CheckPieces(model); !problem.empty()) {
    *error = problem;
    return nullptr;
  }
  std::unique_ptr<SentencePieceAdapter> a(new SentencePieceAdapter());
  auto st = a->impl_->decoder.LoadFromSerializedProto(model);
  if (!st.ok()) {
    *error = st.ToString();
    return nullptr;
  }
  a->impl_->add_dummy_prefix = AddDummyPrefix(model);
  // A repeated embedded message merges into the earlier one, so appending
  // normalizer_spec {add_dummy_prefix: false, remove_extra_whitespaces: false}
  // overrides just those two flags.
  const std::string overrides = std::string("\x1a\x04\x18\x00\x20\x00", 6);
  st = a->impl_->encoder.LoadFromSerializedProto(model + overrides);
  if (!st.ok()) {
    *error = st.ToString();
    return nullptr;
  }
  return a;
}

bool SentencePieceAdapter::Encode(const std::string& text, std::vector<int32_t>* ids,
                                  std::string* error) const {
  ids->clear();
  if (text.empty()) return true;
  const bool prepend = impl_->add_dummy_prefix && text[0] != ' ';
  std::vector<int> out;
  auto st = impl_->encoder.Encode(prepend ? " " + text : text, &out);
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
  auto st = impl_->decoder.Decode(in, text);
  if (!st.ok()) {
    *error = st.ToString();
    return false;
  }
  return true;
}

std::string SentencePieceAdapter::IdToPiece(int32_t id) const {
  return impl_->decoder.IdToPiece(id);
}

int32_t SentencePieceAdapter::vocab_size() const { return impl_->decoder.GetPieceSize(); }
int32_t SentencePieceAdapter::bos_id() const { return impl_->decoder.bos_id(); }
int32_t SentencePieceAdapter::eos_id() const { return impl_->decoder.eos_id(); }
int32_t SentencePieceAdapter::unk_id() const { return impl_->decoder.unk_id(); }
int32_t SentencePieceAdapter::pad_id() const { return impl_->decoder.pad_id(); }

}  // namespace focal::model
