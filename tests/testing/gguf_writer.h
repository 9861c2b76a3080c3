// SPDX-License-Identifier: Apache-2.0
// GgufBuilder: writes GGUF files byte by byte for tests, well-formed by
// default, with every count, type, length and offset open to override so
// each validation error can be provoked. Independent of model/gguf.* (only
// the format's numbers), so the reader is not checked against itself.
#ifndef FOCAL_TESTS_TESTING_GGUF_WRITER_H_
#define FOCAL_TESTS_TESTING_GGUF_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace focal::testing {

// GGUF value type ids.
enum GgufTypeId : uint32_t {
  kGgufU8 = 0,
  kGgufI8 = 1,
  kGgufU16 = 2,
  kGgufI16 = 3,
  kGgufU32 = 4,
  kGgufI32 = 5,
  kGgufF32 = 6,
  kGgufBool = 7,
  kGgufString = 8,
  kGgufArray = 9,
  kGgufU64 = 10,
  kGgufI64 = 11,
  kGgufF64 = 12,
};

// Little-endian encodings.
std::string GgufU32(uint32_t v);
std::string GgufU64(uint64_t v);
std::string GgufStr(const std::string& s);  // u64 length + bytes

class GgufBuilder {
 public:
  struct Tensor {
    std::string name;
    uint32_t type = 0;               // ggml type id
    std::vector<uint64_t> dims;      // ggml order: innermost first
    std::string data;                // stored bytes
    std::optional<uint64_t> offset;  // default: packed at the alignment
    std::optional<uint32_t> n_dims;  // default: dims.size()
  };

  std::string magic = "GGUF";
  uint32_t version = 3;
  std::optional<uint64_t> tensor_count;  // default: the tensors added
  std::optional<uint64_t> kv_count;      // default: the entries added
  // Used for the layout; SetAlignment also writes general.alignment.
  uint64_t alignment = 32;

  // A metadata entry: type id and the encoded value (after the type).
  void AddRaw(const std::string& key, uint32_t type, const std::string& value);
  void AddU8(const std::string& key, uint8_t v);
  void AddI8(const std::string& key, int8_t v);
  void AddU16(const std::string& key, uint16_t v);
  void AddI16(const std::string& key, int16_t v);
  void AddU32(const std::string& key, uint32_t v);
  void AddI32(const std::string& key, int32_t v);
  void AddU64(const std::string& key, uint64_t v);
  void AddI64(const std::string& key, int64_t v);
  void AddF32(const std::string& key, float v);
  void AddF64(const std::string& key, double v);
  void AddBool(const std::string& key, bool v);
  void AddString(const std::string& key, const std::string& v);
  void AddStringArray(const std::string& key, const std::vector<std::string>& v);
  void AddF32Array(const std::string& key, const std::vector<float>& v);
  void AddF64Array(const std::string& key, const std::vector<double>& v);
  void AddI32Array(const std::string& key, const std::vector<int32_t>& v);
  void SetAlignment(uint32_t a);

  Tensor& AddTensor(const std::string& name, uint32_t type, std::vector<uint64_t> dims,
                    std::string data);
  // An F32 tensor of row-major `shape` (outermost first).
  Tensor& AddF32Tensor(const std::string& name, const std::vector<int64_t>& shape,
                       const std::vector<float>& values);
  std::vector<Tensor>& tensors() { return tensors_; }

  // The file's bytes.
  std::string Build() const;
  // Build() written to `path`.
  void WriteTo(const std::string& path) const;

 private:
  std::vector<std::string> kvs_;  // encoded entries
  std::vector<Tensor> tensors_;
};

}  // namespace focal::testing

#endif  // FOCAL_TESTS_TESTING_GGUF_WRITER_H_
