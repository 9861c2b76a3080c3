// SPDX-License-Identifier: Apache-2.0
// Greedy generation for the long-context tasks: prompts are prefilled in
// chunks (memory stays at the KV cache plus one chunk of activations), then
// all active sequences decode together, one token each per forward call,
// until max_new_tokens, a stop id (EOS) or a stop string.
#ifndef FOCAL_ENGINE_GENERATOR_H_
#define FOCAL_ENGINE_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/config.h"
#include "model/tokenizer.h"
#include "model/transformer.h"

namespace focal::engine {

struct GenerationRequest {
  std::vector<int32_t> prompt;  // token ids, BOS included; non-empty
  int64_t max_new_tokens = 0;
  std::vector<std::string> stop;  // the text is cut before the first occurrence
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // generated ids (a stop id is not included)
  std::string text;             // decoded, cut at a stop string
  // "length", "eos", "stop", or "context": the model's max_position_embeddings
  // reached before max_new_tokens (without length extrapolation).
  std::string finish;
};

struct GenerationOptions {
  int64_t prefill_chunk = 2048;   // prompt tokens per prefill forward call
  int64_t max_batch = 8;          // sequences decoded together
  std::vector<int64_t> stop_ids;  // usually the model's EOS ids
  // Called after each finished request with (done, total).
  std::function<void(int64_t, int64_t)> progress;
};

absl::StatusOr<std::vector<GenerationResult>> GenerateGreedy(
    model::Transformer& tf, const model::Tokenizer& tok,
    absl::Span<const GenerationRequest> requests, const GenerationOptions& options);

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_GENERATOR_H_
