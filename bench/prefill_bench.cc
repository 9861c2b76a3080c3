// SPDX-License-Identifier: Apache-2.0
// CPU prefill throughput: tokens/s and achieved GFLOP/s of the forward pass
// for the bundled stories260K and a ~110M-parameter random LLaMA, at 512 and
// 2048 tokens; then the backend's own GEMM (kernels/cpu/gemm.h) next to
// OpenBLAS's sgemm on the model's linear-layer shapes, taking turns in the
// same run. Medians over --repeats runs.
// Usage: prefill_bench [--threads N] [--repeats R] [--gemm-only]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/asset_root.h"
#include "base/thread_pool.h"
#include "bench/bench_util.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm.h"
#include "model/language_model.h"

namespace {

using focal::kernels::Buffer;
using focal::kernels::CpuBackend;
using focal::kernels::DType;
using Clock = std::chrono::steady_clock;
using focal::bench::Median;

Buffer RandomBuffer(CpuBackend& be, int64_t rows, int64_t cols, float std, float mean,
                    std::mt19937& rng) {
  Buffer b = *be.Allocate(DType::kF32, rows, cols);
  std::normal_distribution<float> d(mean, std);
  float* p = b.tensor().as<float>();
  for (int64_t i = 0; i < rows * cols; ++i) p[i] = d(rng);
  return b;
}

// A LLaMA of roughly GPT-2-small size (the "~100M" config of the issue).
focal::model::ModelConfig RandomConfig() {
  focal::model::ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 768;
  c.intermediate_size = 2048;
  c.num_layers = 12;
  c.num_heads = 12;
  c.num_kv_heads = 12;
  c.head_dim = 64;
  c.vocab_size = 32000;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5;
  c.tie_word_embeddings = true;
  return c;
}

focal::model::LlamaWeights RandomWeights(const focal::model::ModelConfig& c, CpuBackend& be) {
  std::mt19937 rng(1);
  focal::model::LlamaWeights w;
  const int64_t C = c.hidden_size, F = c.intermediate_size;
  const int64_t qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  w.embed = RandomBuffer(be, c.vocab_size, C, 0.02f, 0, rng);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    focal::model::LayerWeights lw;
    lw.input_norm = RandomBuffer(be, 1, C, 0.0f, 1.0f, rng);
    lw.wq = RandomBuffer(be, qd, C, 0.02f, 0, rng);
    lw.wk = RandomBuffer(be, kvd, C, 0.02f, 0, rng);
    lw.wv = RandomBuffer(be, kvd, C, 0.02f, 0, rng);
    lw.wo = RandomBuffer(be, C, qd, 0.02f, 0, rng);
    lw.post_norm = RandomBuffer(be, 1, C, 0.0f, 1.0f, rng);
    lw.w_gate = RandomBuffer(be, F, C, 0.02f, 0, rng);
    lw.w_up = RandomBuffer(be, F, C, 0.02f, 0, rng);
    lw.w_down = RandomBuffer(be, C, F, 0.02f, 0, rng);
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = RandomBuffer(be, 1, C, 0.0f, 1.0f, rng);
  w.num_parameters =
      c.vocab_size * C + C + c.num_layers * (2 * C + 2 * qd * C + 2 * kvd * C + 3 * F * C);
  return w;
}

// Forward FLOPs of a T-token prefill scoring one row: linear layers, causal
// attention (QK^T and PV over the visible keys), one LM-head row.
double PrefillFlops(const focal::model::ModelConfig& c, int64_t T) {
  const double C = c.hidden_size, F = c.intermediate_size, L = c.num_layers;
  const double qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  const double linear = 2.0 * T * L * (2 * qd * C + 2 * kvd * C + 3 * F * C);
  const double attn = 2.0 * 2.0 * L * c.num_heads * c.head_dim * (T * (T + 1) / 2.0);
  return linear + attn + 2.0 * C * c.vocab_size;
}

double TimePrefill(focal::model::Transformer& tf, int64_t T, int repeats) {
  std::vector<int32_t> tokens(T);
  std::mt19937 rng(2);
  for (auto& t : tokens) t = 3 + static_cast<int32_t>(rng() % (tf.config().vocab_size - 3));
  std::vector<double> secs;
  for (int r = 0; r < repeats + 1; ++r) {  // first run warms up
    auto cache = tf.NewCache(T);
    const int64_t row = T - 1;
    const int32_t target = 5;
    focal::model::SeqInput in{&*cache, tokens, absl::MakeConstSpan(&row, 1),
                              absl::MakeConstSpan(&target, 1)};
    std::vector<std::vector<focal::model::TokenScore>> out;
    auto t0 = Clock::now();
    absl::Status st = tf.Forward(absl::MakeConstSpan(&in, 1), out);
    auto t1 = Clock::now();
    if (!st.ok()) {
      std::fprintf(stderr, "forward failed: %s\n", std::string(st.message()).c_str());
      std::exit(1);
    }
    if (r > 0) secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  return Median(secs);
}

// GFLOP/s of out(M,N) = a(M,K) . b(N,K)^T: our GEMM (on a pool) and
// OpenBLAS's sgemm (threaded by OpenBLAS), taking turns so both see the same
// machine load. Each round starts with a pause and a warm-up call: OpenBLAS's
// threads spin for a while after a call and would slow whatever runs next.
// Returns {OpenBLAS, ours}.
std::pair<double, double> GemmGflops(int64_t M, int64_t N, int64_t K, int threads, int repeats) {
  std::vector<float> a(M * K), b(N * K), c(M * N);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (float& v : a) v = d(rng);
  for (float& v : b) v = d(rng);
  focal::ThreadPool pool(threads);
  openblas_set_num_threads(threads);
  std::vector<double> blas, ours;
  auto gemm = [&] {
    focal::kernels::cpu::ParallelGemmNT(pool, {a.data(), K}, {b.data(), K}, {c.data(), N}, M, N, K);
  };
  for (int r = 0; r < repeats; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    gemm();  // warms up again after the pause
    auto t0 = Clock::now();
    gemm();
    auto t1 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K,
                0.0f, c.data(), N);
    auto t2 = Clock::now();
    ours.push_back(std::chrono::duration<double>(t1 - t0).count());
    blas.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  const double flop = 2.0 * M * N * K;
  return {flop / Median(blas) / 1e9, flop / Median(ours) / 1e9};
}

int PrintGemmTable(int all, int repeats) {
  std::printf(
      "\n| GEMM (M x N x K) | OpenBLAS, %d threads | ours, %d threads | OpenBLAS, 1 thread "
      "| ours, 1 thread |\n|---|---:|---:|---:|---:|\n",
      all, all);
  // The random-110M linear layers at 512 and 2048 tokens (q/k/v/o, gate/up,
  // down), one decode-sized call, and the LM head for 64 scored rows.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{512, 768, 768},
                         {512, 2048, 768},
                         {512, 768, 2048},
                         {2048, 768, 768},
                         {2048, 2048, 768},
                         {2048, 768, 2048},
                         {1, 2048, 768},
                         {64, 32000, 768}}) {
    const auto [blas_all, ours_all] = GemmGflops(m, n, k, all, repeats);
    const auto [blas_one, ours_one] = GemmGflops(m, n, k, 1, repeats);
    std::printf("| %lld x %lld x %lld | %.1f | %.1f | %.1f | %.1f |\n", static_cast<long long>(m),
                static_cast<long long>(n), static_cast<long long>(k), blas_all, ours_all, blas_one,
                ours_one);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0, repeats = 5;
  bool gemm_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gemm-only")) gemm_only = true;
    if (i + 1 < argc && !std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[++i]);
    if (i + 1 < argc && !std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[++i]);
  }
  // GEMMs on all threads, and on one for the per-core figure.
  const int all = threads > 0 ? threads : focal::UsableCores();
  if (gemm_only) return PrintGemmTable(all, repeats);
  CpuBackend be(threads);
  std::printf("CPU prefill benchmark: %d threads (0 = all), median of %d runs\n\n", threads,
              repeats);
  std::printf("| model | params | tokens | median s | tokens/s | GFLOP/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");

