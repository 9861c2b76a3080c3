// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/gguf_writer.h"

#include <cstring>

#include "tests/testing/test_util.h"

namespace focal::testing {
namespace {

template <typename T>
std::string Bytes(T v) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));  // little-endian hosts only, as the reader
  return out;
}

}  // namespace

std::string GgufU32(uint32_t v) { return Bytes(v); }
std::string GgufU64(uint64_t v) { return Bytes(v); }
std::string GgufStr(const std::string& s) { return GgufU64(s.size()) + s; }

void GgufBuilder::AddRaw(const std::string& key, uint32_t type, const std::string& value) {
  kvs_.push_back(GgufStr(key) + GgufU32(type) + value);
}
void GgufBuilder::AddU8(const std::string& k, uint8_t v) { AddRaw(k, kGgufU8, Bytes(v)); }
void GgufBuilder::AddI8(const std::string& k, int8_t v) { AddRaw(k, kGgufI8, Bytes(v)); }
void GgufBuilder::AddU16(const std::string& k, uint16_t v) { AddRaw(k, kGgufU16, Bytes(v)); }
void GgufBuilder::AddI16(const std::string& k, int16_t v) { AddRaw(k, kGgufI16, Bytes(v)); }
void GgufBuilder::AddU32(const std::string& k, uint32_t v) { AddRaw(k, kGgufU32, Bytes(v)); }
void GgufBuilder::AddI32(const std::string& k, int32_t v) { AddRaw(k, kGgufI32, Bytes(v)); }
void GgufBuilder::AddU64(const std::string& k, uint64_t v) { AddRaw(k, kGgufU64, Bytes(v)); }
void GgufBuilder::AddI64(const std::string& k, int64_t v) { AddRaw(k, kGgufI64, Bytes(v)); }
void GgufBuilder::AddF32(const std::string& k, float v) { AddRaw(k, kGgufF32, Bytes(v)); }
void GgufBuilder::AddF64(const std::string& k, double v) { AddRaw(k, kGgufF64, Bytes(v)); }
void GgufBuilder::AddBool(const std::string& k, bool v) {
  AddRaw(k, kGgufBool, std::string(1, v ? '\1' : '\0'));
}
void GgufBuilder::AddString(const std::string& k, const std::string& v) {
  AddRaw(k, kGgufString, GgufStr(v));
}

void GgufBuilder::AddStringArray(const std::string& k, const std::vector<std::string>& v) {
  std::string body = GgufU32(kGgufString) + GgufU64(v.size());
  for (const std::string& s : v) body += GgufStr(s);
  AddRaw(k, kGgufArray, body);
}

void GgufBuilder::AddF32Array(const std::string& k, const std::vector<float>& v) {
  std::string body = GgufU32(kGgufF32) + GgufU64(v.size());
  for (float x : v) body += Bytes(x);
  AddRaw(k, kGgufArray, body);
}

void GgufBuilder::AddF64Array(const std::string& k, const std::vector<double>& v) {
  std::string body = GgufU32(kGgufF64) + GgufU64(v.size());
  for (double x : v) body += Bytes(x);
  AddRaw(k, kGgufArray, body);
}

void GgufBuilder::AddI32Array(const std::string& k, const std::vector<int32_t>& v) {
  std::string body = GgufU32(kGgufI32) + GgufU64(v.size());
  for (int32_t x : v) body += Bytes(x);
  AddRaw(k, kGgufArray, body);
}

void GgufBuilder::SetAlignment(uint32_t a) {
  alignment = a;
  AddU32("general.alignment", a);
}

GgufBuilder::Tensor& GgufBuilder::AddTensor(const std::string& name, uint32_t type,
                                            std::vector<uint64_t> dims, std::string data) {
  tensors_.push_back(
      Tensor{name, type, std::move(dims), std::move(data), std::nullopt, std::nullopt});
  return tensors_.back();
}

GgufBuilder::Tensor& GgufBuilder::AddF32Tensor(const std::string& name,
                                               const std::vector<int64_t>& shape,
                                               const std::vector<float>& values) {
  std::vector<uint64_t> dims(shape.rbegin(), shape.rend());
  std::string data(values.size() * 4, '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return AddTensor(name, /*F32=*/0, std::move(dims), std::move(data));
}

std::string GgufBuilder::Build() const {
  auto pad = [&](uint64_t n) { return (n + alignment - 1) / alignment * alignment; };
  std::string out = magic + GgufU32(version) + GgufU64(tensor_count.value_or(tensors_.size())) +
                    GgufU64(kv_count.value_or(kvs_.size()));
  for (const std::string& kv : kvs_) out += kv;
  // Packed layout: each tensor at the next multiple of the alignment.
  std::vector<uint64_t> packed;
  uint64_t next = 0;
  for (const Tensor& t : tensors_) {
    packed.push_back(next);
    next = pad(next + t.data.size());
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    out += GgufStr(t.name) + GgufU32(t.n_dims.value_or(static_cast<uint32_t>(t.dims.size())));
    for (uint64_t d : t.dims) out += GgufU64(d);
    out += GgufU32(t.type) + GgufU64(t.offset.value_or(packed[i]));
  }
  out.resize(pad(out.size()), '\0');
  const size_t data_start = out.size();
  out.resize(data_start + next, '\0');
  // Data goes where the packed layout puts it, whatever offset was claimed.
  for (size_t i = 0; i < tensors_.size(); ++i) {
    out.replace(data_start + packed[i], tensors_[i].data.size(), tensors_[i].data);
  }
  return out;
}

void GgufBuilder::WriteTo(const std::string& path) const { WriteStringToFile(path, Build()); }

}  // namespace focal::testing
