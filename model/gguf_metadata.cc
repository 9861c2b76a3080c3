// SPDX-License-Identifier: Apache-2.0
// GgufFile's typed metadata getters (each error names the file and key) and
// the tokenizer.ggml.* keys read into GgufTokenizerData.
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "model/gguf.h"

namespace focal::model {

// --- Typed access ------------------------------------------------------------

const GgufValue* GgufFile::Find(absl::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufTensor* GgufFile::FindTensor(absl::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<const GgufValue*> GgufFile::Require(absl::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) {
    return absl::NotFoundError(absl::StrCat(path(), ": metadata key '", key, "' is missing"));
  }
  return v;
}

absl::Status GgufFile::TypeError(absl::string_view key, const GgufValue& v,
                                 absl::string_view expected) const {
  return absl::InvalidArgumentError(absl::StrCat(path(), ": metadata key '", key, "' is ",
                                                 v.TypeString(), ", expected ", expected));
}

absl::StatusOr<uint32_t> GgufFile::GetU32(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const uint64_t v, GetU64(key));
  if (v > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path(), ": metadata key '", key, "' = ", v, " does not fit uint32"));
  }
  return static_cast<uint32_t>(v);
}

absl::StatusOr<uint64_t> GgufFile::GetU64(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (std::optional<uint64_t> u = v->AsUint()) return *u;
  if (std::optional<int64_t> i = v->AsInt()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path(), ": metadata key '", key, "' = ", *i, " must not be negative"));
  }
  return TypeError(key, *v, "an integer");
}

absl::StatusOr<int64_t> GgufFile::GetInt(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (std::optional<int64_t> i = v->AsInt()) return *i;
  if (v->type() == GgufValueType::kU64) {
    return absl::InvalidArgumentError(
        absl::StrCat(path(), ": metadata key '", key, "' = ", *v->AsUint(), " does not fit int64"));
  }
  return TypeError(key, *v, "an integer");
}

absl::StatusOr<double> GgufFile::GetFloat(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (std::optional<double> d = v->AsFloat()) return *d;
  return TypeError(key, *v, "float32 or float64");
}

absl::StatusOr<bool> GgufFile::GetBool(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (std::optional<bool> b = v->AsBool()) return *b;
  return TypeError(key, *v, "bool");
}

absl::StatusOr<std::string> GgufFile::GetString(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (std::optional<absl::string_view> s = v->AsString()) return std::string(*s);
  return TypeError(key, *v, "string");
}

absl::StatusOr<std::vector<std::string>> GgufFile::GetStringArray(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (v->type() != GgufValueType::kArray || v->elem_type() != GgufValueType::kString) {
    return TypeError(key, *v, "array[string]");
  }
  std::vector<std::string> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) out.emplace_back(*v->Element(i).AsString());
  return out;
}

absl::StatusOr<std::vector<float>> GgufFile::GetF32Array(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (v->type() != GgufValueType::kArray ||
      (v->elem_type() != GgufValueType::kF32 && v->elem_type() != GgufValueType::kF64)) {
    return TypeError(key, *v, "array[float32]");
  }
  std::vector<float> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) {
    out.push_back(static_cast<float>(*v->Element(i).AsFloat()));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> GgufFile::GetIntArray(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(const GgufValue* v, Require(key));
  if (v->type() != GgufValueType::kArray || v->elem_type() == GgufValueType::kString ||
      v->elem_type() == GgufValueType::kArray || v->elem_type() == GgufValueType::kBool ||
      v->elem_type() == GgufValueType::kF32 || v->elem_type() == GgufValueType::kF64) {
    return TypeError(key, *v, "an array of integers");
  }
  std::vector<int64_t> out;
  out.reserve(v->size());
  for (uint64_t i = 0; i < v->size(); ++i) {
    std::optional<int64_t> x = v->Element(i).AsInt();
    if (!x.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path(), ": metadata key '", key, "'[", i, "] does not fit int64"));
    }
    out.push_back(*x);
  }
  return out;
}

absl::StatusOr<std::vector<int32_t>> GgufFile::GetI32Array(absl::string_view key) const {
  FOCAL_ASSIGN_OR_RETURN(std::vector<int64_t> wide, GetIntArray(key));
  std::vector<int32_t> out;
  out.reserve(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) {
    if (wide[i] < std::numeric_limits<int32_t>::min() ||
        wide[i] > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(path(), ": metadata key '", key, "'[", i,
                                                     "] = ", wide[i], " does not fit int32"));
    }
    out.push_back(static_cast<int32_t>(wide[i]));
  }
  return out;
}

// --- Tokenizer keys ----------------------------------------------------------

absl::StatusOr<GgufTokenizerData> ReadGgufTokenizer(const GgufFile& f) {
  GgufTokenizerData t;
  FOCAL_ASSIGN_OR_RETURN(t.model, f.GetString("tokenizer.ggml.model"));
  if (f.Has("tokenizer.ggml.pre")) {
    FOCAL_ASSIGN_OR_RETURN(t.pre, f.GetString("tokenizer.ggml.pre"));
  }
  FOCAL_ASSIGN_OR_RETURN(t.tokens, f.GetStringArray("tokenizer.ggml.tokens"));
  const size_t n = t.tokens.size();
  auto check_len = [&](absl::string_view key, size_t len) -> absl::Status {
    if (len == n) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(f.path(), ": metadata key '", key, "' has ", len,
                                                   " entries but tokenizer.ggml.tokens has ", n));
  };
  if (f.Has("tokenizer.ggml.scores")) {
    FOCAL_ASSIGN_OR_RETURN(t.scores, f.GetF32Array("tokenizer.ggml.scores"));
    FOCAL_RETURN_IF_ERROR(check_len("tokenizer.ggml.scores", t.scores.size()));
  }
  if (f.Has("tokenizer.ggml.token_type")) {
    FOCAL_ASSIGN_OR_RETURN(t.token_type, f.GetI32Array("tokenizer.ggml.token_type"));
    FOCAL_RETURN_IF_ERROR(check_len("tokenizer.ggml.token_type", t.token_type.size()));
  }
  if (f.Has("tokenizer.ggml.merges")) {
    FOCAL_ASSIGN_OR_RETURN(t.merges, f.GetStringArray("tokenizer.ggml.merges"));
  }
  const std::pair<const char*, std::optional<int64_t>*> ids[] = {
      {"tokenizer.ggml.bos_token_id", &t.bos_id},
      {"tokenizer.ggml.eos_token_id", &t.eos_id},
      {"tokenizer.ggml.unknown_token_id", &t.unknown_id},
      {"tokenizer.ggml.padding_token_id", &t.padding_id},
  };
  for (const auto& [key, out] : ids) {
    if (!f.Has(key)) continue;
    FOCAL_ASSIGN_OR_RETURN(const int64_t id, f.GetInt(key));
    if (id < 0 || static_cast<uint64_t>(id) >= n) {
      return absl::InvalidArgumentError(absl::StrCat(f.path(), ": metadata key '", key, "' = ", id,
                                                     " is outside the vocabulary (", n,
                                                     " tokens)"));
    }
    *out = id;
  }
  const std::pair<const char*, std::optional<bool>*> flags[] = {
      {"tokenizer.ggml.add_bos_token", &t.add_bos},
      {"tokenizer.ggml.add_eos_token", &t.add_eos},
      {"tokenizer.ggml.add_space_prefix", &t.add_space_prefix},
  };
  for (const auto& [key, out] : flags) {
    if (!f.Has(key)) continue;
    FOCAL_ASSIGN_OR_RETURN(*out, f.GetBool(key));
  }
  return t;
}

}  // namespace focal::model
