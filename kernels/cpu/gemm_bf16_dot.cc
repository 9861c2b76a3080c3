// SPDX-License-Identifier: Apache-2.0
// The BF16 x BF16 GEMM on AVX512_BF16 (vdpbf16ps): 32 BF16 products a step
// per vector, twice the multiply-adds of an F32 FMA. Like the F32 kernels,
// every output element's operation sequence depends only on its depth:
// sixteen lanes, lane l summing the pairs (k, k+1) with k % 32 == 2l in k
// order (the depth % 32 tail as one masked step), then the fixed fold
// lane l + lane l+8 and the tree ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)).
// vdpbf16ps flushes subnormal inputs and outputs to zero, as the hardware
// defines it; the result can differ in the last bits from the widening path.
// Built with -ffp-contract=off (kernels/CMakeLists.txt).
#include "kernels/cpu/gemm_bf16_dot.h"

#include <algorithm>

#include "base/check.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace focal::kernels::cpu {

bool HasAvx512Bf16() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

#if defined(__x86_64__)
namespace {

#define FOCAL_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

FOCAL_AVX512BF16 inline __m512bh LoadBf16(const uint16_t* p) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
}
FOCAL_AVX512BF16 inline __m512bh LoadBf16(const uint16_t* p, __mmask32 m) {
  return reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(m, p));
}

// Sixteen lanes to eight: lane l + lane l+8.
// (Shuffles, not GCC 12's extract intrinsics, which warn under -Werror.)
FOCAL_AVX512BF16 inline __m256 Fold(__m512 a) {
  const __m256 lo = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 hi = __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm256_add_ps(lo, hi);
}

// Four sums of eight lanes, each by ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
FOCAL_AVX512BF16 inline __m128 Reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// MR x rows against NR w rows: MR * NR accumulators (16 at most), each loaded
// vector used NR or MR times.
template <int MR, int NR>
FOCAL_AVX512BF16 void KernelDot(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t ldw,
                                float* out, int64_t ldo, int64_t depth) {
  __m512 acc[MR][NR];
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t k = 0;
  for (; k + 32 <= depth; k += 32) {
    __m512bh xv[MR];
    for (int r = 0; r < MR; ++r) xv[r] = LoadBf16(x + r * ldx + k);
    for (int c = 0; c < NR; ++c) {
      const __m512bh wv = LoadBf16(w + c * ldw + k);
      for (int r = 0; r < MR; ++r) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv[r], wv);
    }
  }
  if (k < depth) {  // zeros beyond the end add 0 * 0, as in every lane
    const __mmask32 m = _cvtu32_mask32((1u << (depth - k)) - 1);
    __m512bh xv[MR];
    for (int r = 0; r < MR; ++r) xv[r] = LoadBf16(x + r * ldx + k, m);
    for (int c = 0; c < NR; ++c) {
      const __m512bh wv = LoadBf16(w + c * ldw + k, m);
      for (int r = 0; r < MR; ++r) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv[r], wv);
    }
  }
  for (int r = 0; r < MR; ++r) {
    __m256 f[4];
    for (int c = 0; c < 4; ++c) f[c] = c < NR ? Fold(acc[r][c]) : _mm256_setzero_ps();
    alignas(16) float sums[4];
    _mm_store_ps(sums, Reduce4(f[0], f[1], f[2], f[3]));
    for (int c = 0; c < NR; ++c) out[r * ldo + c] = sums[c];
  }
}

using KernelDotFn = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, float*, int64_t,
                             int64_t);
constexpr KernelDotFn kKernels[4][4] = {
    {KernelDot<1, 1>, KernelDot<1, 2>, KernelDot<1, 3>, KernelDot<1, 4>},
    {KernelDot<2, 1>, KernelDot<2, 2>, KernelDot<2, 3>, KernelDot<2, 4>},
    {KernelDot<3, 1>, KernelDot<3, 2>, KernelDot<3, 3>, KernelDot<3, 4>},
    {KernelDot<4, 1>, KernelDot<4, 2>, KernelDot<4, 3>, KernelDot<4, 4>},
};

}  // namespace
#endif  // __x86_64__

void GemmNTBf16Dot(ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols,
                   int64_t depth) {
  FOCAL_CHECK(HasAvx512Bf16());
#if defined(__x86_64__)
  // Four w rows stay in L1 while the block of x rows (in L2) passes by.
  for (int64_t j = 0; j < cols; j += 4) {
    const int64_t nr = std::min<int64_t>(4, cols - j);
    for (int64_t i = 0; i < rows; i += 4) {
      const int64_t mr = std::min<int64_t>(4, rows - i);
      kKernels[mr - 1][nr - 1](x.data + i * x.ld, x.ld, w.data + j * w.ld, w.ld,
                               out.data + i * out.ld + j, out.ld, depth);
    }
  }
#else
  (void)x, (void)w, (void)out, (void)rows, (void)cols, (void)depth;
#endif
}

}  // namespace focal::kernels::cpu
