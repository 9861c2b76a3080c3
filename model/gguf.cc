// SPDX-License-Identifier: Apache-2.0
// Layout (all little-endian): "GGUF", u32 version, u64 tensor count, u64
// metadata count; metadata entries (string key, u32 value type, value); tensor
// infos (string name, u32 n_dims, u64 dims[n_dims] innermost first, u32 ggml
// type, u64 offset); padding to the alignment; the data section. A string is
// a u64 byte length and the bytes; an array is a u32 element type, a u64
// count and the elements. Typed access to the metadata and the tokenizer
// keys: gguf_metadata.cc.
#include "model/gguf.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace focal::model {

static_assert(std::endian::native == std::endian::little,
              "GGUF values are decoded in place, which assumes a little-endian host");

namespace {

constexpr GgmlTypeTraits kGgmlTypes[] = {
    {GgmlType::kF32, "F32", 1, 4},
    {GgmlType::kF16, "F16", 1, 2},
    {GgmlType::kQ4_0, "Q4_0", 32, 18},
    {GgmlType::kQ4_1, "Q4_1", 32, 20},
    {GgmlType::kQ5_0, "Q5_0", 32, 22},
    {GgmlType::kQ5_1, "Q5_1", 32, 24},
    {GgmlType::kQ8_0, "Q8_0", 32, 34},
    {GgmlType::kQ8_1, "Q8_1", 32, 40},
    {GgmlType::kQ2_K, "Q2_K", 256, 84},
    {GgmlType::kQ3_K, "Q3_K", 256, 110},
    {GgmlType::kQ4_K, "Q4_K", 256, 144},
    {GgmlType::kQ5_K, "Q5_K", 256, 176},
    {GgmlType::kQ6_K, "Q6_K", 256, 210},
    {GgmlType::kQ8_K, "Q8_K", 256, 292},
    {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::kIQ1_S, "IQ1_S", 256, 50},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::kIQ3_S, "IQ3_S", 256, 110},
    {GgmlType::kIQ2_S, "IQ2_S", 256, 82},
    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::kI8, "I8", 1, 1},
    {GgmlType::kI16, "I16", 1, 2},
    {GgmlType::kI32, "I32", 1, 4},
    {GgmlType::kI64, "I64", 1, 8},
    {GgmlType::kF64, "F64", 1, 8},
    {GgmlType::kIQ1_M, "IQ1_M", 256, 56},
    {GgmlType::kBF16, "BF16", 1, 2},
    {GgmlType::kTQ1_0, "TQ1_0", 256, 54},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66},
    {GgmlType::kMXFP4, "MXFP4", 32, 17},
    {GgmlType::kNVFP4, "NVFP4", 64, 36},
    {GgmlType::kQ1_0, "Q1_0", 128, 18},
};

// The format has no limit; ggml's own reader allows 4 dimensions.
constexpr uint32_t kMaxDims = 4;
// Arrays of arrays nest; a hostile file must not recurse without bound.
constexpr int kMaxArrayDepth = 8;
// Smallest encodings, used to bound counts by the bytes left: a metadata
// entry is an empty key (8), a type (4) and a 1-byte value; a tensor info
// an empty name (8), n_dims (4), one dim (8), a type (4) and an offset (8).
constexpr uint64_t kMinKvBytes = 13;
constexpr uint64_t kMinTensorInfoBytes = 32;

// Bytes of a fixed-size value type; 0 for strings and arrays, -1 if unknown.
int ScalarSize(uint32_t t) {
  switch (static_cast<GgufValueType>(t)) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kU16:
    case GgufValueType::kI16:
      return 2;
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kF32:
      return 4;
    case GgufValueType::kU64:
    case GgufValueType::kI64:
    case GgufValueType::kF64:
      return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return 0;
  }
  return -1;
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

