// SPDX-License-Identifier: Apache-2.0
// End-to-end scoring throughput of the shared forward pass on a backend:
// a model of a real shape with random BF16 weights (--shape 1b: Llama-3.2-1B,
// 16 layers, d=2048, 32/8 heads of 64, FFN 8192, 128256-token tied vocabulary;
// --shape smollm2: SmolLM2-135M, the default model), packed batches of
// --seq-len-token sequences, log-probabilities at every row (perplexity-style)
// or at the last 32 rows of each sequence (multiple-choice style).
// Reports tokens/s and MFU against a dense BF16 peak (--peak-tflops, default
// 989 for H100/H200 SXM). Median over --repeats forward calls after one
// warm-up; every call starts from empty caches.
//
// Usage: e2e_score_bench [--device cuda] [--shape 1b|smollm2] [--repeats N] [--seqs 8]
//                        [--seq-len 2048] [--peak-tflops 989] [--scored all|last32|both]
// The last lines are "RESULT name value" records for tests/device/run.sh.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/random_model.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/transformer.h"
#include "model/weights.h"

namespace {

using focal::kernels::Backend;
using focal::kernels::Buffer;
using focal::kernels::DType;
using Clock = std::chrono::steady_clock;
using focal::bench::Median;

// Forward FLOPs: linear layers, causal attention over each sequence, and the
// LM head at the scored rows.
double ForwardFlops(const focal::model::ModelConfig& c, int64_t seqs, int64_t len,
                    int64_t scored_per_seq) {
  const double C = c.hidden_size, F = c.intermediate_size, L = c.num_layers;
  const double qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  const double T = static_cast<double>(seqs * len);
  const double linear = 2.0 * T * L * (2 * qd * C + 2 * kvd * C + 3 * F * C);
  const double attn = 4.0 * L * c.num_heads * c.head_dim * seqs * (len * (len + 1) / 2.0);
  const double head = 2.0 * C * c.vocab_size * seqs * scored_per_seq;
  return linear + attn + head;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cuda", shape = "1b";
  std::string scored_modes = "both";  // all, last32 or both
  int repeats = 5;
  int64_t num_seqs = 8, seq_len = 2048;
  double peak = 989.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device")) device = argv[i + 1];
    if (!std::strcmp(argv[i], "--shape")) shape = argv[i + 1];
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seqs")) num_seqs = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seq-len")) seq_len = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--peak-tflops")) peak = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--scored")) scored_modes = argv[i + 1];
  }
  if (scored_modes != "all" && scored_modes != "last32" && scored_modes != "both") {
    std::fprintf(stderr, "--scored must be all, last32 or both\n");
    return 2;
  }
  if (shape != "1b" && shape != "smollm2") {
    std::fprintf(stderr, "--shape must be 1b or smollm2\n");
    return 2;
  }
  auto be = focal::kernels::CreateBackend(device, 0);
  if (!be.ok()) {
    std::fprintf(stderr, "%s\n", be.status().ToString().c_str());
    return 1;
  }
  const focal::model::ModelConfig config =
      shape == "1b" ? focal::bench::Llama32_1B() : focal::bench::SmolLm2_135M();
  const auto t_load = Clock::now();
  const focal::model::LlamaWeights weights = focal::bench::RandomWeights(config, **be);
  std::printf(
      "e2e scoring benchmark on %s: %s shape, random BF16 weights (%.2fB "
      "parameters, %.1f s to upload)\n%lld sequences x %lld tokens packed per forward, "
      "median of %d runs, MFU against %.0f TFLOP/s\n\n",
      (*be)->name().c_str(), shape == "1b" ? "Llama-3.2-1B" : "SmolLM2-135M",
      weights.num_parameters / 1e9, std::chrono::duration<double>(Clock::now() - t_load).count(),
      static_cast<long long>(num_seqs), static_cast<long long>(seq_len), repeats, peak);
  focal::model::Transformer tf(config, weights, **be);

  std::mt19937 rng(3);
  std::vector<std::vector<int32_t>> tokens(num_seqs);
  for (auto& s : tokens) {
    s.resize(seq_len);
    for (auto& t : s) t = 3 + static_cast<int32_t>(rng() % (config.vocab_size - 3));
  }
  std::printf("| scored rows | tokens | median s | tokens/s | TFLOP/s | MFU |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  std::vector<std::pair<std::string, double>> results;
  for (int64_t scored : {seq_len, int64_t{32}}) {
    if (scored_modes != "both" && (scored == seq_len) != (scored_modes == "all")) continue;
    std::vector<std::vector<int64_t>> rows(num_seqs);
    std::vector<std::vector<int32_t>> targets(num_seqs);
    for (int64_t s = 0; s < num_seqs; ++s) {
      for (int64_t r = seq_len - scored; r < seq_len; ++r) {
        rows[s].push_back(r);
        targets[s].push_back(r + 1 < seq_len ? tokens[s][r + 1] : 5);
      }
    }
    std::vector<double> secs;
    double check = 0;
    for (int rep = 0; rep < repeats + 1; ++rep) {
      std::vector<focal::model::KvCache> caches;
      for (int64_t s = 0; s < num_seqs; ++s) caches.push_back(*tf.NewCache(seq_len));
      std::vector<focal::model::SeqInput> batch;
      for (int64_t s = 0; s < num_seqs; ++s) {
        batch.push_back({&caches[s], tokens[s], rows[s], targets[s]});
      }
      std::vector<std::vector<focal::model::TokenScore>> out;
      const auto t0 = Clock::now();
      const absl::Status st = tf.Forward(batch, out);
      const auto t1 = Clock::now();
      if (!st.ok()) {
        std::fprintf(stderr, "forward failed: %s\n", st.ToString().c_str());
        return 1;
      }
      if (rep > 0) secs.push_back(std::chrono::duration<double>(t1 - t0).count());
      check = out[0][0].logprob;
    }
    if (!std::isfinite(check)) {
      std::fprintf(stderr, "non-finite log-probability %f\n", check);
      return 1;
    }
    const double s = Median(secs);
    const int64_t T = num_seqs * seq_len;
    const double tflops = ForwardFlops(config, num_seqs, seq_len, scored) / s / 1e12;
    std::printf("| %s | %lld | %.4f | %.0f | %.1f | %.1f%% |\n",
                scored == seq_len ? "all" : "last 32 per sequence", static_cast<long long>(T), s,
                T / s, tflops, 100.0 * tflops / peak);
    const std::string tag =
        std::string(scored == seq_len ? "all_rows" : "last32") + (shape == "1b" ? "" : "_" + shape);
    results.push_back({"e2e_tokens_per_s_" + tag, T / s});
    results.push_back({"e2e_mfu_percent_" + tag, 100.0 * tflops / peak});
  }
  std::printf("\n");
  for (const auto& [name, v] : results) std::printf("RESULT %s %.2f\n", name.c_str(), v);
  return 0;
}
