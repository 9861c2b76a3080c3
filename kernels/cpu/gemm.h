// SPDX-License-Identifier: Apache-2.0
// The CPU backend's own fp32 GEMMs. Every output element is computed by one
// fixed sequence of float operations that depends only on the depth of its
// sum (the k count), never on its row or column position, the number of rows
// or columns in the call, the other rows' contents, the tiling or the thread
// count. That is what makes scores batch-invariant bit for bit; BLAS sgemm
// kernels (OpenBLAS's Haswell/Zen one, for instance) round a row differently
// depending on where it sits in the call, so we cannot use them.
//
// NT: out[t][j] = sum_k x[t][k] * w[j][k]: eight lane partial sums over k in
// k order (one FMA each), the k % 8 tail as one masked step, then the fixed
// tree ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
// Sequential: out[i][c] = sum_{j < len[i]} a[i][j] * B[j][c], one FMA per j
// in j order (attention: Q.K^T over head_dim, and P.V where a row sums over
// exactly its visible keys, so chunking a sequence changes nothing).
//
// An AVX2+FMA path is picked at run time; elsewhere a portable path (unfused
// multiply then add, same lane structure) runs. Each is deterministic per
// element; the two may differ from each other in the last bits.
#ifndef FOCAL_KERNELS_CPU_GEMM_H_
#define FOCAL_KERNELS_CPU_GEMM_H_

#include <cstdint>

#include "base/thread_pool.h"

namespace focal::kernels::cpu {

// A row-major matrix view: element (r, c) is data[r * ld + c].
template <typename T>
struct MatOf {
  T* data;
  int64_t ld;
};
using ConstMat = MatOf<const float>;
// BF16 weights (the top halves of F32s), widened exactly as they are read.
using ConstMatBf16 = MatOf<const uint16_t>;
using Mat = MatOf<float>;

enum class GemmPath {
  kBest,      // AVX2+FMA where the CPU has it (AVX512_BF16 for BF16 x BF16), else portable
  kWiden,     // BF16 x BF16 widened to F32 even where AVX512_BF16 exists (tests, benchmarks)
  kPortable,  // forced (tests)
};

// True when kBest runs the AVX2+FMA kernels on this CPU.
bool GemmHasAvx2();
// True when kBest runs BF16 x BF16 products by vdpbf16ps on this CPU.
bool GemmHasAvx512Bf16();

// out(rows, cols) = x(rows, depth) . w(cols, depth)^T, single-threaded.
void GemmNT(ConstMat x, ConstMat w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path = GemmPath::kBest);

// The same product in cache-sized tiles spread over `pool` (results are
// identical to GemmNT's whatever the thread count).
void ParallelGemmNT(ThreadPool& pool, ConstMat x, ConstMat w, Mat out, int64_t rows, int64_t cols,
                    int64_t depth, GemmPath path = GemmPath::kBest);

// The same with BF16 weights (the --precision bf16 mode): each weight is
// widened to F32 exactly as it is loaded, then the same lanes and tree as
// above, so an element's arithmetic is again fixed by its depth alone.
void GemmNT(ConstMat x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path = GemmPath::kBest);
void ParallelGemmNT(ThreadPool& pool, ConstMat x, ConstMatBf16 w, Mat out, int64_t rows,
                    int64_t cols, int64_t depth, GemmPath path = GemmPath::kBest);

// BF16 inputs and weights. Where the CPU has AVX512_BF16 (kBest), the
// products run by vdpbf16ps (kernels/cpu/gemm_bf16_dot.cc: sixteen lanes,
// again fixed by the depth alone); elsewhere (or kWiden) x is widened to F32
// and the product is the one above, bit for bit.
void GemmNT(ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols, int64_t depth,
            GemmPath path = GemmPath::kBest);
void ParallelGemmNT(ThreadPool& pool, ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows,
                    int64_t cols, int64_t depth, GemmPath path = GemmPath::kBest);

// out(rows, width) = a(rows, depth) . B(depth, width), single-threaded. B is
// b (depth x width) or, when b_transposed, b holds B^T (width x depth, laid
// out like w above). Row i sums over j < len[i] <= depth only (all of depth
// when len is null).
struct SeqGemm {
  ConstMat a;
  ConstMat b;
  bool b_transposed = false;
  const int64_t* len = nullptr;
  Mat out;
  int64_t rows = 0, width = 0, depth = 0;
};
void GemmSequential(const SeqGemm& g, GemmPath path = GemmPath::kBest);

}  // namespace focal::kernels::cpu

#endif  // FOCAL_KERNELS_CPU_GEMM_H_