const GgmlTypeTraits* FindGgmlType(uint32_t id) {
  for (const GgmlTypeTraits& t : kGgmlTypes) {
    if (static_cast<uint32_t>(t.type) == id) return &t;
  }
  return nullptr;
}

const char* GgmlTypeName(GgmlType type) {
  const GgmlTypeTraits* t = FindGgmlType(static_cast<uint32_t>(type));
  return t == nullptr ? "?" : t->name;
}

const char* GgufValueTypeName(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8:
      return "uint8";
    case GgufValueType::kI8:
      return "int8";
    case GgufValueType::kU16:
      return "uint16";
    case GgufValueType::kI16:
      return "int16";
    case GgufValueType::kU32:
      return "uint32";
    case GgufValueType::kI32:
      return "int32";
    case GgufValueType::kF32:
      return "float32";
    case GgufValueType::kBool:
      return "bool";
    case GgufValueType::kString:
      return "string";
    case GgufValueType::kArray:
      return "array";
    case GgufValueType::kU64:
      return "uint64";
    case GgufValueType::kI64:
      return "int64";
    case GgufValueType::kF64:
      return "float64";
  }
  return "?";
}

// --- GgufValue ---------------------------------------------------------------

std::optional<int64_t> GgufValue::AsInt() const {
  switch (type_) {
    case GgufValueType::kU8:
      return Load<uint8_t>(raw_);
    case GgufValueType::kI8:
      return Load<int8_t>(raw_);
    case GgufValueType::kU16:
      return Load<uint16_t>(raw_);
    case GgufValueType::kI16:
      return Load<int16_t>(raw_);
    case GgufValueType::kU32:
      return Load<uint32_t>(raw_);
    case GgufValueType::kI32:
      return Load<int32_t>(raw_);
    case GgufValueType::kI64:
      return Load<int64_t>(raw_);
    case GgufValueType::kU64: {
      const uint64_t v = Load<uint64_t>(raw_);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> GgufValue::AsUint() const {
  if (type_ == GgufValueType::kU64) return Load<uint64_t>(raw_);
  std::optional<int64_t> v = AsInt();
  if (!v.has_value() || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<double> GgufValue::AsFloat() const {
  if (type_ == GgufValueType::kF32) return Load<float>(raw_);
  if (type_ == GgufValueType::kF64) return Load<double>(raw_);
  return std::nullopt;
}

std::optional<bool> GgufValue::AsBool() const {
  // Any non-zero byte is true (never loaded as a C++ bool: 2 would be UB).
  if (type_ == GgufValueType::kBool) return raw_[0] != 0;
  return std::nullopt;
}

std::optional<absl::string_view> GgufValue::AsString() const {
  if (type_ == GgufValueType::kString) return str_;
  return std::nullopt;
}

GgufValue GgufValue::Element(uint64_t i) const {
  if (items_ != nullptr) return (*items_)[i];
  GgufValue v;
  v.type_ = elem_type_;
  v.raw_ = raw_ + i * static_cast<uint64_t>(ScalarSize(static_cast<uint32_t>(elem_type_)));
  return v;
}

std::string GgufValue::TypeString() const {
  if (type_ != GgufValueType::kArray) return GgufValueTypeName(type_);
  std::string inner = GgufValueTypeName(elem_type_);
  if (elem_type_ == GgufValueType::kArray) {
    inner = count_ > 0 ? Element(0).TypeString() : "array";
  }
  return absl::StrCat("array[", inner, "]");
}

// --- Parsing -----------------------------------------------------------------

class GgufParser {
 public:
  explicit GgufParser(GgufFile& f)
      : f_(f), base_(f.file_.data()), size_(f.file_.size()), path_(f.file_.path()) {}

  absl::Status Parse() {
    FOCAL_RETURN_IF_ERROR(Need(4, "the magic"));
    if (std::memcmp(base_, "GGUF", 4) != 0) {
      std::string shown;
      for (int i = 0; i < 4; ++i) {
        const char c = static_cast<char>(base_[i]);
        shown += (c >= 0x20 && c < 0x7F)
                     ? std::string(1, c)
                     : absl::StrCat("\\x", absl::Hex(base_[i], absl::kZeroPad2));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": not a GGUF file (magic '", shown, "', expected 'GGUF')"));
    }
    pos_ = 4;
    FOCAL_ASSIGN_OR_RETURN(const uint32_t version, U32("the version"));
    if (version == 0x02000000u || version == 0x03000000u) {
      return absl::UnimplementedError(
          absl::StrCat(path_, ": big-endian GGUF files are not supported"));
    }
    if (version != 2 && version != 3) {
      return absl::UnimplementedError(
          absl::StrCat(path_, ": GGUF version ", version, " is not supported (2 and 3 are)"));
    }
    f_.version_ = version;
    FOCAL_ASSIGN_OR_RETURN(const uint64_t n_tensors, U64("the tensor count"));
    FOCAL_ASSIGN_OR_RETURN(const uint64_t n_kv, U64("the metadata count"));
    // Counts are bounded by the bytes left, so nothing below reserves or
    // loops more than the file can hold.
    if (n_kv > Remaining() / kMinKvBytes) {
      return Loss(absl::StrCat("metadata count ", n_kv, " is out of range for a file of ", size_,
                               " bytes"));
    }
    if (n_tensors > Remaining() / kMinTensorInfoBytes) {
      return Loss(absl::StrCat("tensor count ", n_tensors, " is out of range for a file of ", size_,
                               " bytes"));
    }
    f_.metadata_.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
      FOCAL_ASSIGN_OR_RETURN(absl::string_view key,
                             String(absl::StrCat("the key of metadata entry ", i)));
      const std::string what = absl::StrCat("metadata key '", key, "'");
      FOCAL_ASSIGN_OR_RETURN(const uint32_t type, U32(absl::StrCat("the type of ", what)));
      FOCAL_ASSIGN_OR_RETURN(GgufValue v, Value(type, what, 0));
      if (!f_.metadata_index_.emplace(std::string(key), f_.metadata_.size()).second) {
        return Loss(absl::StrCat("duplicate metadata key '", key, "'"));
      }
      f_.metadata_.emplace_back(std::string(key), std::move(v));
    }
    FOCAL_RETURN_IF_ERROR(ReadAlignment());
    f_.tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      FOCAL_ASSIGN_OR_RETURN(absl::string_view name,
                             String(absl::StrCat("the name of tensor info ", i)));
      FOCAL_RETURN_IF_ERROR(ReadTensorInfo(std::string(name)));
    }
    // The data section starts at the next multiple of the alignment.
    const uint64_t a = f_.alignment_;
    f_.data_offset_ = pos_ % a == 0 ? pos_ : pos_ + (a - pos_ % a);
    return CheckTensorData();
  }

 private:
  uint64_t Remaining() const { return size_ - pos_; }

  absl::Status Loss(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(path_, ": ", what));
  }

  absl::Status Need(uint64_t n, absl::string_view what) const {
    if (Remaining() < n) {
      return Loss(absl::StrCat("truncated GGUF file: ", what, " at byte ", pos_, " needs ", n,
                               " bytes but only ", Remaining(), " remain"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint32_t> U32(absl::string_view what) {
    FOCAL_RETURN_IF_ERROR(Need(4, what));
    const uint32_t v = Load<uint32_t>(base_ + pos_);
    pos_ += 4;
    return v;
  }

  absl::StatusOr<uint64_t> U64(absl::string_view what) {
    FOCAL_RETURN_IF_ERROR(Need(8, what));
    const uint64_t v = Load<uint64_t>(base_ + pos_);
    pos_ += 8;
    return v;
  }

  absl::StatusOr<absl::string_view> String(absl::string_view what) {
    FOCAL_ASSIGN_OR_RETURN(const uint64_t n, U64(absl::StrCat("the length of ", what)));
    if (n > Remaining()) {
      return Loss(absl::StrCat(what, ": string length ", n, " runs past the end of the file (",
                               Remaining(), " bytes remain)"));
    }
    absl::string_view s(reinterpret_cast<const char*>(base_ + pos_), n);
    pos_ += n;
    return s;
  }

  absl::StatusOr<GgufValue> Value(uint32_t type, absl::string_view what, int depth) {
    const int size = ScalarSize(type);
    if (size < 0) return Loss(absl::StrCat(what, ": unknown value type ", type));
    GgufValue v;
    v.type_ = static_cast<GgufValueType>(type);
    if (size > 0) {
      FOCAL_RETURN_IF_ERROR(Need(size, absl::StrCat("the value of ", what)));
      v.raw_ = base_ + pos_;
      pos_ += size;
      return v;
    }
    if (v.type_ == GgufValueType::kString) {
      FOCAL_ASSIGN_OR_RETURN(v.str_, String(what));
      return v;
    }
    // An array.
    if (depth >= kMaxArrayDepth) {
      return Loss(absl::StrCat(what, ": arrays nested deeper than ", kMaxArrayDepth));
    }
    FOCAL_ASSIGN_OR_RETURN(const uint32_t elem, U32(absl::StrCat("the element type of ", what)));
    const int esize = ScalarSize(elem);
    if (esize < 0) return Loss(absl::StrCat(what, ": unknown array element type ", elem));
    FOCAL_ASSIGN_OR_RETURN(const uint64_t count, U64(absl::StrCat("the length of ", what)));
    v.elem_type_ = static_cast<GgufValueType>(elem);
    v.count_ = count;
    // Each element takes at least: its fixed size, 8 bytes (a string's
    // length) or 12 (a nested array's type and count).
    const uint64_t min_elem = esize > 0 ? esize : (v.elem_type_ == GgufValueType::kString ? 8 : 12);
    if (count > Remaining() / min_elem) {
      return Loss(absl::StrCat(what, ": array of ", count, " ", GgufValueTypeName(v.elem_type_),
                               " elements runs past the end of the file (", Remaining(),
                               " bytes remain)"));
    }
    if (esize > 0) {
      v.raw_ = base_ + pos_;
      pos_ += count * static_cast<uint64_t>(esize);
      return v;
    }
    auto items = std::make_shared<std::vector<GgufValue>>();
    items->reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      FOCAL_ASSIGN_OR_RETURN(GgufValue item,
                             Value(elem, absl::StrCat(what, "[", i, "]"), depth + 1));
      items->push_back(std::move(item));
    }
    v.items_ = std::move(items);
    return v;
  }

  absl::Status ReadAlignment() {
    const GgufValue* v = f_.Find("general.alignment");
    if (v == nullptr) return absl::OkStatus();  // the default, 32
    std::optional<uint64_t> a = v->AsUint();
    if (!a.has_value() || *a == 0 || *a > std::numeric_limits<uint32_t>::max() ||
        (*a & (*a - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": metadata key 'general.alignment' must be a power of two (uint32), got ",
          a.has_value() ? absl::StrCat(*a) : v->TypeString()));
    }
    f_.alignment_ = *a;
    return absl::OkStatus();
  }

  absl::Status ReadTensorInfo(std::string name) {
    const std::string what = absl::StrCat("tensor '", name, "'");
    FOCAL_ASSIGN_OR_RETURN(const uint32_t n_dims, U32(absl::StrCat("n_dims of ", what)));
    if (n_dims < 1 || n_dims > kMaxDims) {
      return Loss(absl::StrCat(what, ": n_dims ", n_dims, " is out of range (1..", kMaxDims, ")"));
    }
    GgufTensor t;
    t.name = name;
    int64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      FOCAL_ASSIGN_OR_RETURN(const uint64_t dim, U64(absl::StrCat("the dims of ", what)));
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Loss(absl::StrCat(what, ": dimension ", d, " (", dim, ") is out of range"));
      }
      t.dims.push_back(static_cast<int64_t>(dim));
    }
    for (int64_t dim : t.dims) {
      if (dim != 0 && numel > std::numeric_limits<int64_t>::max() / dim) {
        return Loss(absl::StrCat(what, ": shape [", absl::StrJoin(t.dims, ", "),
                                 "] overflows int64 (too many elements)"));
      }
      numel *= dim;
    }
    t.num_elements = numel;
    FOCAL_ASSIGN_OR_RETURN(const uint32_t type, U32(absl::StrCat("the type of ", what)));
    const GgmlTypeTraits* traits = FindGgmlType(type);
    if (traits == nullptr) return Loss(absl::StrCat(what, ": unknown tensor type ", type));
    t.type = traits->type;
    if (t.dims[0] % traits->block_size != 0) {
      return Loss(absl::StrCat(what, ": row length ", t.dims[0], " is not a multiple of the ",
                               traits->name, " block size ", traits->block_size));
    }
    const int64_t blocks = numel / traits->block_size;
    if (blocks > std::numeric_limits<int64_t>::max() / traits->type_size) {
      return Loss(
          absl::StrCat(what, ": shape [", absl::StrJoin(t.dims, ", "), "] overflows int64 bytes"));
    }
    t.bytes = static_cast<size_t>(blocks * traits->type_size);
    FOCAL_ASSIGN_OR_RETURN(t.offset, U64(absl::StrCat("the data offset of ", what)));
    if (t.offset % f_.alignment_ != 0) {
      return Loss(absl::StrCat(what, ": data offset ", t.offset,
                               " is not a multiple of the alignment ", f_.alignment_));
    }
    if (!f_.tensor_index_.emplace(name, f_.tensors_.size()).second) {
      return Loss(absl::StrCat("duplicate tensor name '", name, "'"));
    }
    f_.tensors_.push_back(std::move(t));
    return absl::OkStatus();
  }

  absl::Status CheckTensorData() {
    const uint64_t data_size = f_.data_offset_ <= size_ ? size_ - f_.data_offset_ : 0;
    std::vector<const GgufTensor*> by_offset;
    for (GgufTensor& t : f_.tensors_) {
      if (t.offset > data_size || t.bytes > data_size - t.offset) {
        return Loss(absl::StrCat("tensor '", t.name, "': data at offset ", t.offset, " (", t.bytes,
                                 " bytes) runs past the end of the data section (", data_size,
                                 " bytes): truncated file?"));
      }
      // An empty tensor may sit at the end, past which no pointer may point.
      t.data = t.bytes > 0 ? base_ + f_.data_offset_ + t.offset : nullptr;
      if (t.bytes > 0) by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(), [](const GgufTensor* a, const GgufTensor* b) {
      return a->offset < b->offset || (a->offset == b->offset && a->bytes < b->bytes);
    });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const GgufTensor& prev = *by_offset[i - 1];
      const GgufTensor& cur = *by_offset[i];
      if (cur.offset < prev.offset + prev.bytes) {
        return Loss(absl::StrCat("tensor '", cur.name, "': data [", cur.offset, ", ",
                                 cur.offset + cur.bytes, ") overlaps tensor '", prev.name, "' [",
                                 prev.offset, ", ", prev.offset + prev.bytes, ")"));
      }
    }
    return absl::OkStatus();
  }

  GgufFile& f_;
  const uint8_t* base_;
  uint64_t size_;
  std::string path_;
  uint64_t pos_ = 0;
};

absl::StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(absl::string_view path) {
  auto f = std::unique_ptr<GgufFile>(new GgufFile());
  FOCAL_ASSIGN_OR_RETURN(f->file_, MappedFile::Open(path));
  GgufParser parser(*f);
  FOCAL_RETURN_IF_ERROR(parser.Parse());
  return f;
}

}  // namespace focal::model
