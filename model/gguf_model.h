// SPDX-License-Identifier: Apache-2.0
// GGUF checkpoints of architecture "llama": the ModelConfig read from the
// metadata, and the tensors under the HF names LoadLlamaWeights expects,
// dequantized to F32 with the Q/K rows put back in HF's order. Everything
// past this file (weights, transformer) does not know the tensors came from
// GGUF.
#ifndef FOCAL_MODEL_GGUF_MODEL_H_
#define FOCAL_MODEL_GGUF_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/config.h"
#include "model/gguf.h"
#include "model/safetensors.h"

namespace focal::model {

// The config of a llama GGUF (docs/checkpoints.md lists the keys). Other
// architectures, mixture-of-experts, RoPE scaling other than linear, and
// llama3-style frequency factors (rope_freqs.weight) are refused by name.
// Focal attention comes from the focal_attention.* keys.
absl::StatusOr<ModelConfig> GgufModelConfig(const GgufFile& gguf);

// The HF name of GGUF tensor `gguf_name` ("blk.3.attn_q.weight" ->
// "model.layers.3.self_attn.q_proj.weight"); nullopt when it has none.
std::optional<std::string> HfTensorName(absl::string_view gguf_name);

// llama.cpp's converter stores the rows of q_proj (and k_proj) permuted so
// that the two halves RoPE rotates together are interleaved: within each of
// `n_heads` heads of `head_dim` rows, file row 2i + j holds HF row
// j * head_dim / 2 + i (j = 0, 1). This writes the HF order of `src`
// (n_heads * head_dim rows of `cols`) to `dst`.
void UnpermuteRopeRows(const float* src, int64_t n_heads, int64_t head_dim, int64_t cols,
                       float* dst);

// When GgufTensorStore dequantizes the tensors that are not F32 as stored.
enum class GgufData {
  kNone,      // never: data pointers are null (LoadLlamaWeights without a
              // backend, as inspect runs it)
  kNow,       // into buffers the store owns
  kOnUpload,  // TensorInfo::materialize, one tensor at a time as it is
              // uploaded: a backend that converts the weights (BF16 mode,
              // CUDA) never holds the whole model in F32 beside its copy
};

// The tensors of `gguf` for `config` under HF names, dequantized to F32 (F32
// tensors that need no reordering stay in the memory map). Every tensor must
// map to an HF name and be of a type Dequantize supports; tensors the config
// needs must be present (errors name the GGUF tensor).
absl::StatusOr<TensorStore> GgufTensorStore(std::shared_ptr<const GgufFile> gguf,
                                            const ModelConfig& config, GgufData data);

}  // namespace focal::model

#endif  // FOCAL_MODEL_GGUF_MODEL_H_
