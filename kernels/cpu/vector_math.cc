// SPDX-License-Identifier: Apache-2.0
// Built with -ffp-contract=off (kernels/CMakeLists.txt): every fused
// multiply-add is written out, in both paths, so they round alike.
#include "kernels/cpu/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace focal::kernels::cpu {
namespace {

// ---- exp(t) for float t <= 0 -------------------------------------------
// 2^n * p(r), n = round(t / ln 2), r = t - n ln 2 in two parts, p the Cephes
// expf polynomial (degree 6, about 1 ulp). Below kMinExpF the result is 0.
constexpr float kMinExpF = -87.0f;  // exp(-87) ~ 1.6e-38, still normal
constexpr float kLog2eF = 1.44269504088896341f;
constexpr float kRoundF = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
constexpr float kLn2HiF = 0.693359375f, kLn2LoF = -2.12194440e-4f;
constexpr float kExpF[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                            4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// ---- exp(x) for double x <= 0 ------------------------------------------
// 2^n * p(r) with |r| <= ln(2)/2 and p the degree-12 Taylor polynomial
// (truncation 2e-16 relative). ln 2 split so that n * kLn2Hi is exact.
constexpr double kMinExpD = -708.0;  // exp(-708) ~ 3.3e-308, still normal
constexpr double kLog2eD = 1.4426950408889634;
constexpr double kRoundD = 6755399441055744.0;  // 1.5 * 2^52
constexpr double kLn2HiD = 0x1.62e42fefa3800p-1, kLn2LoD = 0x1.ef35793c76730p-45;
constexpr double kExpD[13] = {1.0 / 479001600,
                              1.0 / 39916800,
                              1.0 / 3628800,
                              1.0 / 362880,
                              1.0 / 40320,
                              1.0 / 5040,
                              1.0 / 720,
                              1.0 / 120,
                              1.0 / 24,
                              1.0 / 6,
                              0.5,
                              1.0,
                              1.0};
constexpr int kParts = 16;  // partial sums of SumExpShifted

// ---- Portable path -----------------------------------------------------

float ExpNonPositiveF(float t) {
  const float c = std::max(t, kMinExpF);  // a NaN stays NaN
  const float t1 = std::fma(c, kLog2eF, kRoundF);
  const float n = t1 - kRoundF;
  float r = std::fma(-n, kLn2HiF, c);
  r = std::fma(-n, kLn2LoF, r);
  float p = kExpF[0];
  for (int i = 1; i < 6; ++i) p = std::fma(p, r, kExpF[i]);
  p = std::fma(p, r * r, r) + 1.0f;
  // t1's low mantissa bits hold n (two's complement): the exponent field.
  uint32_t tb, rb;
  std::memcpy(&tb, &t1, 4);
  std::memcpy(&rb, &kRoundF, 4);
  const uint32_t bits = (tb - rb + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return t < kMinExpF ? 0.0f : p * scale;
}

float SiluMulOne(float x, float u) {
  const float e = ExpNonPositiveF(-std::fabs(x));
  const float s = x >= 0.0f ? x / (1.0f + e) : (x * e) / (1.0f + e);
  return s * u;
}

double ExpNonPositiveD(double x) {
  const double c = std::max(x, kMinExpD);
  const double t = std::fma(c, kLog2eD, kRoundD);
  const double n = t - kRoundD;
  double r = std::fma(-n, kLn2HiD, c);
  r = std::fma(-n, kLn2LoD, r);
  double p = kExpD[0];
  for (int i = 1; i < 13; ++i) p = std::fma(p, r, kExpD[i]);
  // t's low mantissa bits hold n (two's complement): the exponent field.
  uint64_t tb, rb;
  std::memcpy(&tb, &t, 8);
  std::memcpy(&rb, &kRoundD, 8);
  const uint64_t bits = (tb - rb + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, 8);
  return p * scale;
}

double CombineParts(double* part) {
  for (int w = kParts / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) part[i] += part[i + w];
  }
  return part[0];
}

double SumExpTail(const float* x, int64_t from, int64_t n, double shift, double* part) {
  for (int64_t j = from; j < n; ++j) part[j % kParts] += ExpNonPositiveD(double{x[j]} - shift);
  return CombineParts(part);
}

int64_t FirstArgMaxPortable(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (x[j] > x[best]) best = j;
  }
  return best;
}

// ---- AVX2 + FMA path ---------------------------------------------------

#if defined(__x86_64__)
#define FOCAL_AVX2 __attribute__((target("avx2,fma")))

FOCAL_AVX2 inline __m256 ExpNonPositiveF8(__m256 t) {
  const __m256 c = _mm256_max_ps(_mm256_set1_ps(kMinExpF), t);  // NaN: returns t
  const __m256 round = _mm256_set1_ps(kRoundF);
  const __m256 t1 = _mm256_fmadd_ps(c, _mm256_set1_ps(kLog2eF), round);
  const __m256 n = _mm256_sub_ps(t1, round);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2HiF), c);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2LoF), r);
  __m256 p = _mm256_set1_ps(kExpF[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpF[i]));
  p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_sub_epi32(_mm256_castps_si256(t1), _mm256_castps_si256(round)),
                       _mm256_set1_epi32(127)),
      23);
  const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  // Zero below the range (t < kMinExpF is false for NaN, which stays).
  return _mm256_andnot_ps(_mm256_cmp_ps(t, _mm256_set1_ps(kMinExpF), _CMP_LT_OQ), e);
}

