// SPDX-License-Identifier: Apache-2.0
// LlamaWeights: the checkpoint's tensors, checked against the config and made
// usable by a backend (F32 used in place from the memory map on the CPU;
// F16/BF16 widened once).
#ifndef FOCAL_MODEL_WEIGHTS_H_
#define FOCAL_MODEL_WEIGHTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/safetensors.h"

namespace focal::model {

struct LayerWeights {
  kernels::Buffer input_norm;   // (1, C)
  kernels::Buffer wq;           // (H*D, C)
  kernels::Buffer wk;           // (Hkv*D, C)
  kernels::Buffer wv;           // (Hkv*D, C)
  kernels::Buffer wo;           // (C, H*D)
  kernels::Buffer post_norm;    // (1, C)
  kernels::Buffer w_gate;       // (F, C)
  kernels::Buffer w_up;         // (F, C)
  kernels::Buffer w_down;       // (C, F)
  kernels::Buffer focal_tau_w;  // (1, C), learned focal only
  float focal_tau_b = 0.0f;     // learned focal only; 0 when the bias is absent
};

struct LlamaWeights {
  kernels::Buffer embed;  // (V, C)
  std::vector<LayerWeights> layers;
  kernels::Buffer final_norm;  // (1, C)
  kernels::Buffer lm_head;     // (V, C); empty when tied to `embed`
  std::string dtype;           // storage dtype of the checkpoint ("F32", "BF16", mixed: "mixed")
  int64_t num_parameters = 0;

  const kernels::Buffer& head() const { return lm_head.tensor().data ? lm_head : embed; }
};

// Checks names, dtypes and shapes of every tensor in `store` against `config`
// (missing or unexpected tensors are errors naming the tensor), then uploads
// them to `backend`; with backend == nullptr it only validates (the buffers
// stay empty). `store` must outlive the result.
absl::StatusOr<LlamaWeights> LoadLlamaWeights(const ModelConfig& config, const TensorStore& store,
                                              kernels::Backend* backend);

// Refuses up front, with the numbers, a load whose converted weights would
// not fit in the memory `backend` has left (Backend::UploadBytes), instead of
// failing or being killed half way.
absl::Status CheckWeightsFit(const TensorStore& store, kernels::Backend& backend);

}  // namespace focal::model

#endif  // FOCAL_MODEL_WEIGHTS_H_
