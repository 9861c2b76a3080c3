// SPDX-License-Identifier: Apache-2.0
// Memory-mapped safetensors files, single or sharded, validated up front:
// header length against file size, JSON, dtypes, shapes against byte ranges,
// and offsets inside the data and not overlapping.
#ifndef FOCAL_MODEL_SAFETENSORS_H_
#define FOCAL_MODEL_SAFETENSORS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/file_util.h"

namespace focal::model {

struct TensorInfo {
  std::string name;
  std::string dtype;  // safetensors name: "F32", "BF16", "I64", ...
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the memory map
  size_t bytes = 0;
  std::string file;  // path of the file holding it
  // The tensor's name in `file` when the store renamed it (a GGUF tensor's
  // "blk.0.attn_q.weight"); empty when it is `name`.
  std::string source_name;
  // Set where `data` is null because the F32 values are computed on demand
  // (a quantized GGUF tensor): LoadLlamaWeights calls it once, uploads the
  // result and keeps it only if the backend uses it in place.
  std::function<absl::StatusOr<std::vector<float>>()> materialize;
};

// Element size of a safetensors dtype name, or 0 if unknown.
size_t SafetensorsDTypeSize(absl::string_view dtype);

class SafetensorsFile {
 public:
  // Maps and validates `path`. DataLoss for structural damage (truncation,
  // bad offsets), InvalidArgument for a malformed header; messages name the
  // file and the tensor.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(absl::string_view path);

  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const MappedFile& file() const { return file_; }

 private:
  MappedFile file_;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a checkpoint directory: model.safetensors, or the shards
// listed by model.safetensors.index.json.
class TensorStore {
 public:
  static absl::StatusOr<TensorStore> OpenDir(absl::string_view model_dir);
  // Tensors read from another format (GGUF): `source_files` are the files
  // they came from (files(), hence WeightsSha256), `owner` keeps the memory
  // their data points into alive for as long as the store.
  static TensorStore FromTensors(std::map<std::string, TensorInfo> tensors,
                                 std::vector<std::string> source_files,
                                 std::shared_ptr<const void> owner);

  const TensorInfo* Find(absl::string_view name) const;
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  // The files the tensors came from, sorted by name.
  std::vector<std::string> files() const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<std::string> source_files_;  // FromTensors
  std::shared_ptr<const void> owner_;      // FromTensors
  std::map<std::string, TensorInfo> tensors_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_SAFETENSORS_H_
