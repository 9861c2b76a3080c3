// SPDX-License-Identifier: Apache-2.0
// The shared LLaMA forward pass, written once against kernels::Backend:
// packed variable-length batches, each sequence continuing its own KvCache,
// and scoring by log-softmax + gather at requested rows only (never the full
// T x V logits on the host).
#ifndef FOCAL_MODEL_TRANSFORMER_H_
#define FOCAL_MODEL_TRANSFORMER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/weights.h"

namespace focal::model {

// One sequence of a packed batch: `tokens` are appended to `cache` at
// positions [cache->length(), +tokens.size()). For each r in score_rows
// (indices into tokens), the output holds log P(targets[i] | everything up to
// and including tokens[score_rows[i]]) and that distribution's argmax.
struct SeqInput {
  KvCache* cache = nullptr;
  absl::Span<const int32_t> tokens;
  absl::Span<const int64_t> score_rows;
  absl::Span<const int32_t> targets;
};

// Optional outputs of Forward beyond the scores.
struct ForwardExtras {
  // Attention diagnostics: query rows (batch index, index into its tokens)
  // whose attention is summarised per layer and head, with the absolute
  // positions whose attention mass is reported (e.g. a needle's tokens).
  std::vector<kernels::AttentionProbe> probes;
  // When set, `logits` receives the raw LM-head logits of every score row
  // (rows in output order, all sequences concatenated; R x vocab floats).
  bool want_logits = false;
  std::vector<float> logits;
  // Per probe, layer and head:
  // [(probe * num_layers + layer) * num_heads + head].
  std::vector<float> probe_entropy;
  std::vector<float> probe_mass;
};

struct TokenScore {
  double logprob = 0;
  int32_t argmax = 0;
};

struct TransformerOptions {
  // Allow positions past max_position_embeddings (RoPE simply extended).
  bool allow_length_extrapolation = false;
};

class Transformer {
 public:
  // Holds references to `config`, `weights` and `backend`; all must outlive it.
  Transformer(const ModelConfig& config, const LlamaWeights& weights, kernels::Backend& backend,
              TransformerOptions options = {});

  // A cache for one sequence, sized for `reserve` tokens (it grows if needed).
  absl::StatusOr<KvCache> NewCache(int64_t reserve) const;

  // Runs every sequence of `batch` through the model in one packed pass.
  // out[s] receives one TokenScore per score row of batch[s]. A sequence's
  // results do not depend on the rest of the batch (bit for bit on the CPU).
  // OutOfRange when a sequence would pass the model's maximum length.
  absl::Status Forward(absl::Span<const SeqInput> batch, std::vector<std::vector<TokenScore>>& out,
                       ForwardExtras* extras = nullptr);

  // Greedy decoding: feeds `prompt` (non-empty) then appends argmax tokens
  // until `max_new_tokens` or a token in `stop_ids`. Returns the new tokens
  // (including the stop token, if one was produced).
  absl::StatusOr<std::vector<int32_t>> Generate(absl::Span<const int32_t> prompt,
                                                int64_t max_new_tokens,
                                                absl::Span<const int64_t> stop_ids);

  // Whether a sequence of `positions` tokens fits the model's positions (any
  // does with length extrapolation): the one rule Forward, Generate and the
  // batched generator apply.
  bool FitsPositions(int64_t positions) const {
    return positions <= config_.max_position_embeddings || options_.allow_length_extrapolation;
  }

  const ModelConfig& config() const { return config_; }
  kernels::Backend& backend() const { return backend_; }
  const LlamaWeights& weights() const { return weights_; }
  const TransformerOptions& options() const { return options_; }

 private:
  // Softmax scale per packed row for `layer`.
  void ComputeScales(int64_t layer, kernels::Tensor xn, absl::Span<const SeqInput> batch,
                     absl::Span<const int64_t> row_begin, std::vector<float>& scale);

  const ModelConfig& config_;
  const LlamaWeights& weights_;
  kernels::Backend& backend_;
  TransformerOptions options_;
  std::vector<float> inv_freq_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_TRANSFORMER_H_