  focal::model::LoadOptions opts;
  opts.transformer.allow_length_extrapolation = true;  // stories260K has 512 positions
  auto stories = focal::model::LanguageModel::Load(FOCAL_STORIES260K_DIR, be, opts);
  if (!stories.ok()) {
    std::fprintf(stderr, "%s\n", std::string(stories.status().message()).c_str());
    return 1;
  }
  focal::model::ModelConfig big = RandomConfig();
  focal::model::LlamaWeights big_w = RandomWeights(big, be);
  focal::model::Transformer big_tf(big, big_w, be);
  struct Case {
    const char* name;
    focal::model::Transformer* tf;
    int64_t params;
  };
  for (const Case& c :
       {Case{"stories260K", &(*stories)->transformer(), (*stories)->weights().num_parameters},
        Case{"random-110M", &big_tf, big_w.num_parameters}}) {
    for (int64_t T : {512, 2048}) {
      const double s = TimePrefill(*c.tf, T, repeats);
      std::printf("| %s%s | %.1fM | %lld | %.4f | %.0f | %.1f |\n", c.name,
                  (T > c.tf->config().max_position_embeddings ? " (RoPE extended)" : ""),
                  c.params / 1e6, static_cast<long long>(T), s, T / s,
                  PrefillFlops(c.tf->config(), T) / s / 1e9);
    }
  }
  // Long prompts: chunked prefill (2048 tokens a step, as `run` does) of a
  // small random model, one run each (they take a while).
  {
    focal::model::ModelConfig small = RandomConfig();
    small.hidden_size = 256;
    small.intermediate_size = 688;
    small.num_layers = 4;
    small.num_heads = 4;
    small.num_kv_heads = 4;
    small.head_dim = 64;
    small.max_position_embeddings = 32768;
    focal::model::LlamaWeights small_w = RandomWeights(small, be);
    focal::model::Transformer small_tf(small, small_w, be);
    std::printf(
        "\n| model (chunked prefill, 2048/step) | params | tokens | s | tokens/s |\n"
        "|---|---:|---:|---:|---:|\n");
    for (int64_t T : {4096, 16384, 32768}) {
      std::vector<int32_t> tokens(T);
      for (int64_t i = 0; i < T; ++i) tokens[i] = 3 + static_cast<int32_t>((i * 7919) % 31000);
      auto cache = small_tf.NewCache(T);
      std::vector<std::vector<focal::model::TokenScore>> out;
      auto t0 = Clock::now();
      for (int64_t b = 0; b < T; b += 2048) {
        focal::model::SeqInput in{&*cache, absl::MakeConstSpan(tokens).subspan(b, 2048), {}, {}};
        if (!small_tf.Forward(absl::MakeConstSpan(&in, 1), out).ok()) return 1;
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("| random-%.0fM | %.1fM | %lld | %.2f | %.0f |\n", small_w.num_parameters / 1e6,
                  small_w.num_parameters / 1e6, static_cast<long long>(T), s, T / s);
    }
  }

  return PrintGemmTable(all, repeats);
}
