// SPDX-License-Identifier: Apache-2.0
// LanguageModel: one checkpoint loaded and ready to run — config, weights on
// a backend, tokenizer and the forward pass. A checkpoint is an HF-format
// directory (config.json + safetensors) or a GGUF file.
#ifndef FOCAL_MODEL_LANGUAGE_MODEL_H_
#define FOCAL_MODEL_LANGUAGE_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/gguf.h"
#include "model/safetensors.h"
#include "model/tokenizer.h"
#include "model/transformer.h"
#include "model/weights.h"

namespace focal::model {

struct LoadOptions {
  std::optional<double> focal_temperature;  // --focal-temperature override
  // A tokenizer must load; when false, a directory without one (or with only
  // a kind LoadTokenizer does not support yet) loads with tokenizer() null.
  bool require_tokenizer = true;
  // Validate config, tensors and tokenizer without uploading weights or
  // building the forward pass (inspect: cheap even for large checkpoints).
  bool validate_only = false;
  TransformerOptions transformer;
};

class LanguageModel {
 public:
  // Loads `path` onto `backend` (which must outlive the model). `path` is a
  // directory with config.json (HF format), a .gguf file, or a directory
  // without config.json that holds exactly one .gguf file.
  static absl::StatusOr<std::unique_ptr<LanguageModel>> Load(absl::string_view path,
                                                             kernels::Backend& backend,
                                                             const LoadOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const TensorStore& store() const { return store_; }
  // Not available after a validate_only load.
  Transformer& transformer() { return *transformer_; }
  // The forward pass on another backend over these same weights, for a
  // replica that needs no copy of them (CPU backends all read host memory).
  // FailedPrecondition when `backend` cannot read this model's buffers: load
  // the model again on it instead. The result must not outlive the model.
  absl::StatusOr<std::unique_ptr<Transformer>> TransformerOn(kernels::Backend& backend) const;
  // nullptr when the directory has no tokenizer and none was required.
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }
  // The path given to Load (a directory, or a .gguf file).
  const std::string& dir() const { return dir_; }
  // The GGUF file the model was loaded from; nullptr for safetensors.
  const GgufFile* gguf() const { return gguf_.get(); }
  // The token ids that end generation: config eos ids, else the tokenizer's.
  std::vector<int64_t> StopIds() const;

 private:
  LanguageModel() = default;
  std::string dir_;
  ModelConfig config_;
  std::shared_ptr<const GgufFile> gguf_;
  TensorStore store_;
  LlamaWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Transformer> transformer_;
};

// SHA-256 over the checkpoint's weight files (the safetensors files sorted by
// name, each file's bytes in order; or the whole GGUF file): identifies the
// weights in reports and caches.
absl::StatusOr<std::string> WeightsSha256(const TensorStore& store);

// The GGUF file `path` names: `path` itself when it is a file ending in
// .gguf, the single .gguf file of a directory without config.json, nullopt
// for an HF directory (or a missing path: Load reports it). InvalidArgument
// for another kind of file or a directory with several .gguf files.
absl::StatusOr<std::optional<std::string>> FindGgufCheckpoint(absl::string_view path);

}  // namespace focal::model

#endif  // FOCAL_MODEL_LANGUAGE_MODEL_H_
