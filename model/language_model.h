// SPDX-License-Identifier: Apache-2.0
// LanguageModel: one HF-format checkpoint directory loaded and ready to run —
// config, memory-mapped weights on a backend, tokenizer and the forward pass.
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
  // Loads `dir` onto `backend` (which must outlive the model).
  static absl::StatusOr<std::unique_ptr<LanguageModel>> Load(absl::string_view dir,
                                                          kernels::Backend& backend,
                                                          const LoadOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const TensorStore& store() const { return store_; }
  // Not available after a validate_only load.
  Transformer& transformer() { return *transformer_; }
  // nullptr when the directory has no tokenizer and none was required.
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }
  const std::string& dir() const { return dir_; }
  // The token ids that end generation: config eos ids, else the tokenizer's.
  std::vector<int64_t> StopIds() const;

 private:
  LanguageModel() = default;
  std::string dir_;
  ModelConfig config_;
  TensorStore store_;
  LlamaWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Transformer> transformer_;
};

// SHA-256 over the checkpoint's safetensors files (sorted by name, each
// file's bytes in order): identifies the weights in reports and caches.
absl::StatusOr<std::string> WeightsSha256(const TensorStore& store);

}  // namespace focal::model

#endif  // FOCAL_MODEL_LANGUAGE_MODEL_H_
