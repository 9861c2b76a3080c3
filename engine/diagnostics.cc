// SPDX-License-Identifier: Apache-2.0
#include "engine/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/scorer.h"

namespace focal::engine {
namespace {

std::vector<double> LogSoftmax(absl::Span<const float> logits) {
  double mx = -INFINITY;
  for (float x : logits) mx = std::max(mx, double{x});
  double z = 0;
  for (float x : logits) z += std::exp(double{x} - mx);
  const double lz = mx + std::log(z);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double{logits[i]} - lz;
  return out;
}

// Quantile q of sorted `v` (linear interpolation, as numpy's default).
double Quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

double KlDivergence(absl::Span<const float> p_logits, absl::Span<const float> q_logits) {
  const std::vector<double> lp = LogSoftmax(p_logits), lq = LogSoftmax(q_logits);
  double kl = 0;
  for (size_t i = 0; i < lp.size(); ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
  return std::max(kl, 0.0);  // rounding can leave -1e-17 for identical rows
}

absl::StatusOr<AttentionSummary> MeasureAttention(model::Transformer& tf,
                                                  absl::Span<const ProbeInput> inputs,
                                                  int64_t prefill_chunk) {
  const model::ModelConfig& c = tf.config();
  AttentionSummary sum;
  sum.num_layers = static_cast<int>(c.num_layers);
  sum.num_heads = static_cast<int>(c.num_heads);
  const size_t cells = static_cast<size_t>(c.num_layers * c.num_heads);
  sum.entropy.assign(cells, 0.0);
  std::vector<double> mass(cells, 0.0);
  int64_t with_mass = 0;
  prefill_chunk = std::max<int64_t>(prefill_chunk, 1);
  for (const ProbeInput& in : inputs) {
    const int64_t n = static_cast<int64_t>(in.tokens.size());
    if (in.row < 0 || in.row >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("attention probe row ", in.row, " outside a prompt of ", n, " tokens"));
    }
    FOCAL_ASSIGN_OR_RETURN(model::KvCache cache, tf.NewCache(in.row + 1));
    std::vector<std::vector<model::TokenScore>> out;
    model::ForwardExtras extras;
    // Learned sequence_mean: one call (the tau mean covers what is read).
    const int64_t chunk = c.focal.NeedsWholeSequence() ? in.row + 1 : prefill_chunk;
    for (int64_t b = 0; b <= in.row; b += chunk) {
      const int64_t e = std::min(in.row + 1, b + chunk);
      const int64_t probe = in.row - b;
      model::SeqInput s;
      s.cache = &cache;
      s.tokens = absl::MakeConstSpan(in.tokens).subspan(b, e - b);
      extras.probes.clear();
      if (e == in.row + 1) extras.probes.push_back({0, probe, in.key_ranges});
      FOCAL_RETURN_IF_ERROR(tf.Forward(absl::MakeConstSpan(&s, 1), out, &extras));
    }
    for (size_t i = 0; i < cells; ++i) sum.entropy[i] += extras.probe_entropy[i];
    if (!in.key_ranges.empty()) {
      for (size_t i = 0; i < cells; ++i) mass[i] += extras.probe_mass[i];
      ++with_mass;
    }
    ++sum.samples;
  }
  if (sum.samples > 0) {
    for (double& x : sum.entropy) x /= static_cast<double>(sum.samples);
  }
  if (with_mass > 0) {
    for (double& x : mass) x /= static_cast<double>(with_mass);
    sum.mass = std::move(mass);
  }
  return sum;
}

absl::StatusOr<AgreementSummary> MeasureAgreement(model::Transformer& base,
                                                  model::Transformer& focal,
                                                  absl::Span<const TokenizedRequest> requests,
                                                  int64_t batch_tokens) {
  if (base.config().vocab_size != focal.config().vocab_size) {
    return absl::FailedPreconditionError(
        absl::StrCat("logit agreement needs one vocabulary; the models have ",
                     base.config().vocab_size, " and ", focal.config().vocab_size, " tokens"));
  }
  const int64_t V = base.config().vocab_size;
  // Distinct requests only.
  std::vector<const TokenizedRequest*> todo;
  absl::flat_hash_set<std::string> seen;
  for (const TokenizedRequest& r : requests) {
    if (!r.continuation.empty() && seen.insert(r.Key()).second) todo.push_back(&r);
  }
  // Requests that share the input before their scored rows (the choices of
  // one multiple-choice context) run that prefix once per model; each
  // continuation then continues a copy of its cache, as the scorer does.
  std::map<std::vector<int32_t>, std::vector<const TokenizedRequest*>> groups;
  for (const TokenizedRequest* r : todo) {
    const size_t p = r->input.size() - r->continuation.size();
    groups[std::vector<int32_t>(r->input.begin(), r->input.begin() + p)].push_back(r);
  }
  std::vector<double> kls;
  int64_t same = 0;
  for (const auto& [prefix, reqs] : groups) {
    const int64_t p = static_cast<int64_t>(prefix.size());
    // (prefix named in the capture: C++20 lambdas may not capture a
    // structured binding implicitly under clang 14.)
    auto prefill = [&, &prefix = prefix](model::Transformer& tf) -> absl::StatusOr<model::KvCache> {
      FOCAL_ASSIGN_OR_RETURN(model::KvCache cache, tf.NewCache(p + 1));
      if (p > 0) {
        std::vector<std::vector<model::TokenScore>> out;
        const model::SeqInput in{&cache, prefix, {}, {}};
        FOCAL_RETURN_IF_ERROR(tf.Forward(absl::MakeConstSpan(&in, 1), out));
      }
      return cache;
    };
    FOCAL_ASSIGN_OR_RETURN(const model::KvCache base_prefix, prefill(base));
    FOCAL_ASSIGN_OR_RETURN(const model::KvCache focal_prefix, prefill(focal));
    size_t next = 0;
    while (next < reqs.size()) {
      // Pack continuations up to the budget (one oversized one runs alone).
      std::vector<const TokenizedRequest*> pack;
      int64_t used = 0;
      while (next < reqs.size()) {
        const int64_t k = static_cast<int64_t>(reqs[next]->continuation.size());
        if (!pack.empty() && used + k > batch_tokens) break;
        pack.push_back(reqs[next++]);
        used += k;
      }
      std::vector<std::vector<int64_t>> rows(pack.size());
      for (size_t i = 0; i < pack.size(); ++i) {
        rows[i].resize(pack[i]->continuation.size());
        std::iota(rows[i].begin(), rows[i].end(), 0);
      }
      auto run = [&](model::Transformer& tf, const model::KvCache& from, model::ForwardExtras& ex,
                     std::vector<std::vector<model::TokenScore>>& out) -> absl::Status {
        std::vector<model::KvCache> caches;
        std::vector<model::SeqInput> batch;
        caches.reserve(pack.size());
        for (size_t i = 0; i < pack.size(); ++i) {
          const TokenizedRequest& r = *pack[i];
          const int64_t k = static_cast<int64_t>(r.continuation.size());
          FOCAL_ASSIGN_OR_RETURN(model::KvCache c, from.Clone(tf.backend(), p + k));
          caches.push_back(std::move(c));
          batch.push_back(
              {&caches.back(), absl::MakeConstSpan(r.input).subspan(p), rows[i], r.continuation});
        }
        ex.want_logits = true;
        return tf.Forward(batch, out, &ex);
      };
      model::ForwardExtras eb, ef;
      std::vector<std::vector<model::TokenScore>> ob, of;
      FOCAL_RETURN_IF_ERROR(run(base, base_prefix, eb, ob));
      FOCAL_RETURN_IF_ERROR(run(focal, focal_prefix, ef, of));
      int64_t r = 0;
      for (size_t i = 0; i < pack.size(); ++i) {
        for (size_t j = 0; j < ob[i].size(); ++j, ++r) {
          auto pb = absl::MakeConstSpan(eb.logits).subspan(r * V, V);
          auto pf = absl::MakeConstSpan(ef.logits).subspan(r * V, V);
          kls.push_back(KlDivergence(pb, pf));
          same += ob[i][j].argmax == of[i][j].argmax;
        }
      }
    }
  }
  AgreementSummary s;
  s.tokens = static_cast<int64_t>(kls.size());
  if (kls.empty()) return s;
  const double n = static_cast<double>(kls.size());
  double mean = 0;
  for (double x : kls) mean += x;
  mean /= n;
  double var = 0;
  for (double x : kls) var += (x - mean) * (x - mean);
  s.mean_kl = mean;
  s.kl_stderr = kls.size() > 1 ? std::sqrt(var / (n - 1) / n) : 0;
  std::sort(kls.begin(), kls.end());
  s.median_kl = Quantile(kls, 0.5);
  s.p99_kl = Quantile(kls, 0.99);
  s.max_kl = kls.back();
  s.same_argmax = static_cast<double>(same) / n;
  s.same_argmax_stderr = std::sqrt(s.same_argmax * (1 - s.same_argmax) / n);
  return s;
}

}  // namespace focal::engine
