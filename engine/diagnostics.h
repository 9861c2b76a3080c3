// SPDX-License-Identifier: Apache-2.0
// Diagnostics behind `focal-eval compare`: how far a focal model's
// next-token distributions move from the base on the scored continuations
// (llama.cpp's KL-divergence mode), and how sharp each model's attention is
// (entropy per layer and head at a probed query row; mass on given keys).
#ifndef FOCAL_ENGINE_DIAGNOSTICS_H_
#define FOCAL_ENGINE_DIAGNOSTICS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/transformer.h"

namespace focal::engine {

struct TokenizedRequest;

// One prompt of the attention diagnostics: `tokens` are prefilled and row
// `row` (usually the last) is probed; `key_ranges` are token positions
// [begin, end) whose attention mass is reported (empty: mass not measured).
struct ProbeInput {
  std::vector<int32_t> tokens;
  int64_t row = 0;
  std::vector<std::pair<int64_t, int64_t>> key_ranges;
};

// Means over the probed prompts, per layer and head: [layer * heads + head].
struct AttentionSummary {
  int64_t samples = 0;
  int num_layers = 0;
  int num_heads = 0;
  std::vector<double> entropy;  // nats
  std::vector<double> mass;     // empty when no prompt had key ranges
};

// Prefills each prompt in chunks of `prefill_chunk` tokens (the probe sits
// in the chunk holding its row; later tokens are not needed and not run).
absl::StatusOr<AttentionSummary> MeasureAttention(model::Transformer& tf,
                                                  absl::Span<const ProbeInput> inputs,
                                                  int64_t prefill_chunk);

struct AgreementSummary {
  int64_t tokens = 0;  // scored continuation tokens compared
  double mean_kl = 0;  // KL(base || focal) per token, nats
  double kl_stderr = 0;
  double median_kl = 0;
  double p99_kl = 0;
  double max_kl = 0;
  double same_argmax = 0;  // share of tokens whose argmax agrees
  double same_argmax_stderr = 0;
};

// Runs every distinct request through both models (packed up to
// `batch_tokens` tokens) and compares the full next-token distributions at
// the scored positions. The models must share the vocabulary.
absl::StatusOr<AgreementSummary> MeasureAgreement(model::Transformer& base,
                                                  model::Transformer& focal,
                                                  absl::Span<const TokenizedRequest> requests,
                                                  int64_t batch_tokens);

// KL(p || q) of two logit rows (softmax taken in double) and whether their
// Zero only when the distributions are identical.
double KlDivergence(absl::Span<const float> p_logits, absl::Span<const float> q_logits);

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_DIAGNOSTICS_H_
