// SPDX-License-Identifier: Apache-2.0
#include "model/memory_estimate.h"

#include <algorithm>

namespace focal::model {

int64_t EstimateGenerationBytes(const ModelConfig& c, int64_t max_tokens, int64_t prefill_chunk,
                                int64_t max_batch, const kernels::Backend& backend) {
  // K and V, in the dtype attention reads (F32 on the CPU, BF16 in CUDA's BF16 mode).
  const int64_t kv = 2 * c.num_layers * c.num_kv_heads * c.head_dim *
                     static_cast<int64_t>(kernels::DTypeSize(backend.AttentionDType()));
  // KvCache grows geometrically: allow for one doubling past the need.
  const int64_t cache = kv * max_tokens * 2 * max_batch;
  // One forward call: a prefill chunk, or one decoding step of the batch.
  const int64_t rows = std::max(std::min(prefill_chunk, max_tokens), max_batch);
  const int64_t acts = rows * 4 *
                       (2 * c.hidden_size + 2 * c.num_heads * c.head_dim +
                        2 * c.num_kv_heads * c.head_dim + c.hidden_size + 2 * c.intermediate_size);
  const int64_t head_rows = std::min<int64_t>(256, max_batch);
  const int64_t head = head_rows * (c.vocab_size + 2 * c.hidden_size) * 4;
  kernels::ForwardShape shape;
  shape.tokens = rows;
  shape.keys = max_tokens;
  shape.max_inputs = std::max({c.hidden_size, c.intermediate_size, c.num_heads * c.head_dim});
  shape.max_outputs =
      std::max({c.vocab_size, c.intermediate_size, c.hidden_size, c.num_heads * c.head_dim});
  shape.buffers = 12 + 2 * c.num_layers * max_batch;
  return cache + acts + head + backend.ScratchBytes(shape);
}

}  // namespace focal::model
