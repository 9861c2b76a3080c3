// SPDX-License-Identifier: Apache-2.0
// GGUF files (versions 2 and 3, little-endian), memory-mapped and validated
// up front like safetensors: header, metadata of every value type, tensor
// infos, alignment and data ranges. All reads go through a bounds-checked
// cursor, so a damaged or hostile file gives an error naming the file and the
// key or tensor, never a read past the mapping.
#ifndef FOCAL_MODEL_GGUF_H_
#define FOCAL_MODEL_GGUF_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/file_util.h"

namespace focal::model {

// Tensor storage types, numbered as ggml numbers them (gaps are types ggml
// retired).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
};

// Storage layout of a type: `block_size` elements take `type_size` bytes.
struct GgmlTypeTraits {
  GgmlType type;
  const char* name;  // "Q4_K"
  int64_t block_size;
  int64_t type_size;
};
// nullptr for an id that is no known ggml type.
const GgmlTypeTraits* FindGgmlType(uint32_t id);
const char* GgmlTypeName(GgmlType type);

enum class GgufValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
const char* GgufValueTypeName(GgufValueType type);  // "uint32", "array", ...

// One metadata value. Strings and numeric array elements stay in the memory
// map (little-endian, possibly unaligned); the accessors decode them.
class GgufValue {
 public:
  GgufValueType type() const { return type_; }

  // Any integer type (not bool) whose value fits in int64 / uint64.
  std::optional<int64_t> AsInt() const;
  std::optional<uint64_t> AsUint() const;
  // float32 or float64.
  std::optional<double> AsFloat() const;
  std::optional<bool> AsBool() const;
  std::optional<absl::string_view> AsString() const;

  // Arrays. elem_type() and size() are meaningful only for kArray.
  GgufValueType elem_type() const { return elem_type_; }
  uint64_t size() const { return count_; }
  // Element i of an array (i < size()) as a scalar value, or, for arrays of
  // arrays, the nested array.
  GgufValue Element(uint64_t i) const;

  // "uint32", "array[string]", "array[array[string]]".
  std::string TypeString() const;

 private:
  friend class GgufParser;
  GgufValueType type_ = GgufValueType::kU8;
  const uint8_t* raw_ = nullptr;  // scalar bytes, or the first numeric element
  absl::string_view str_;         // kString
  GgufValueType elem_type_ = GgufValueType::kU8;
  uint64_t count_ = 0;
  // Arrays of strings and arrays: their elements, already parsed (their
  // sizes vary, so they cannot be found by index arithmetic). Shared so that
  // Element() of a nested array is cheap to copy.
  std::shared_ptr<const std::vector<GgufValue>> items_;
};

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  // ggml order: dims[0] is the innermost (contiguous) dimension.
  std::vector<int64_t> dims;
  int64_t num_elements = 0;
  uint64_t offset = 0;            // from the start of the data section
  const uint8_t* data = nullptr;  // into the memory map
  size_t bytes = 0;

  // Row-major shape (outermost first), as PyTorch and safetensors write it.
  std::vector<int64_t> shape() const { return {dims.rbegin(), dims.rend()}; }
};

class GgufFile {
 public:
  // Maps and validates `path`. InvalidArgument when it is not a GGUF file,
  // Unimplemented for an unsupported version, DataLoss for structural damage
  // (truncation, counts, lengths or offsets out of range, unknown types,
  // duplicates); messages name the file and the key or tensor.
  static absl::StatusOr<std::unique_ptr<GgufFile>> Open(absl::string_view path);

  const std::string& path() const { return file_.path(); }
  const MappedFile& file() const { return file_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the data section

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* Find(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }

  // Typed metadata. NotFound when the key is absent, InvalidArgument when its
  // type or value does not fit; messages name the file and the key. Integer
  // getters accept any integer type (ggml writers vary between u32, i32 and
  // u64) whose value fits the result; float getters accept float32 and
  // float64.
  absl::StatusOr<uint32_t> GetU32(absl::string_view key) const;
  absl::StatusOr<uint64_t> GetU64(absl::string_view key) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view key) const;
  absl::StatusOr<double> GetFloat(absl::string_view key) const;
  absl::StatusOr<bool> GetBool(absl::string_view key) const;
  absl::StatusOr<std::string> GetString(absl::string_view key) const;
  absl::StatusOr<std::vector<std::string>> GetStringArray(absl::string_view key) const;
  absl::StatusOr<std::vector<float>> GetF32Array(absl::string_view key) const;
  absl::StatusOr<std::vector<int32_t>> GetI32Array(absl::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> GetIntArray(absl::string_view key) const;

  // Tensors in file order.
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* FindTensor(absl::string_view name) const;

 private:
  friend class GgufParser;
  absl::StatusOr<const GgufValue*> Require(absl::string_view key) const;
  absl::Status TypeError(absl::string_view key, const GgufValue& v,
                         absl::string_view expected) const;

  MappedFile file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

// What a tokenizer built from a GGUF file needs (the tokenizer.ggml.* keys).
// Optional keys are empty / nullopt when absent.
struct GgufTokenizerData {
  std::string model;                // tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (BPE)
  std::string pre;                  // tokenizer.ggml.pre: the pre-tokenizer, e.g. "smollm"
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens
  std::vector<float> scores;        // tokenizer.ggml.scores
  std::vector<int32_t> token_type;  // tokenizer.ggml.token_type
  std::vector<std::string> merges;  // tokenizer.ggml.merges ("a b" per line)
  std::optional<int64_t> bos_id, eos_id, unknown_id, padding_id;
  std::optional<bool> add_bos, add_eos, add_space_prefix;
};

// Reads and checks the tokenizer keys: tokens present, scores and
// token_type as long as tokens, special ids inside the vocabulary.
absl::StatusOr<GgufTokenizerData> ReadGgufTokenizer(const GgufFile& file);

}  // namespace focal::model

#endif  // FOCAL_MODEL_GGUF_H_
