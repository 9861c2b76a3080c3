// SPDX-License-Identifier: Apache-2.0
// How much memory the forward pass's own buffers need for a generation run,
// spelled out beside the Transformer and KvCache that allocate them.
#ifndef FOCAL_MODEL_MEMORY_ESTIMATE_H_
#define FOCAL_MODEL_MEMORY_ESTIMATE_H_

#include <cstdint>

#include "kernels/backend.h"
#include "model/config.h"

namespace focal::model {

// Bytes a run needs at once beside the weights, on `backend`'s memory: the
// KV caches of max_batch sequences of `max_tokens` (prompt + answer), one
// prefill chunk's activations, the LM-head scratch and the backend's own
// workspaces (Backend::ScratchBytes). Computed before a run starts and
// compared with Backend::AvailableMemoryBytes, so a run that cannot fit is
// refused up front.
int64_t EstimateGenerationBytes(const ModelConfig& config, int64_t max_tokens,
                                int64_t prefill_chunk, int64_t max_batch,
                                const kernels::Backend& backend);

}  // namespace focal::model

#endif  // FOCAL_MODEL_MEMORY_ESTIMATE_H_
