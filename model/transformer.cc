// SPDX-License-Identifier: Apache-2.0
#include "model/transformer.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace focal::model {
namespace {

using kernels::Buffer;
using kernels::DType;
using kernels::Tensor;

// Scored rows are pushed through the LM head this many at a time, bounding
// the logits scratch to kHeadRows x V whatever the prompt length.
constexpr int64_t kHeadRows = 256;

}  // namespace

Transformer::Transformer(const ModelConfig& config, const LlamaWeights& weights,
                         kernels::Backend& backend, TransformerOptions options)
    : config_(config),
      weights_(weights),
      backend_(backend),
      options_(options),
      inv_freq_(RopeInvFreq(config)) {}

absl::StatusOr<KvCache> Transformer::NewCache(int64_t reserve) const {
  KvCache cache(config_.num_layers, config_.num_kv_heads * config_.head_dim);
  FOCAL_RETURN_IF_ERROR(cache.Reserve(std::max<int64_t>(reserve, 1), backend_));
  return cache;
}

void Transformer::ComputeScales(int64_t layer, Tensor xn, absl::Span<const SeqInput> batch,
                                absl::Span<const int64_t> row_begin, std::vector<float>& scale) {
  const FocalConfig& f = config_.focal;
  if (f.mode != FocalConfig::Mode::kLearned) {
    std::fill(scale.begin(), scale.end(), static_cast<float>(config_.ConstantScale(layer)));
    return;
  }
  const LayerWeights& lw = weights_.layers[layer];
  std::vector<float> raw(xn.rows);
  backend_.RowDot(xn, lw.focal_tau_w.tensor(), lw.focal_tau_b, absl::MakeSpan(raw));
  auto clip = [&](double tau) {
    tau = std::max(tau, f.tau_min);
    if (f.tau_max.has_value()) tau = std::min(tau, *f.tau_max);
    return tau;
  };
  for (size_t s = 0; s < batch.size(); ++s) {
    const int64_t b = row_begin[s], n = static_cast<int64_t>(batch[s].tokens.size());
    if (f.reduction == FocalConfig::Reduction::kToken) {
      for (int64_t i = b; i < b + n; ++i) scale[i] = static_cast<float>(1.0 / clip(raw[i]));
      continue;
    }
    // sequence_mean: one tau over every token present so far (earlier chunks
    // included through the cache's running sum; earlier rows not recomputed).
    KvCache& cache = *batch[s].cache;
    double sum = cache.tau_sum()[layer];
    for (int64_t i = b; i < b + n; ++i) sum += raw[i];
    const int64_t count = cache.tau_count()[layer] + n;
    cache.tau_sum()[layer] = sum;
    cache.tau_count()[layer] = count;
    const float sc = static_cast<float>(1.0 / clip(sum / static_cast<double>(count)));
    for (int64_t i = b; i < b + n; ++i) scale[i] = sc;
  }
}

