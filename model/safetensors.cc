// SPDX-License-Identifier: Apache-2.0
// Format: u64 little-endian header length N, N bytes of JSON
// {"__metadata__": {...}, name: {"dtype", "shape", "data_offsets": [b, e]}},
// then the data; offsets are relative to the data's start (byte 8 + N).
#include "model/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/json.h"
#include "base/status_macros.h"

namespace focal::model {
namespace {

// A header larger than this is certainly not a checkpoint header (the
// safetensors reference implementation uses the same 100 MB bound).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

absl::Status TensorError(absl::string_view path, absl::string_view tensor, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(path, ": tensor '", tensor, "': ", what));
}

}  // namespace

size_t SafetensorsDTypeSize(absl::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(absl::string_view path) {
  auto st = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  FOCAL_ASSIGN_OR_RETURN(st->file_, MappedFile::Open(path));
  const uint8_t* base = st->file_.data();
  const uint64_t size = st->file_.size();
  if (size < 8) {
    return absl::DataLossError(absl::StrCat(path, ": truncated safetensors file (", size,
                                            " bytes; the 8-byte header length is missing)"));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];
  if (n > size - 8) {
    return absl::DataLossError(absl::StrCat(path, ": header length ", n,
                                            " runs past the end of the file (", size,
                                            " bytes): truncated or not a safetensors file"));
  }
  if (n > kMaxHeaderBytes) {
    return absl::DataLossError(absl::StrCat(path, ": header length ", n, " is implausibly large"));
  }
  absl::string_view header(reinterpret_cast<const char*>(base + 8), n);
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(header, absl::StrCat(path, " (header)")));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header is not a JSON object"));
  }
  const uint8_t* data = base + 8 + n;
  const uint64_t data_size = size - 8 - n;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (const auto& [name, v] : root.members()) {
    if (name == "__metadata__") {
      if (!v.is_object()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": __metadata__ must be an object"));
      }
      for (const auto& [k, mv] : v.members()) {
        if (!mv.is_string()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": __metadata__ value '", k, "' must be a string"));
        }
        st->metadata_[k] = mv.string_value();
      }
      continue;
    }
    if (!v.is_object()) return TensorError(path, name, "entry must be an object");
    const JsonValue* dt = v.Find("dtype");
    const JsonValue* shape = v.Find("shape");
    const JsonValue* offs = v.Find("data_offsets");
    if (dt == nullptr || !dt->is_string()) return TensorError(path, name, "missing string 'dtype'");
    if (shape == nullptr || !shape->is_array())
      return TensorError(path, name, "missing 'shape' list");
    if (offs == nullptr || !offs->is_array() || offs->array().size() != 2 ||
        !offs->array()[0].is_integer() || !offs->array()[1].is_integer()) {
      return TensorError(path, name, "'data_offsets' must be two integers");
    }
    TensorInfo info;
    info.name = name;
    info.dtype = dt->string_value();
    info.file = std::string(path);
    const size_t esize = SafetensorsDTypeSize(info.dtype);
    if (esize == 0)
      return TensorError(path, name, absl::StrCat("unknown dtype '", info.dtype, "'"));
    // Element count with overflow checks: a hostile shape must not wrap.
    uint64_t numel = 1;
    for (const JsonValue& d : shape->array()) {
      if (!d.is_integer() || d.integer() < 0) {
        return TensorError(path, name, "shape entries must be non-negative integers");
      }
      uint64_t dim = static_cast<uint64_t>(d.integer());
      if (dim != 0 && numel > UINT64_MAX / dim) return TensorError(path, name, "shape overflows");
      numel *= dim;
      info.shape.push_back(d.integer());
    }
    if (numel > UINT64_MAX / esize) return TensorError(path, name, "shape overflows");
    const int64_t b = offs->array()[0].integer(), e = offs->array()[1].integer();
    if (b < 0 || e < b) {
      return TensorError(path, name, absl::StrCat("bad data_offsets [", b, ", ", e, "]"));
    }
    if (static_cast<uint64_t>(e) > data_size) {
      return TensorError(
          path, name,
          absl::StrCat("data_offsets [", b, ", ", e, "] run past the end of the data (", data_size,
                       " bytes): truncated file?"));
    }
    if (static_cast<uint64_t>(e - b) != numel * esize) {
      return TensorError(path, name,
                         absl::StrCat("data_offsets span ", e - b, " bytes but dtype ", info.dtype,
                                      " and its shape need ", numel * esize));
    }
    info.data = data + b;
    info.bytes = static_cast<size_t>(e - b);
    ranges.push_back({static_cast<uint64_t>(b), static_cast<uint64_t>(e), name});
    st->tensors_.emplace(name, std::move(info));
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      return TensorError(path, ranges[i].name,
                         absl::StrCat("data [", ranges[i].begin, ", ", ranges[i].end,
                                      ") overlaps tensor '", ranges[i - 1].name, "' [",
                                      ranges[i - 1].begin, ", ", ranges[i - 1].end, ")"));
    }
  }
  return st;
}

