// SPDX-License-Identifier: Apache-2.0
// The CPU's BF16 mode (--precision bf16) beside the exact F32 mode, taking
// turns in one run: (1) our GEMM with F32 and with BF16 weights on the
// default model's linear-layer shapes (prefill rows and one decode row),
// (2) the default model's prefill (512 and 2048 tokens, scoring the last
// position) and single-sequence greedy decode steps after a 512-token
// prompt, loaded once per mode. Medians over --repeats. The peak memory of
// each mode is a separate process's (`/usr/bin/time -v focal-eval ...`;
// docs/benchmarks.md).
// Usage: bf16_bench [--model PATH] [--threads N] [--repeats R] [--gemm-only]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/asset_root.h"
#include "base/thread_pool.h"
#include "bench/bench_util.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm.h"
#include "kernels/dtype.h"
#include "model/language_model.h"

namespace {

using focal::bench::Median;
using focal::kernels::CpuBackend;
using focal::kernels::CpuPrecision;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Seconds of out(M,N) = x(M,K) . w(N,K)^T on the same operands: F32; BF16
// widened; BF16 by vdpbf16ps (0 without AVX512_BF16).
struct GemmTimes {
  double f32, widen, dot;
};
GemmTimes TimeGemm(focal::ThreadPool& pool, int64_t M, int64_t N, int64_t K, int repeats) {
  namespace cpu = focal::kernels::cpu;
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(M * K), w(N * K), out(M * N);
  std::vector<uint16_t> xb(M * K), wb(N * K);
  for (int64_t i = 0; i < M * K; ++i) {
    xb[i] = focal::kernels::F32ToBf16(d(rng));
    x[i] = focal::kernels::Bf16ToF32(xb[i]);
  }
  for (int64_t i = 0; i < N * K; ++i) {
    wb[i] = focal::kernels::F32ToBf16(d(rng));
    w[i] = focal::kernels::Bf16ToF32(wb[i]);
  }
  // Enough calls per timing that small shapes take milliseconds.
  const int calls = static_cast<int>(std::max<int64_t>(1, 200000000 / (2 * M * N * K)));
  const bool dot = cpu::GemmHasAvx512Bf16();
  std::vector<double> secs[3];
  for (int r = 0; r < repeats + 1; ++r) {
    for (int v = 0; v < (dot ? 3 : 2); ++v) {
      auto t0 = Clock::now();
      for (int c = 0; c < calls; ++c) {
        if (v == 0) {
          cpu::ParallelGemmNT(pool, {x.data(), K}, {w.data(), K}, {out.data(), N}, M, N, K);
        } else {
          cpu::ParallelGemmNT(pool, cpu::ConstMatBf16{xb.data(), K}, {wb.data(), K},
                              {out.data(), N}, M, N, K,
                              v == 1 ? cpu::GemmPath::kWiden : cpu::GemmPath::kBest);
        }
      }
      if (r > 0) secs[v].push_back(Seconds(t0, Clock::now()) / calls);  // r == 0: warm-up
    }
  }
  return {Median(secs[0]), Median(secs[1]), dot ? Median(secs[2]) : 0.0};
}

std::vector<int32_t> RandomTokens(int64_t n, int64_t vocab) {
  std::mt19937 rng(2);
  std::vector<int32_t> t(n);
  for (auto& v : t) v = 3 + static_cast<int32_t>(rng() % (vocab - 3));
  return t;
}

double TimePrefill(focal::model::Transformer& tf, int64_t T) {
  const std::vector<int32_t> tokens = RandomTokens(T, tf.config().vocab_size);
  auto cache = tf.NewCache(T);
  const int64_t row = T - 1;
  const int32_t target = 5;
  focal::model::SeqInput in{&*cache, tokens, absl::MakeConstSpan(&row, 1),
                            absl::MakeConstSpan(&target, 1)};
  std::vector<std::vector<focal::model::TokenScore>> out;
  auto t0 = Clock::now();
  if (absl::Status s = tf.Forward(absl::MakeConstSpan(&in, 1), out); !s.ok()) {
    std::fprintf(stderr, "forward failed: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
  return Seconds(t0, Clock::now());
}

// Seconds per one-token greedy step after a `prompt`-token prefill.
double TimeDecode(focal::model::Transformer& tf, int64_t prompt, int steps) {
  const std::vector<int32_t> tokens = RandomTokens(prompt, tf.config().vocab_size);
  auto cache = tf.NewCache(prompt + steps);
  std::vector<std::vector<focal::model::TokenScore>> out;
  int64_t row = prompt - 1;
  int32_t target = 5;
  focal::model::SeqInput in{&*cache, tokens, absl::MakeConstSpan(&row, 1),
                            absl::MakeConstSpan(&target, 1)};
  if (!tf.Forward(absl::MakeConstSpan(&in, 1), out).ok()) std::exit(1);
  int32_t next = out[0][0].argmax;
  row = 0;
  auto t0 = Clock::now();
  for (int s = 0; s < steps; ++s) {
    focal::model::SeqInput step{&*cache, absl::MakeConstSpan(&next, 1),
                                absl::MakeConstSpan(&row, 1), absl::MakeConstSpan(&target, 1)};
    if (!tf.Forward(absl::MakeConstSpan(&step, 1), out).ok()) std::exit(1);
    next = out[0][0].argmax;
  }
  return Seconds(t0, Clock::now()) / steps;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeats = 5;
  bool gemm_only = false;
  std::string model_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gemm-only")) gemm_only = true;
    if (i + 1 < argc && !std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[++i]);
    if (i + 1 < argc && !std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[++i]);
    if (i + 1 < argc && !std::strcmp(argv[i], "--model")) model_path = argv[++i];
  }
  if (std::string why = focal::kernels::CpuPrecisionUnsupported(CpuPrecision::kBf16);
      !why.empty()) {
    std::fprintf(stderr, "bf16_bench: %s\n", why.c_str());
    return 1;
  }
  focal::ThreadPool pool(threads);
  std::printf(
      "GEMM, %d threads, median of %d, taking turns: F32, BF16 widened to F32, BF16 by "
      "vdpbf16ps (%s)\n\n",
      threads, repeats,
      focal::kernels::cpu::GemmHasAvx512Bf16() ? "AVX512_BF16" : "absent on this CPU");
  std::printf(
      "| M x N x K | what | F32 GFLOP/s | widened GFLOP/s | vdpbf16ps GFLOP/s | "
      "vdpbf16ps / F32 |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  struct Shape {
    int64_t m, n, k;
    const char* what;
  };
  const Shape shapes[] = {
      {512, 576, 576, "q, o"},     {512, 192, 576, "k, v"},       {512, 1536, 576, "gate, up"},
      {512, 576, 1536, "down"},    {64, 49152, 576, "LM head"},   {1, 576, 576, "decode q, o"},
      {1, 1536, 576, "decode up"}, {1, 576, 1536, "decode down"}, {1, 49152, 576, "decode head"},
  };
  for (const Shape& s : shapes) {
    const GemmTimes t = TimeGemm(pool, s.m, s.n, s.k, repeats);
    const double gflop = 2.0 * s.m * s.n * s.k / 1e9;
    std::printf("| %lld x %lld x %lld | %s | %.1f | %.1f | %.1f | %.2f |\n",
                static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), s.what, gflop / t.f32, gflop / t.widen,
                t.dot > 0 ? gflop / t.dot : 0.0, t.dot > 0 ? t.f32 / t.dot : 0.0);
  }
  if (gemm_only) return 0;

  if (model_path.empty()) {
    absl::StatusOr<std::string> p = focal::FindDefaultModel();
    if (!p.ok()) {
      std::fprintf(stderr, "bf16_bench: %s\n", std::string(p.status().message()).c_str());
      return 1;
    }
    model_path = *p;
  }
  CpuBackend f32_be(threads), bf16_be(threads, CpuPrecision::kBf16);
  auto f32 = focal::model::LanguageModel::Load(model_path, f32_be);
  auto bf16 = focal::model::LanguageModel::Load(model_path, bf16_be);
  if (!f32.ok() || !bf16.ok()) {
    std::fprintf(stderr, "bf16_bench: cannot load %s\n", model_path.c_str());
    return 1;
  }
  focal::model::Transformer* tf[2] = {&(*f32)->transformer(), &(*bf16)->transformer()};
  std::printf("\n%s, %d threads, median of %d, taking turns\n\n", model_path.c_str(), threads,
              repeats);
  std::printf("| pass | F32 | BF16 | BF16 / F32 speed |\n|---|---:|---:|---:|\n");
  for (int64_t T : {512, 2048}) {
    std::vector<double> secs[2];
    for (int r = 0; r < repeats + 1; ++r) {
      for (int m = 0; m < 2; ++m) {
        const double s = TimePrefill(*tf[m], T);
        if (r > 0) secs[m].push_back(s);
      }
    }
    const double a = Median(secs[0]), b = Median(secs[1]);
    std::printf("| prefill %lld tokens | %.0f tok/s | %.0f tok/s | %.2f |\n",
                static_cast<long long>(T), T / a, T / b, a / b);
  }
  std::vector<double> steps[2];
  for (int r = 0; r < repeats; ++r) {
    for (int m = 0; m < 2; ++m) steps[m].push_back(TimeDecode(*tf[m], 512, 32));
  }
  const double a = Median(steps[0]), b = Median(steps[1]);
  std::printf("| decode after 512 (1 sequence) | %.1f tok/s | %.1f tok/s | %.2f |\n", 1 / a, 1 / b,
              a / b);
  return 0;
}
