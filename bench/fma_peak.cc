// SPDX-License-Identifier: Apache-2.0
// The machine's float32 FMA peak: independent AVX2 fused multiply-adds on
// 1..N threads, with no memory traffic. The ceiling any F32 forward pass can
// reach here, used to bound the speed-up over another tool from the FLOPs
// each needs (docs/benchmarks.md). Where the CPU has AVX512_BF16, also the
// BF16 dot-product peak (vdpbf16ps, 32 products a vector): the ceiling of
// the --precision bf16 GEMM.
//
//   fma_peak [--threads N] [--repeats R]   (N: every usable core by default)
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "bench/bench_util.h"

namespace {

constexpr int kChains = 12;  // enough independent FMAs to hide the latency of 2 pipes
constexpr long kIters = 200'000'000 / kChains;

// Returns a value derived from every accumulator so the loop is not elided.
__attribute__((target("avx2,fma"))) float FmaLoop(long iters) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * c);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

// The same with vdpbf16ps on 512-bit vectors: 16 lanes x 2 products x 2 flops.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) float DotLoop(long iters) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * c);
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3f80));  // 1.0
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3380));  // ~6e-8
  for (long i = 0; i < iters; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0] + out[15];
}

// GFLOP/s of `threads` threads each running the loop once.
double Run(int threads, bool bf16) {
  std::vector<std::thread> pool;
  std::vector<float> sink(threads);
  const long iters = bf16 ? kIters / 2 : kIters;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { sink[t] = bf16 ? DotLoop(iters) : FmaLoop(iters); });
  }
  for (std::thread& th : pool) th.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile float keep = sink[0];
  (void)keep;
  const int flops = bf16 ? 64 : 16;  // per instruction
  return threads * static_cast<double>(iters) * kChains * flops / secs / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int max_threads = focal::UsableCores(), repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) max_threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "fma_peak: this CPU has no AVX2+FMA\n");
    return 1;
  }
  const bool bf16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512bf16");
  std::printf(
      "| threads | F32 FMA GFLOP/s (median of %d) | per thread | BF16 dot GFLOP/s | BF16 / F32 |\n"
      "|---:|---:|---:|---:|---:|\n",
      repeats);
  for (int n = 1; n <= max_threads; ++n) {
    std::vector<double> g, d;
    for (int r = 0; r < repeats; ++r) {
      g.push_back(Run(n, false));
      if (bf16) d.push_back(Run(n, true));
    }
    const double m = focal::bench::Median(g);
    if (bf16) {
      const double b = focal::bench::Median(d);
      std::printf("| %d | %.1f | %.1f | %.1f | %.2f |\n", n, m, m / n, b, b / m);
    } else {
      std::printf("| %d | %.1f | %.1f | no AVX512_BF16 | |\n", n, m, m / n);
    }
  }
  return 0;
}