absl::StatusOr<TensorStore> TensorStore::OpenDir(absl::string_view model_dir) {
  namespace fs = std::filesystem;
  TensorStore store;
  const std::string single = absl::StrCat(model_dir, "/model.safetensors");
  const std::string index = absl::StrCat(model_dir, "/model.safetensors.index.json");
  std::error_code ec;
  if (!fs::is_directory(std::string(model_dir), ec)) {
    return absl::NotFoundError(absl::StrCat("model directory '", model_dir, "' does not exist"));
  }
  if (fs::exists(single, ec)) {
    FOCAL_ASSIGN_OR_RETURN(auto f, SafetensorsFile::Open(single));
    store.tensors_ = f->tensors();
    store.files_.push_back(std::move(f));
    return store;
  }
  if (!fs::exists(index, ec)) {
    return absl::NotFoundError(absl::StrCat("'", model_dir,
                                            "' has neither model.safetensors nor "
                                            "model.safetensors.index.json"));
  }
  FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(index));
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(text, index));
  const JsonValue* map = root.Find("weight_map");
  if (map == nullptr || !map->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(index, ": missing object 'weight_map'"));
  }
  std::map<std::string, SafetensorsFile*> opened;
  for (const auto& [name, file] : map->members()) {
    if (!file.is_string() || file.string_value().empty() ||
        file.string_value().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(index, ": weight_map entry '", name, "' must be a file name"));
    }
    const std::string& fname = file.string_value();
    if (!opened.count(fname)) {
      FOCAL_ASSIGN_OR_RETURN(auto f, SafetensorsFile::Open(absl::StrCat(model_dir, "/", fname)));
      opened[fname] = f.get();
      store.files_.push_back(std::move(f));
    }
    const auto& shard = opened[fname]->tensors();
    auto it = shard.find(name);
    if (it == shard.end()) {
      return absl::DataLossError(absl::StrCat(index, ": tensor '", name, "' is mapped to '", fname,
                                              "' but that file does not contain it"));
    }
    store.tensors_.emplace(name, it->second);
  }
  // A shard holding tensors the index does not list is a damaged checkpoint.
  for (const auto& f : store.files_) {
    for (const auto& [name, info] : f->tensors()) {
      if (!map->Find(name)) {
        return absl::DataLossError(
            absl::StrCat(info.file, ": tensor '", name, "' is not listed in ", index));
      }
    }
  }
  return store;
}

TensorStore TensorStore::FromTensors(std::map<std::string, TensorInfo> tensors,
                                     std::vector<std::string> source_files,
                                     std::shared_ptr<const void> owner) {
  TensorStore store;
  store.tensors_ = std::move(tensors);
  store.source_files_ = std::move(source_files);
  store.owner_ = std::move(owner);
  return store;
}

const TensorInfo* TensorStore::Find(absl::string_view name) const {
  auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> TensorStore::files() const {
  std::vector<std::string> out;
  for (const auto& f : files_) out.push_back(f->file().path());
  out.insert(out.end(), source_files_.begin(), source_files_.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace focal::model