FOCAL_AVX2 void SiluMulAvx2(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256 e = ExpNonPositiveF8(_mm256_or_ps(x, sign));  // exp(-|x|)
    const __m256 d = _mm256_add_ps(one, e);
    const __m256 pos = _mm256_div_ps(x, d);
    const __m256 neg = _mm256_div_ps(_mm256_mul_ps(x, e), d);
    // x >= 0 picks pos; x < 0 and NaN pick neg (NaN either way).
    const __m256 s = _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = SiluMulOne(gate[i], up[i]);
}

FOCAL_AVX2 inline __m256d ExpNonPositiveD4(__m256d x) {
  const __m256d c = _mm256_max_pd(_mm256_set1_pd(kMinExpD), x);
  const __m256d round = _mm256_set1_pd(kRoundD);
  const __m256d t = _mm256_fmadd_pd(c, _mm256_set1_pd(kLog2eD), round);
  const __m256d n = _mm256_sub_pd(t, round);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kLn2HiD), c);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kLn2LoD), r);
  __m256d p = _mm256_set1_pd(kExpD[0]);
  for (int i = 1; i < 13; ++i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kExpD[i]));
  const __m256i bits = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(round)),
                       _mm256_set1_epi64x(1023)),
      52);
  return _mm256_mul_pd(p, _mm256_castsi256_pd(bits));
}

FOCAL_AVX2 double SumExpShiftedAvx2(const float* x, int64_t n, double shift) {
  const __m256d s = _mm256_set1_pd(shift);
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd()};
  int64_t j = 0;
  for (; j + kParts <= n; j += kParts) {
    for (int v = 0; v < 4; ++v) {
      const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + j + 4 * v)), s);
      acc[v] = _mm256_add_pd(acc[v], ExpNonPositiveD4(d));
    }
  }
  alignas(32) double part[kParts];
  for (int v = 0; v < 4; ++v) _mm256_store_pd(part + 4 * v, acc[v]);
  return SumExpTail(x, j, n, shift, part);
}

FOCAL_AVX2 void ExpShiftedAvx2(float* x, int64_t n, float shift) {
  const __m256 sv = _mm256_set1_ps(shift);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(x + j, ExpNonPositiveF8(_mm256_sub_ps(_mm256_loadu_ps(x + j), sv)));
  }
  for (; j < n; ++j) x[j] = ExpNonPositiveF(x[j] - shift);
}

FOCAL_AVX2 int64_t FirstArgMaxAvx2(const float* x, int64_t n) {
  if (std::isnan(x[0]) || n < 8) return FirstArgMaxPortable(x, n);
  __m256 m = _mm256_set1_ps(-INFINITY);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + j), m);  // skips NaNs
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float mx = -INFINITY;
  for (float v : lanes) mx = std::max(mx, v);
  for (; j < n; ++j) mx = std::max(mx, x[j]);  // std::max(mx, NaN) keeps mx
  const __m256 mv = _mm256_set1_ps(mx);
  for (j = 0; j + 8 <= n; j += 8) {
    const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + j), mv, _CMP_EQ_OQ));
    if (mask != 0) return j + __builtin_ctz(static_cast<unsigned>(mask));
  }
  for (; j < n; ++j) {
    if (x[j] == mx) return j;
  }
  return 0;  // not reached: mx is one of the values
}

bool UseAvx2(GemmPath path) { return path == GemmPath::kBest && GemmHasAvx2(); }
#endif  // __x86_64__

}  // namespace

void SiluMul(const float* gate, const float* up, float* out, int64_t n, GemmPath path) {
#if defined(__x86_64__)
  if (UseAvx2(path)) return SiluMulAvx2(gate, up, out, n);
#endif
  (void)path;
  for (int64_t i = 0; i < n; ++i) out[i] = SiluMulOne(gate[i], up[i]);
}

double SumExpShifted(const float* x, int64_t n, double shift, GemmPath path) {
#if defined(__x86_64__)
  if (UseAvx2(path)) return SumExpShiftedAvx2(x, n, shift);
#endif
  (void)path;
  double part[kParts] = {};
  return SumExpTail(x, 0, n, shift, part);
}

void ExpShifted(float* x, int64_t n, float shift, GemmPath path) {
#if defined(__x86_64__)
  if (UseAvx2(path)) return ExpShiftedAvx2(x, n, shift);
#endif
  (void)path;
  for (int64_t j = 0; j < n; ++j) x[j] = ExpNonPositiveF(x[j] - shift);
}

int64_t FirstArgMax(const float* x, int64_t n, GemmPath path) {
#if defined(__x86_64__)
  if (UseAvx2(path)) return FirstArgMaxAvx2(x, n);
#endif
  (void)path;
  return FirstArgMaxPortable(x, n);
}

}  // namespace focal::kernels::cpu
