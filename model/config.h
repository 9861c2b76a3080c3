// SPDX-License-Identifier: Apache-2.0
// ModelConfig: the LLaMA-family fields of an HF config.json plus the optional
// "focal_attention" object (see shared docs/focal-attention.md, mirrored in
// docs/checkpoints.md).
#ifndef FOCAL_MODEL_CONFIG_H_
#define FOCAL_MODEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace focal::model {

struct RopeScaling {
  enum class Type { kNone, kLinear, kLlama3 };
  Type type = Type::kNone;
  double factor = 1.0;
  double low_freq_factor = 1.0;                  // llama3 only
  double high_freq_factor = 4.0;                 // llama3 only
  int64_t original_max_position_embeddings = 0;  // llama3 only
};

struct FocalConfig {
  enum class Mode { kNone, kConstant, kLearned };
  enum class Reduction { kToken, kSequenceMean };
  Mode mode = Mode::kNone;
  // kConstant: one t for all layers, or one per layer. softmax scale is
  // 1 / (t * sqrt(head_dim)).
  std::vector<double> temperature;
  // kLearned: tau = clip(x . w + b, tau_min, tau_max), scale 1 / tau.
  double tau_min = 0;
  std::optional<double> tau_max;
  Reduction reduction = Reduction::kToken;
  // True when --focal-temperature replaced the checkpoint's own setting.
  bool overridden = false;
  // Learned sequence_mean: a position's scores depend on the whole sequence
  // given (one tau mean), so a request must go through one forward call:
  // no shared context prefix, no chunked prefill.
  bool NeedsWholeSequence() const {
    return mode == Mode::kLearned && reduction == Reduction::kSequenceMean;
  }
};

struct ModelConfig {
  std::string architecture;  // LlamaForCausalLM or MistralForCausalLM
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  std::optional<int64_t> sliding_window;  // Mistral; sequences longer are refused
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
  std::string torch_dtype;
  FocalConfig focal;

  // "base", "focal(t=0.4)", "focal(t=[0.5,0.4])", "focal(learned, token)";
  // a --focal-temperature override reads "focal(t=0.4, retrofit)".
  std::string Variant() const;
  // Softmax scale of layer `l` for constant focal / base models.
  double ConstantScale(int64_t layer) const;
  // Every field that can change a score or a generation, as text (doubles to
  // 17 significant digits). Its hash keys the resume caches: an edited
  // config.json, or a temperature that Variant() rounds alike, never reuses
  // another config's scores.
  std::string Fingerprint() const;
};

// Parses config.json text; `source` names the file in error messages.
absl::StatusOr<ModelConfig> ParseModelConfig(absl::string_view json, absl::string_view source);
// Reads and parses DIR/config.json.
absl::StatusOr<ModelConfig> LoadModelConfig(absl::string_view model_dir);

// Replaces the focal setting with constant temperature `t` (--focal-temperature).
absl::Status OverrideFocalTemperature(ModelConfig& config, double t);

// RoPE inverse frequencies (head_dim / 2 values) with the config's scaling,
// computed as HF transformers does.
std::vector<float> RopeInvFreq(const ModelConfig& config);

}  // namespace focal::model

#endif  // FOCAL_MODEL_CONFIG_H_
