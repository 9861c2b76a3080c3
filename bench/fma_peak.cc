// SPDX-License-Identifier: Apache-2.0
// The machine's float32 FMA peak: independent AVX2 fused multiply-adds on
// 1..N threads, with no memory traffic. The ceiling any F32 forward pass can
// reach here, used to bound the speed-up over another tool from the FLOPs
// each needs (docs/benchmarks.md).
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

// GFLOP/s of `threads` threads each running the loop once.
double Run(int threads) {
  std::vector<std::thread> pool;
  std::vector<float> sink(threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = FmaLoop(kIters); });
  for (std::thread& th : pool) th.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile float keep = sink[0];
  (void)keep;
  return threads * static_cast<double>(kIters) * kChains * 16 / secs / 1e9;  // 8 lanes x 2 flops
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
  std::printf("| threads | F32 FMA GFLOP/s (median of %d) | per thread |\n|---:|---:|---:|\n",
              repeats);
  for (int n = 1; n <= max_threads; ++n) {
    std::vector<double> g;
    for (int r = 0; r < repeats; ++r) g.push_back(Run(n));
    const double m = focal::bench::Median(g);
    std::printf("| %d | %.1f | %.1f |\n", n, m, m / n);
  }
  return 0;
}