absl::Status Transformer::Forward(absl::Span<const SeqInput> batch,
                                  std::vector<std::vector<TokenScore>>& out,
                                  ForwardExtras* extras) {
  const ModelConfig& c = config_;
  const int64_t C = c.hidden_size, F = c.intermediate_size, H = c.num_heads, Hkv = c.num_kv_heads,
                D = c.head_dim;
  // Lay out the packed batch and validate every sequence first.
  std::vector<int32_t> tokens;
  std::vector<int64_t> positions, row_begin;
  std::vector<int64_t> head_rows;
  std::vector<int32_t> head_targets;
  for (const SeqInput& s : batch) {
    FOCAL_CHECK(s.cache != nullptr && s.score_rows.size() == s.targets.size());
    const int64_t past = s.cache->length(), n = static_cast<int64_t>(s.tokens.size());
    const int64_t end = past + n;
    if (!FitsPositions(end)) {
      return absl::OutOfRangeError(
          absl::StrCat("sequence of ", end, " tokens exceeds max_position_embeddings (",
                       c.max_position_embeddings, "); shorten it or allow length extrapolation"));
    }
    if (c.sliding_window.has_value() && end > *c.sliding_window) {
      return absl::UnimplementedError(absl::StrCat("sequence of ", end,
                                                   " tokens exceeds the sliding window (",
                                                   *c.sliding_window, "), which is not supported"));
    }
    row_begin.push_back(static_cast<int64_t>(tokens.size()));
    for (int64_t i = 0; i < n; ++i) {
      if (s.tokens[i] < 0 || s.tokens[i] >= c.vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "token id ", s.tokens[i], " is outside the vocabulary (", c.vocab_size, ")"));
      }
      tokens.push_back(s.tokens[i]);
      positions.push_back(past + i);
    }
    for (size_t i = 0; i < s.score_rows.size(); ++i) {
      if (s.score_rows[i] < 0 || s.score_rows[i] >= n) {
        return absl::InvalidArgumentError(
            absl::StrCat("score row ", s.score_rows[i], " outside the sequence's ", n, " tokens"));
      }
      if (s.targets[i] < 0 || s.targets[i] >= c.vocab_size) {
        return absl::InvalidArgumentError(
            absl::StrCat("target id ", s.targets[i], " is outside the vocabulary"));
      }
      head_rows.push_back(row_begin.back() + s.score_rows[i]);
      head_targets.push_back(s.targets[i]);
    }
    FOCAL_RETURN_IF_ERROR(s.cache->Reserve(end, backend_));
  }
  const absl::Span<const kernels::AttentionProbe> probes =
      extras != nullptr ? absl::MakeConstSpan(extras->probes)
                        : absl::Span<const kernels::AttentionProbe>();
  for (const kernels::AttentionProbe& p : probes) {
    if (p.seq < 0 || p.seq >= static_cast<int>(batch.size()) || p.row < 0 ||
        p.row >= static_cast<int64_t>(batch[p.seq].tokens.size())) {
      return absl::InvalidArgumentError(absl::StrCat("attention probe (sequence ", p.seq, ", row ",
                                                     p.row, ") is outside the batch"));
    }
  }
  if (extras != nullptr) {
    const size_t np = probes.size() * c.num_layers * H;
    extras->probe_entropy.assign(np, 0.0f);
    extras->probe_mass.assign(np, 0.0f);
    extras->logits.clear();
  }
  std::vector<float> probe_h(probes.size() * H), probe_m(probes.size() * H);
  const int64_t T = static_cast<int64_t>(tokens.size());
  out.assign(batch.size(), {});
  if (T == 0) return absl::OkStatus();

  auto alloc = [&](int64_t cols) { return backend_.Allocate(DType::kF32, T, cols); };
  FOCAL_ASSIGN_OR_RETURN(Buffer x, alloc(C));
  FOCAL_ASSIGN_OR_RETURN(Buffer xn, alloc(C));
  FOCAL_ASSIGN_OR_RETURN(Buffer q, alloc(H * D));
  FOCAL_ASSIGN_OR_RETURN(Buffer k, alloc(Hkv * D));
  FOCAL_ASSIGN_OR_RETURN(Buffer v, alloc(Hkv * D));
  // Attention reads q and the caches, and writes its output, in the
  // backend's attention dtype; RoPE and the projections stay F32, so with a
  // BF16 attention q is rounded into its own buffer and K/V on their way
  // into the cache.
  const DType att_dtype = backend_.AttentionDType();
  FOCAL_ASSIGN_OR_RETURN(Buffer att, backend_.Allocate(att_dtype, T, H * D));
  Buffer q_att;
  if (att_dtype != DType::kF32) {
    FOCAL_ASSIGN_OR_RETURN(q_att, backend_.Allocate(att_dtype, T, H * D));
  }
  FOCAL_ASSIGN_OR_RETURN(Buffer proj, alloc(C));
  FOCAL_ASSIGN_OR_RETURN(Buffer gate, alloc(F));
  FOCAL_ASSIGN_OR_RETURN(Buffer up, alloc(F));
  std::vector<float> scale(T);

  backend_.Embed(weights_.embed.tensor(), tokens, x.tensor());
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights& lw = weights_.layers[l];
    backend_.RmsNorm(x.tensor(), lw.input_norm.tensor(), static_cast<float>(c.rms_norm_eps),
                     xn.tensor());
    backend_.MatMul(xn.tensor(), lw.wq.tensor(), q.tensor());
    backend_.MatMul(xn.tensor(), lw.wk.tensor(), k.tensor());
    backend_.MatMul(xn.tensor(), lw.wv.tensor(), v.tensor());
    backend_.Rope(q.tensor(), static_cast<int>(H), static_cast<int>(D), positions, inv_freq_);
    backend_.Rope(k.tensor(), static_cast<int>(Hkv), static_cast<int>(D), positions, inv_freq_);
    ComputeScales(l, xn.tensor(), batch, row_begin, scale);
    std::vector<kernels::AttentionSeq> seqs;
    for (size_t s = 0; s < batch.size(); ++s) {
      KvCache& cache = *batch[s].cache;
      const int64_t n = static_cast<int64_t>(batch[s].tokens.size());
      backend_.CopyRows(k.tensor(), row_begin[s], cache.k(l), cache.length(), n);
      backend_.CopyRows(v.tensor(), row_begin[s], cache.v(l), cache.length(), n);
      seqs.push_back({row_begin[s], n, cache.length(), cache.k(l), cache.v(l)});
    }
    kernels::AttentionArgs args;
    if (att_dtype != DType::kF32) backend_.CopyRows(q.tensor(), 0, q_att.tensor(), 0, T);
    args.q = att_dtype != DType::kF32 ? q_att.tensor() : q.tensor();
    args.seqs = seqs;
    args.scale = scale;
    args.num_heads = static_cast<int>(H);
    args.num_kv_heads = static_cast<int>(Hkv);
    args.head_dim = static_cast<int>(D);
    args.out = att.tensor();
    backend_.Attention(args);
    if (!probes.empty()) {
      backend_.AttentionStats(args, probes, absl::MakeSpan(probe_h), absl::MakeSpan(probe_m));
      for (size_t p = 0; p < probes.size(); ++p) {
        const size_t at = (p * c.num_layers + l) * H;
        std::copy_n(probe_h.begin() + p * H, H, extras->probe_entropy.begin() + at);
        std::copy_n(probe_m.begin() + p * H, H, extras->probe_mass.begin() + at);
      }
    }
    backend_.MatMul(att.tensor(), lw.wo.tensor(), proj.tensor());
    backend_.Add(proj.tensor(), x.tensor());
    backend_.RmsNorm(x.tensor(), lw.post_norm.tensor(), static_cast<float>(c.rms_norm_eps),
                     xn.tensor());
    backend_.MatMul(xn.tensor(), lw.w_gate.tensor(), gate.tensor());
    backend_.MatMul(xn.tensor(), lw.w_up.tensor(), up.tensor());
    backend_.SwiGlu(gate.tensor(), up.tensor(), gate.tensor());
    backend_.MatMul(gate.tensor(), lw.w_down.tensor(), proj.tensor());
    backend_.Add(proj.tensor(), x.tensor());
  }
  for (size_t s = 0; s < batch.size(); ++s) {
    batch[s].cache->length_ += static_cast<int64_t>(batch[s].tokens.size());
  }

  // LM head at the scored rows only.
  const int64_t R = static_cast<int64_t>(head_rows.size());
  std::vector<double> logprob(R);
  std::vector<int32_t> argmax(R);
  if (extras != nullptr && extras->want_logits) extras->logits.resize(R * c.vocab_size);
  if (R > 0) {
    const int64_t chunk = std::min(R, kHeadRows);
    FOCAL_ASSIGN_OR_RETURN(Buffer hx, backend_.Allocate(DType::kF32, chunk, C));
    FOCAL_ASSIGN_OR_RETURN(Buffer hn, backend_.Allocate(DType::kF32, chunk, C));
    FOCAL_ASSIGN_OR_RETURN(Buffer logits, backend_.Allocate(DType::kF32, chunk, c.vocab_size));
    for (int64_t r0 = 0; r0 < R; r0 += chunk) {
      const int64_t n = std::min(chunk, R - r0);
      Tensor hxv = hx.View(n, C), hnv = hn.View(n, C), lv = logits.View(n, c.vocab_size);
      backend_.GatherRows(x.tensor(), absl::MakeConstSpan(head_rows).subspan(r0, n), hxv);
      backend_.RmsNorm(hxv, weights_.final_norm.tensor(), static_cast<float>(c.rms_norm_eps), hnv);
      backend_.MatMul(hnv, weights_.head().tensor(), lv);
      backend_.LogSoftmaxGather(lv, absl::MakeConstSpan(head_targets).subspan(r0, n),
                                absl::MakeSpan(logprob).subspan(r0, n),
                                absl::MakeSpan(argmax).subspan(r0, n));
      if (extras != nullptr && extras->want_logits) {
        backend_.CopyToHost(lv, extras->logits.data() + r0 * c.vocab_size);
      }
    }
  }
  FOCAL_RETURN_IF_ERROR(backend_.Sync());
  int64_t r = 0;
  for (size_t s = 0; s < batch.size(); ++s) {
    for (size_t i = 0; i < batch[s].score_rows.size(); ++i, ++r) {
      out[s].push_back({logprob[r], argmax[r]});
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>> Transformer::Generate(absl::Span<const int32_t> prompt,
                                                           int64_t max_new_tokens,
                                                           absl::Span<const int64_t> stop_ids) {
  if (prompt.empty()) return absl::InvalidArgumentError("generation needs a non-empty prompt");
  if (!FitsPositions(static_cast<int64_t>(prompt.size()))) {
    return absl::OutOfRangeError(absl::StrCat("prompt of ", prompt.size(),
                                              " tokens exceeds max_position_embeddings (",
                                              config_.max_position_embeddings, ")"));
  }
  FOCAL_ASSIGN_OR_RETURN(KvCache cache,
                         NewCache(static_cast<int64_t>(prompt.size()) + max_new_tokens));
  std::vector<int32_t> generated;
  std::vector<int32_t> feed(prompt.begin(), prompt.end());
  std::vector<std::vector<TokenScore>> out;
  while (static_cast<int64_t>(generated.size()) < max_new_tokens) {
    if (!FitsPositions(cache.length() + static_cast<int64_t>(feed.size()))) {
      break;  // The model's context is full: stop, as HF generate would refuse to go on.
    }
    const int64_t last = static_cast<int64_t>(feed.size()) - 1;
    const int32_t dummy_target = 0;
    SeqInput in{&cache, feed, absl::MakeConstSpan(&last, 1), absl::MakeConstSpan(&dummy_target, 1)};
    FOCAL_RETURN_IF_ERROR(Forward(absl::MakeConstSpan(&in, 1), out));
    const int32_t next = out[0][0].argmax;
    generated.push_back(next);
    if (std::find(stop_ids.begin(), stop_ids.end(), next) != stop_ids.end()) break;
    feed.assign(1, next);
  }
  return generated;
}

}  // namespace focal::model
