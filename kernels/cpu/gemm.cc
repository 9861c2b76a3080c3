// SPDX-License-Identifier: Apache-2.0
// Built with -ffp-contract=off (kernels/CMakeLists.txt): the compiler must not
// fuse or reorder anything, so each element's operation sequence is exactly
// the one written here.
#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/gemm_bf16_dot.h"
#include "kernels/dtype.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace focal::kernels::cpu {
namespace {

// A tile of w rows sized to stay in L2 while a block of x rows streams past.
constexpr int64_t kWTileBytes = 192 * 1024;
// x rows per parallel task.
constexpr int64_t kRowBlock = 48;
// BF16 weights: a task with at least this many x rows widens its w tile once
// instead of at every load.
constexpr int64_t kWidenRows = 8;
// x rows swept across all of w before the next ones (in L3).
constexpr int64_t kXGroupBytes = 1024 * 1024;
// Sequential GEMM: j (depth) steps per block; a block of B stays in cache
// for all rows, and the sums carry over between blocks in `out`, exactly.
constexpr int64_t kDepthBlock = 256;
// Sequential GEMM: B columns per packed panel (two vectors), and the packed
// panels' budget (128 KiB: they stay in L2).
constexpr int64_t kPanel = 16;
constexpr int64_t kPackFloats = 32 * 1024;

int64_t MaxLen(const int64_t* len, int64_t rows) { return *std::max_element(len, len + rows); }

int64_t WTileRows(int64_t depth) {
  return std::max<int64_t>(4, kWTileBytes / (4 * std::max<int64_t>(depth, 1)) / 4 * 4);
}

// ---- Portable path ---------------------------------------------------------

// A weight as F32: BF16 widens exactly.
inline float Wide(float w) { return w; }
inline float Wide(uint16_t w) { return Bf16ToF32(w); }

template <typename W>
float DotPortable(const float* x, const W* w, int64_t depth) {
  float lane[8] = {};
  int64_t k = 0;
  for (; k + 8 <= depth; k += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += x[k + l] * Wide(w[k + l]);
  }
  for (int l = 0; k + l < depth; ++l) lane[l] += x[k + l] * Wide(w[k + l]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

template <typename W>
void GemmNTPortable(ConstMat x, MatOf<const W> w, Mat out, int64_t rows, int64_t cols,
                    int64_t depth) {
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t j = 0; j < cols; ++j) {
      out.data[t * out.ld + j] = DotPortable(x.data + t * x.ld, w.data + j * w.ld, depth);
    }
  }
}

void GemmSequentialPortable(const SeqGemm& g, const int64_t* len) {
  const float* b = g.b.data;
  const int64_t max_len = MaxLen(len, g.rows);
  for (int64_t j0 = 0; j0 == 0 || j0 < max_len; j0 += kDepthBlock) {
    for (int64_t i = 0; i < g.rows; ++i) {
      float* o = g.out.data + i * g.out.ld;
      if (j0 == 0) std::fill_n(o, g.width, 0.0f);
      for (int64_t j = j0; j < std::min(j0 + kDepthBlock, len[i]); ++j) {
        const float aij = g.a.data[i * g.a.ld + j];
        if (g.b_transposed) {
          for (int64_t c = 0; c < g.width; ++c) o[c] += aij * b[c * g.b.ld + j];
        } else {
          for (int64_t c = 0; c < g.width; ++c) o[c] += aij * b[j * g.b.ld + c];
        }
      }
    }
  }
}

// ---- AVX2 + FMA path -------------------------------------------------------

#if defined(__x86_64__)
#define FOCAL_AVX2 __attribute__((target("avx2,fma")))

FOCAL_AVX2 inline __m256i TailMask(int64_t n) {  // lanes [0, n) set
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Lane sums of a0..a3, each by the tree ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
FOCAL_AVX2 inline __m128 Reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// Eight weights as F32 lanes; BF16 is the top half of an F32.
FOCAL_AVX2 inline __m256 LoadW(const float* w) { return _mm256_loadu_ps(w); }
FOCAL_AVX2 inline __m256 LoadW(const uint16_t* w) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// MR x rows against NR w rows (MR <= 3, NR <= 4): 12 accumulators at most,
// each loaded vector reused MR or NR times. depth is a multiple of 8 (the
// caller pads): a tail step here would need a mask register, a 17th vector,
// and push the accumulators onto the stack for the whole loop.
template <int MR, int NR, typename W>
FOCAL_AVX2 void KernelNT(const float* x, int64_t ldx, const W* w, int64_t ldw, float* out,
                         int64_t ldo, int64_t depth) {
  __m256 acc[MR][NR];
  for (int r = 0; r < MR; ++r) {
    for (int c = 0; c < NR; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < depth; k += 8) {
    __m256 xv[MR];
    for (int r = 0; r < MR; ++r) xv[r] = _mm256_loadu_ps(x + r * ldx + k);
    for (int c = 0; c < NR; ++c) {
      const __m256 wv = LoadW(w + c * ldw + k);
      for (int r = 0; r < MR; ++r) acc[r][c] = _mm256_fmadd_ps(xv[r], wv, acc[r][c]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    if constexpr (NR == 4) {
      _mm_storeu_ps(out + r * ldo, Reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
    } else {
      // Missing columns reduce zeros and are dropped.
      __m256 a4[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                      _mm256_setzero_ps()};
      for (int c = 0; c < NR; ++c) a4[c] = acc[r][c];
      alignas(16) float t[4];
      _mm_store_ps(t, Reduce4(a4[0], a4[1], a4[2], a4[3]));
      for (int c = 0; c < NR; ++c) out[r * ldo + c] = t[c];
    }
  }
}

template <typename W>
using KernelNTFn = void (*)(const float*, int64_t, const W*, int64_t, float*, int64_t, int64_t);
template <typename W>
constexpr KernelNTFn<W> kKernelsNT[3][4] = {
    {KernelNT<1, 1, W>, KernelNT<1, 2, W>, KernelNT<1, 3, W>, KernelNT<1, 4, W>},
    {KernelNT<2, 1, W>, KernelNT<2, 2, W>, KernelNT<2, 3, W>, KernelNT<2, 4, W>},
    {KernelNT<3, 1, W>, KernelNT<3, 2, W>, KernelNT<3, 3, W>, KernelNT<3, 4, W>},
};

// Copies rows x cols of m into a zero-padded (rows x ld) buffer.
template <typename T>
void PadCopy(MatOf<const T> m, int64_t rows, int64_t cols, int64_t ld, std::vector<T>& buf) {
  buf.assign(rows * ld, T{0});
  for (int64_t r = 0; r < rows; ++r) std::copy_n(m.data + r * m.ld, cols, buf.data() + r * ld);
}

template <typename W>
FOCAL_AVX2 void GemmNTAvx2(ConstMat x, MatOf<const W> w, Mat out, int64_t rows, int64_t cols,
                           int64_t depth) {
  if (depth % 8 != 0) {
    // The k % 8 tail as one more step over zero-padded copies: each padded
    // lane adds 0 * 0, exactly what a masked step adds.
    thread_local std::vector<float> xp;
    thread_local std::vector<W> wp;
    const int64_t padded = (depth + 7) / 8 * 8;
    PadCopy(x, rows, depth, padded, xp);
    PadCopy(w, cols, depth, padded, wp);
    return GemmNTAvx2<W>({xp.data(), padded}, {wp.data(), padded}, out, rows, cols, padded);
  }
  // Four w rows stay in L1 while the block of x rows (in L2) passes by.
  for (int64_t j = 0; j < cols; j += 4) {
    const int64_t nr = std::min<int64_t>(4, cols - j);
    for (int64_t i = 0; i < rows; i += 3) {
      const int64_t mr = std::min<int64_t>(3, rows - i);
      kKernelsNT<W>[mr - 1][nr - 1](x.data + i * x.ld, x.ld, w.data + j * w.ld, w.ld,
                                    out.data + i * out.ld + j, out.ld, depth);
    }
  }
}

// dst rows 0..7 (stride ldd) = the columns of the 8x8 block at src (stride ld).
FOCAL_AVX2 inline void Transpose8x8(const float* src, int64_t ld, float* dst, int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// Packs B rows [j0, j1), columns [c0, c0 + 16) into panel[(j - j0) * 16 + c];
// columns past the width are zero.
FOCAL_AVX2 void PackPanel(const SeqGemm& g, int64_t j0, int64_t j1, int64_t c0, float* panel) {
  const int64_t valid = std::min(kPanel, g.width - c0);
  const float* b = g.b.data;
  if (g.b_transposed) {
    int64_t j = j0;
    if (valid == kPanel) {  // whole 8x8 blocks
      for (; j + 8 <= j1; j += 8) {
        Transpose8x8(b + c0 * g.b.ld + j, g.b.ld, panel + (j - j0) * kPanel, kPanel);
        Transpose8x8(b + (c0 + 8) * g.b.ld + j, g.b.ld, panel + (j - j0) * kPanel + 8, kPanel);
      }
    }
    for (int64_t c = 0; c < kPanel; ++c) {
      const float* src = b + (c0 + std::min(c, valid - 1)) * g.b.ld;
      for (int64_t jj = j; jj < j1; ++jj)
        panel[(jj - j0) * kPanel + c] = c < valid ? src[jj] : 0.0f;
    }
    return;
  }
  const __m256i m0 = TailMask(valid), m1 = TailMask(valid - 8);
  for (int64_t j = j0; j < j1; ++j) {
    const float* src = b + j * g.b.ld + c0;
    float* dst = panel + (j - j0) * kPanel;
    _mm256_storeu_ps(dst, _mm256_maskload_ps(src, m0));
    _mm256_storeu_ps(dst + 8, _mm256_maskload_ps(src + 8, m1));
  }
}

// MR rows of a against one packed panel over j in [j0, min(j1, len[r])): 2 MR
// accumulators, continuing from `out` unless j0 is 0. m0, m1: the columns to
// keep (all when `full`).
template <int MR>
FOCAL_AVX2 void KernelSeq(const float* a, int64_t lda, const int64_t* len, const float* panel,
                          int64_t j0, int64_t j1, float* out, int64_t ldo, bool full, __m256i m0,
                          __m256i m1) {
  __m256 acc[MR][2];
  int64_t end[MR];
  int64_t common = j1;
  for (int r = 0; r < MR; ++r) {
    end[r] = std::min(j1, len[r]);
    common = std::min(common, end[r]);
    if (j0 == 0) {
      acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    } else {
      acc[r][0] = _mm256_maskload_ps(out + r * ldo, m0);
      acc[r][1] = _mm256_maskload_ps(out + r * ldo + 8, m1);
    }
  }
  for (int64_t j = j0; j < common; ++j) {  // the steps every row takes
    const float* bj = panel + (j - j0) * kPanel;
    const __m256 b0 = _mm256_loadu_ps(bj), b1 = _mm256_loadu_ps(bj + 8);
    for (int r = 0; r < MR; ++r) {
      const __m256 ab = _mm256_set1_ps(a[r * lda + j]);
      acc[r][0] = _mm256_fmadd_ps(ab, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(ab, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    if (full) {
      _mm256_storeu_ps(out + r * ldo, acc[r][0]);
      _mm256_storeu_ps(out + r * ldo + 8, acc[r][1]);
    } else {
      _mm256_maskstore_ps(out + r * ldo, m0, acc[r][0]);
      _mm256_maskstore_ps(out + r * ldo + 8, m1, acc[r][1]);
    }
  }
  // Then each row's own remaining steps (the causal diagonal), continuing
  // from `out` so the accumulators above stay in registers.
  for (int r = 0; r < MR; ++r) {
    float* o = out + r * ldo;
    for (int64_t j = std::max(j0, common); j < end[r]; ++j) {
      const __m256 ab = _mm256_set1_ps(a[r * lda + j]);
      const float* bj = panel + (j - j0) * kPanel;
      _mm256_maskstore_ps(o, m0,
                          _mm256_fmadd_ps(ab, _mm256_loadu_ps(bj), _mm256_maskload_ps(o, m0)));
      _mm256_maskstore_ps(
          o + 8, m1, _mm256_fmadd_ps(ab, _mm256_loadu_ps(bj + 8), _mm256_maskload_ps(o + 8, m1)));
    }
  }
}

using KernelSeqFn = void (*)(const float*, int64_t, const int64_t*, const float*, int64_t, int64_t,
                             float*, int64_t, bool, __m256i, __m256i);
constexpr KernelSeqFn kKernelsSeq[6] = {KernelSeq<1>, KernelSeq<2>, KernelSeq<3>,
                                        KernelSeq<4>, KernelSeq<5>, KernelSeq<6>};

FOCAL_AVX2 void GemmSequentialAvx2(const SeqGemm& g, const int64_t* len) {
  thread_local std::vector<float> pack;
  const int64_t max_len = MaxLen(len, g.rows);
  const int64_t jb = std::clamp<int64_t>(max_len, 1, kDepthBlock);          // panel length
  const int64_t group = std::max<int64_t>(1, kPackFloats / (jb * kPanel));  // panels packed
  pack.resize(group * jb * kPanel);
  for (int64_t j0 = 0; j0 == 0 || j0 < max_len; j0 += kDepthBlock) {
    const int64_t j1 = std::min(j0 + kDepthBlock, max_len);
    for (int64_t c0 = 0; c0 < g.width; c0 += group * kPanel) {
      // A group of packed panels (in L2) serves every row block; a row
      // block's slice of a (in L1) serves every panel of the group.
      const int64_t c1 = std::min(g.width, c0 + group * kPanel);
      for (int64_t c = c0; c < c1; c += kPanel) {
        PackPanel(g, j0, j1, c, pack.data() + (c - c0) * jb);
      }
      for (int64_t i = 0; i < g.rows; i += 6) {
        const KernelSeqFn kernel = kKernelsSeq[std::min<int64_t>(6, g.rows - i) - 1];
        for (int64_t c = c0; c < c1; c += kPanel) {
          const int64_t valid = std::min(kPanel, g.width - c);
          kernel(g.a.data + i * g.a.ld, g.a.ld, len + i, pack.data() + (c - c0) * jb, j0, j1,
                 g.out.data + i * g.out.ld + c, g.out.ld, valid == kPanel, TailMask(valid),
                 TailMask(valid - 8));
        }
      }
    }
  }
}

bool UseAvx2(GemmPath path) { return path != GemmPath::kPortable && GemmHasAvx2(); }
#else
bool UseAvx2(GemmPath) { return false; }
#endif  // __x86_64__

}  // namespace

bool GemmHasAvx2() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

namespace {

template <typename W>
void GemmNTAny(ConstMat x, MatOf<const W> w, Mat out, int64_t rows, int64_t cols, int64_t depth,
               GemmPath path) {
  if (rows <= 0 || cols <= 0) return;
#if defined(__x86_64__)
  if (UseAvx2(path)) return GemmNTAvx2<W>(x, w, out, rows, cols, depth);
#endif
  (void)path;
  GemmNTPortable<W>(x, w, out, rows, cols, depth);
}

// Both in BF16 by vdpbf16ps: only where UseBf16Dot.
void GemmNTAny(ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols, int64_t depth,
               GemmPath) {
  if (rows > 0 && cols > 0) GemmNTBf16Dot(x, w, out, rows, cols, depth);
}

bool UseBf16Dot(GemmPath path) { return path == GemmPath::kBest && HasAvx512Bf16(); }

// BF16 x widened exactly to F32 (the widening path's input).
std::vector<float> Widen(ConstMatBf16 x, int64_t rows, int64_t depth) {
  std::vector<float> wide(rows * depth);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < depth; ++k) wide[r * depth + k] = Bf16ToF32(x.data[r * x.ld + k]);
  }
  return wide;
}

template <typename X, typename W>
void ParallelGemmNTAny(ThreadPool& pool, MatOf<const X> x, MatOf<const W> w, Mat out, int64_t rows,
                       int64_t cols, int64_t depth, GemmPath path) {
  if (rows <= 0 || cols <= 0) return;
  // Tasks: (w tile, block of x rows), consecutive tasks sharing a w tile.
  // The row blocks come in groups of about kXGroupBytes that meet every w
  // tile before the next group is read, so a group is read from memory once
  // and then from L3. (Tiles are sized by F32 bytes; BF16 tiles take half.)
  const int64_t nc = WTileRows(depth);
  const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  const int64_t col_tiles = (cols + nc - 1) / nc;
  const int64_t group = std::max<int64_t>(1, kXGroupBytes / (kRowBlock * depth * 4));
  pool.ParallelFor(row_blocks * col_tiles, [&](int64_t task) {
    const int64_t g = task / (group * col_tiles);  // every earlier group is whole
    const int64_t in_group = std::min(group, row_blocks - g * group);
    const int64_t local = task - g * group * col_tiles;
    const int64_t i = (g * group + local % in_group) * kRowBlock, j = (local / in_group) * nc;
    const int64_t m = std::min(kRowBlock, rows - i), n = std::min(nc, cols - j);
    if constexpr (std::is_same_v<X, float> && std::is_same_v<W, uint16_t>) {
      if (m >= kWidenRows) {
        // Many rows share this tile: widen it once (exactly) and run the F32
        // kernel, the same arithmetic without a conversion per load.
        thread_local std::vector<float> wide;
        wide.resize(n * depth);
        for (int64_t r = 0; r < n; ++r) {
          const uint16_t* src = w.data + (j + r) * w.ld;
          for (int64_t k = 0; k < depth; ++k) wide[r * depth + k] = Bf16ToF32(src[k]);
        }
        return GemmNTAny<float>({x.data + i * x.ld, x.ld}, {wide.data(), depth},
                                {out.data + i * out.ld + j, out.ld}, m, n, depth, path);
      }
    }
    GemmNTAny(MatOf<const X>{x.data + i * x.ld, x.ld}, MatOf<const W>{w.data + j * w.ld, w.ld},
              {out.data + i * out.ld + j, out.ld}, m, n, depth, path);
  });
}

}  // namespace

void GemmNT(ConstMat x, ConstMat w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path) {
  GemmNTAny<float>(x, w, out, rows, cols, depth, path);
}

void GemmNT(ConstMat x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path) {
  GemmNTAny<uint16_t>(x, w, out, rows, cols, depth, path);
}

void ParallelGemmNT(ThreadPool& pool, ConstMat x, ConstMat w, Mat out, int64_t rows, int64_t cols,
                    int64_t depth, GemmPath path) {
  ParallelGemmNTAny<float, float>(pool, x, w, out, rows, cols, depth, path);
}

void ParallelGemmNT(ThreadPool& pool, ConstMat x, ConstMatBf16 w, Mat out, int64_t rows,
                    int64_t cols, int64_t depth, GemmPath path) {
  ParallelGemmNTAny<float, uint16_t>(pool, x, w, out, rows, cols, depth, path);
}

bool GemmHasAvx512Bf16() { return HasAvx512Bf16(); }

void GemmNT(ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path) {
  if (rows <= 0 || cols <= 0) return;
  if (UseBf16Dot(path)) return GemmNTBf16Dot(x, w, out, rows, cols, depth);
  const std::vector<float> wide = Widen(x, rows, depth);
  GemmNTAny<uint16_t>({wide.data(), depth}, w, out, rows, cols, depth, path);
}

void ParallelGemmNT(ThreadPool& pool, ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows,
                    int64_t cols, int64_t depth, GemmPath path) {
  if (rows <= 0 || cols <= 0) return;
  if (UseBf16Dot(path)) {
    return ParallelGemmNTAny<uint16_t, uint16_t>(pool, x, w, out, rows, cols, depth, path);
  }
  const std::vector<float> wide = Widen(x, rows, depth);
  ParallelGemmNTAny<float, uint16_t>(pool, {wide.data(), depth}, w, out, rows, cols, depth, path);
}

void GemmSequential(const SeqGemm& g, GemmPath path) {
  if (g.rows <= 0 || g.width <= 0) return;
  std::vector<int64_t> full;
  const int64_t* len = g.len;
  if (len == nullptr) {
    full.assign(g.rows, g.depth);
    len = full.data();
  }
#if defined(__x86_64__)
  if (UseAvx2(path)) return GemmSequentialAvx2(g, len);
#endif
  (void)path;
  GemmSequentialPortable(g, len);
}

}  // namespace focal::kernels::cpu
