// SPDX-License-Identifier: Apache-2.0
// Long-context prefill on a backend: one prompt of --tokens tokens through a
// random-weight model of a real shape (--shape 1b: Llama-3.2-1B, 8b:
// Llama-3.1-8B), prefilled in --chunk-token chunks through the KV cache as a
// long-context run does, the last 32 rows scored. Reports tokens/s, the
// memory the run predicts up front (EstimateGenerationBytes, what
// `focal-eval run` checks before starting) and the memory the backend
// actually held at its peak beyond the weights (on a GPU, the allocator's
// exact count; on the CPU only the growth of the process's peak RSS, which
// the weight upload's temporary buffers already raised: a weak check there).
//
// --tokens takes a comma-separated list (8192,16384,32768): the weights are
// uploaded once and each length runs from an empty cache.
//
// Usage: long_prefill_bench [--device cuda] [--shape 1b|8b] [--tokens 131072[,...]]
//                           [--chunk 2048]
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
#include "model/memory_estimate.h"
#include "model/transformer.h"

using Clock = std::chrono::steady_clock;
using focal::bench::PeakRssBytes;

namespace {

// One prompt of `tokens` tokens prefilled in `chunk`-token chunks from an
// empty cache; prints its row and RESULT records. False when it failed or
// used more memory than predicted.
bool Prefill(focal::model::Transformer& tf, const focal::model::ModelConfig& config,
             focal::kernels::Backend& backend, const std::string& shape, int64_t tokens,
             int64_t chunk) {
  const int64_t estimate = focal::model::EstimateGenerationBytes(config, tokens, chunk, 1, backend);
  const int64_t available = backend.AvailableMemoryBytes();
  backend.ResetPeakMemory();
  const int64_t held_before = backend.PeakMemoryBytes();
  const int64_t rss_before = PeakRssBytes();

  std::mt19937 rng(5);
  std::vector<int32_t> prompt(tokens);
  for (auto& t : prompt) t = 3 + static_cast<int32_t>(rng() % (config.vocab_size - 3));
  const auto t0 = Clock::now();
  double last = 0;
  {
    auto cache = tf.NewCache(tokens);
    if (!cache.ok()) {
      std::fprintf(stderr, "%s\n", cache.status().ToString().c_str());
      return false;
    }
    std::vector<std::vector<focal::model::TokenScore>> out;
    for (int64_t b = 0; b < tokens; b += chunk) {
      const int64_t n = std::min(chunk, tokens - b);
      std::vector<int64_t> rows;
      std::vector<int32_t> targets;
      for (int64_t r = std::max<int64_t>(0, tokens - 32 - b); r < n; ++r) {
        rows.push_back(r);
        targets.push_back(b + r + 1 < tokens ? prompt[b + r + 1] : 5);
      }
      focal::model::SeqInput in{&*cache, absl::MakeConstSpan(prompt).subspan(b, n), rows, targets};
      const absl::Status st = tf.Forward(absl::MakeConstSpan(&in, 1), out);
      if (!st.ok()) {
        std::fprintf(stderr, "forward failed at token %lld: %s\n", static_cast<long long>(b),
                     st.ToString().c_str());
        return false;
      }
      if (!out[0].empty()) last = out[0].back().logprob;
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!std::isfinite(last)) {
    std::fprintf(stderr, "non-finite log-probability %f\n", last);
    return false;
  }
  const int64_t held_peak = backend.PeakMemoryBytes();
  const bool device_tracked = held_peak >= 0;
  const int64_t used = device_tracked ? held_peak - held_before : PeakRssBytes() - rss_before;
  const bool within = used <= estimate;
  std::printf("| %lld | %.2f | %.0f | %.1f | %.1f | %s | %.1f |\n", static_cast<long long>(tokens),
              secs, tokens / secs, estimate / 1048576.0, used / 1048576.0, within ? "yes" : "NO",
              available / 1048576.0);
  const std::string tag = shape + "_" + std::to_string(tokens);
  std::printf("RESULT long_tokens_per_s_%s %.2f\n", tag.c_str(), tokens / secs);
  std::printf("RESULT long_predicted_mib_%s %.1f\n", tag.c_str(), estimate / 1048576.0);
  std::printf("RESULT long_peak_mib_%s %.1f\n", tag.c_str(), used / 1048576.0);
  std::printf("RESULT long_within_%s %d\n", tag.c_str(), within ? 1 : 0);
  std::fflush(stdout);
  return within;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cuda", shape = "1b";
  std::vector<int64_t> lengths = {131072};
  int64_t chunk = 2048;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device")) device = argv[i + 1];
    if (!std::strcmp(argv[i], "--shape")) shape = argv[i + 1];
    if (!std::strcmp(argv[i], "--chunk")) chunk = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--tokens")) {
      lengths.clear();
      for (const char* p = argv[i + 1]; *p != '\0';) {
        char* end = nullptr;
        const long long v = std::strtoll(p, &end, 10);
        if (end == p || v <= 0) {
          std::fprintf(stderr, "--tokens wants positive lengths separated by commas: %s\n",
                       argv[i + 1]);
          return 2;
        }
        lengths.push_back(v);
        p = *end == ',' ? end + 1 : end;
      }
    }
  }
  if (shape != "1b" && shape != "8b") {
    std::fprintf(stderr, "--shape must be 1b or 8b\n");
    return 2;
  }
  if (lengths.empty() || chunk <= 0) {
    std::fprintf(stderr, "--tokens and --chunk must be positive\n");
    return 2;
  }
  auto be = focal::kernels::CreateBackend(device, 0);
  if (!be.ok()) {
    std::fprintf(stderr, "%s\n", be.status().ToString().c_str());
    return 1;
  }
  focal::kernels::Backend& backend = **be;
  focal::model::ModelConfig config =
      shape == "1b" ? focal::bench::Llama32_1B() : focal::bench::Llama31_8B();
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  config.max_position_embeddings = std::max(config.max_position_embeddings, longest + 1);
  const auto t_load = Clock::now();
  const focal::model::LlamaWeights weights = focal::bench::RandomWeights(config, backend);
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  focal::model::Transformer tf(config, weights, backend);
  const bool tracked = backend.PeakMemoryBytes() >= 0;
  std::printf(
      "long-context prefill on %s: %s shape (%.2fB parameters, random BF16, %.1f s to upload), "
      "one prompt per length in %lld-token chunks, last 32 rows scored\n\n"
      "| tokens | seconds | tokens/s | predicted MiB | peak MiB beyond weights (%s) | within | "
      "available MiB |\n|---:|---:|---:|---:|---:|---|---:|\n",
      backend.name().c_str(), shape.c_str(), weights.num_parameters / 1e9, load_s,
      static_cast<long long>(chunk), tracked ? "backend allocator" : "process RSS growth");
  bool ok = true;
  for (int64_t tokens : lengths) ok = Prefill(tf, config, backend, shape, tokens, chunk) && ok;
  return ok ? 0 : 3;
}
