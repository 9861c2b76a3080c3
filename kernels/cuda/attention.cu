// SPDX-License-Identifier: Apache-2.0
// Fused causal flash attention (forward) with a per-row softmax scale:
// packed variable-length sequences, GQA, queries continuing a KV cache.
// Online softmax; the score matrix never leaves registers (tensor-core
// kernel) or shared memory (generic kernel).
// Kept in one file (~500 lines) on purpose: the two kernels share the tile
// loaders and the online-softmax step, and the launcher chooses between them.
//
// Grid: one CTA per (work item, head), 1-D, heads fastest so the CTAs of one
// query block and GQA group run together and share K/V in L2. A work item is
// a block of query rows cut from its sequence's own first row (see
// PlanAttentionWork), and each CTA walks its keys from 0 upwards in fixed
// tiles, so a row's result never depends on the rest of the batch.
//
// Masking: query row i of a sequence sits at absolute position past + i and
// sees cache rows [0, past + i]. Every row sees key 0, which is in the first
// tile, so the running maximum is finite after the first tile and no row
// ever divides by zero. Rows of a block past the sequence's end (the last
// block of a sequence) are computed on zero queries, clipped to the block's
// keys, and never stored.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/attention_params.h"
#include "kernels/cuda/launchers.h"

namespace focal::kernels {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

// ---------------------------------------------------------------------------
// Tensor-core kernel (BF16 operands, FP32 accumulation), head dims 64 / 128.
//
// 4 warps; warp w owns query rows [16w, 16w + 16) of the block. Per KV tile
// of 64 keys: S = Q K^T with mma.m16n8k16 (Q fragments kept in registers),
// scale and mask in FP32, online softmax in the log2 domain, P rounded to
// BF16 and O += P V with the same mma. K/V tiles are double-buffered in
// shared memory: cp.async for BF16 inputs; FP32 inputs are converted through
// registers (synchronous loads into the other stage).
//
// Fragment layouts (PTX ISA, mma.m16n8k16, g = lane / 4, t = lane % 4):
//   A (16x16): a0 = (g, 2t..2t+1), a1 = (g+8, 2t..), a2 = (g, 2t+8..), a3 = (g+8, 2t+8..)
//   B (16x8):  b0 = (k 2t..2t+1, n g), b1 = (k 2t+8..2t+9, n g)
//   C (16x8):  c0,c1 = (g, 2t..2t+1), c2,c3 = (g+8, 2t..2t+1)
// so the S accumulators of two adjacent 8-key tiles are exactly the A
// fragment of P for one 16-key step (FlashAttention-2's register reuse).

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void LdMatrixX4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                           uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

__device__ __forceinline__ void LdMatrixX4Trans(uint32_t addr, uint32_t& r0, uint32_t& r1,
                                                uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// d += a * b for one m16n8k16 BF16 tile with FP32 accumulators.
__device__ __forceinline__ void MmaBf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16 bytes global -> shared, asynchronously; src_bytes < 16 zero-fills the
// rest (0: no global read at all).
__device__ __forceinline__ void CpAsync16(uint32_t smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Two floats as a BF16 pair, the first in the low half (the lower column of
// a fragment), rounded to nearest even.
__device__ __forceinline__ uint32_t PackBf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Loads 64 rows x D columns starting at `g` (row stride `ld` elements) into a
// BF16 shared tile with row stride D + kAttnTcRowPad; rows >= valid are zero.
template <int D>
__device__ __forceinline__ void LoadTile(__nv_bfloat16* tile, const __nv_bfloat16* g, int64_t ld,
                                         int valid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  constexpr int kIters = kAttnTcBlockN * kChunks / kAttnTcThreads;
  static_assert(kAttnTcBlockN * kChunks % kAttnTcThreads == 0, "tile load must divide evenly");
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int c = threadIdx.x + it * kAttnTcThreads;
    const int r = c / kChunks, ch = c % kChunks;
    __nv_bfloat16* dst = tile + r * (D + kAttnTcRowPad) + ch * 8;
    const bool in = r < valid;
    CpAsync16(SmemAddr(dst), in ? g + r * ld + ch * 8 : g, in ? 16 : 0);
  }
}

template <int D>
__device__ __forceinline__ void LoadTile(__nv_bfloat16* tile, const float* g, int64_t ld,
                                         int valid) {
  constexpr int kChunks = D / 8;
  constexpr int kIters = kAttnTcBlockN * kChunks / kAttnTcThreads;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int c = threadIdx.x + it * kAttnTcThreads;
    const int r = c / kChunks, ch = c % kChunks;
    uint4 packed = make_uint4(0, 0, 0, 0);
    if (r < valid) {
      const float4* src = reinterpret_cast<const float4*>(g + r * ld + ch * 8);
      const float4 a = src[0], b = src[1];
      packed = make_uint4(PackBf16(a.x, a.y), PackBf16(a.z, a.w), PackBf16(b.x, b.y),
                          PackBf16(b.z, b.w));
    }
    *reinterpret_cast<uint4*>(tile + r * (D + kAttnTcRowPad) + ch * 8) = packed;
  }
}

__device__ __forceinline__ void StorePair(float* p, float a, float b) {
  *reinterpret_cast<float2*>(p) = make_float2(a, b);
}
__device__ __forceinline__ void StorePair(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}

template <typename T, int D>
__global__ void __launch_bounds__(kAttnTcThreads, 2) AttnTcKernel(AttnParams p) {
  static_assert(D % 16 == 0 && kAttnTcBlockM == 4 * 16 && kAttnTcBlockN == 64, "tile shape");
  constexpr int kLd = D + kAttnTcRowPad;  // shared row stride (elements)
  constexpr int kTile = kAttnTcBlockN * kLd;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sK = sQ + kAttnTcBlockM * kLd;  // 2 stages
  __nv_bfloat16* sV = sK + 2 * kTile;            // 2 stages

  const int H = p.num_heads;
  const AttnWorkItem item = p.items[blockIdx.x / H];
  const int h = static_cast<int>(blockIdx.x % H);
  const int kvh = h / (H / p.num_kv_heads);
  const AttnSeqDesc sd = p.seqs[item.seq];
  const int q_start = item.q_start;
  const int rows = min(kAttnTcBlockM, sd.rows - q_start);  // valid query rows here
  const int kv_len = sd.past + q_start + rows;             // keys the last row sees
  const int first_pos = sd.past + q_start;                 // position of row 0
  const int64_t q_ld = int64_t{H} * D, kv_ld = int64_t{p.num_kv_heads} * D;
  const int64_t q_row0 = sd.row_begin + q_start;
  const T* q = static_cast<const T*>(p.q) + q_row0 * q_ld + int64_t{h} * D;
  const T* kc = static_cast<const T*>(sd.k) + int64_t{kvh} * D;
  const T* vc = static_cast<const T*>(sd.v) + int64_t{kvh} * D;

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t4 = lane & 3;
  const int mi = lane >> 3, mr = lane & 7;  // ldmatrix: which 8x8 matrix, which row

  const int n_tiles = (kv_len + kAttnTcBlockN - 1) / kAttnTcBlockN;
  LoadTile<D>(sQ, q, q_ld, rows);
  LoadTile<D>(sK, kc, kv_ld, min(kAttnTcBlockN, kv_len));
  LoadTile<D>(sV, vc, kv_ld, min(kAttnTcBlockN, kv_len));
  CpAsyncCommit();

  // This thread's two query rows (g and g + 8 of its warp's 16).
  const int r0 = warp * 16 + g, r1 = r0 + 8;
  const float sc0 = r0 < rows ? p.scale[q_row0 + r0] * kLog2e : 0.0f;
  const float sc1 = r1 < rows ? p.scale[q_row0 + r1] * kLog2e : 0.0f;
  const int lim0 = min(first_pos + r0, kv_len - 1);  // last key the row may see
  const int lim1 = min(first_pos + r1, kv_len - 1);

  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  uint32_t qf[D / 16][4];

  for (int j = 0; j < n_tiles; ++j) {
    const int stage = j & 1;
    if (j + 1 < n_tiles) {
      const int next = (j + 1) * kAttnTcBlockN;
      const int valid = min(kAttnTcBlockN, kv_len - next);
      LoadTile<D>(sK + (stage ^ 1) * kTile, kc + next * kv_ld, kv_ld, valid);
      LoadTile<D>(sV + (stage ^ 1) * kTile, vc + next * kv_ld, kv_ld, valid);
      CpAsyncCommit();
      CpAsyncWait<1>();  // tile j (and Q) landed; tile j + 1 may be in flight
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        const int row = warp * 16 + mr + ((mi & 1) ? 8 : 0);
        const int col = ks * 16 + ((mi >> 1) ? 8 : 0);
        LdMatrixX4(SmemAddr(sQ + row * kLd + col), qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3]);
      }
    }
    const __nv_bfloat16* k_s = sK + stage * kTile;
    const __nv_bfloat16* v_s = sV + stage * kTile;

    // S (16 x 64 per warp) = Q K^T.
    float s[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        const int key = np * 16 + mr + ((mi >> 1) ? 8 : 0);
        const int col = ks * 16 + ((mi & 1) ? 8 : 0);
        uint32_t b0, b1, b2, b3;
        LdMatrixX4(SmemAddr(k_s + key * kLd + col), b0, b1, b2, b3);
        MmaBf16(s[2 * np], qf[ks], b0, b1);
        MmaBf16(s[2 * np + 1], qf[ks], b2, b3);
      }
    }

    // Scale (log2 domain), causal mask, running max.
    const int key0 = j * kAttnTcBlockN;
    const bool need_mask = key0 + kAttnTcBlockN - 1 > first_pos;
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = key0 + nt * 8 + 2 * t4 + e;
        float x0 = s[nt][e] * sc0, x1 = s[nt][2 + e] * sc1;
        if (need_mask) {
          if (key > lim0) x0 = -INFINITY;
          if (key > lim1) x1 = -INFINITY;
        }
        s[nt][e] = x0;
        s[nt][2 + e] = x1;
        mx0 = fmaxf(mx0, x0);
        mx1 = fmaxf(mx1, x1);
      }
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);  // finite: key 0 is in tile 0
    const float a0 = exp2f(m0 - mn0), a1 = exp2f(m1 - mn1);  // 0 on the first tile
    m0 = mn0;
    m1 = mn1;
    float ps0 = 0.0f, ps1 = 0.0f;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      s[nt][0] = exp2f(s[nt][0] - mn0);
      s[nt][1] = exp2f(s[nt][1] - mn0);
      s[nt][2] = exp2f(s[nt][2] - mn1);
      s[nt][3] = exp2f(s[nt][3] - mn1);
      ps0 += s[nt][0] + s[nt][1];
      ps1 += s[nt][2] + s[nt][3];
    }
    l0 = l0 * a0 + ps0;  // per-thread partial sums; the quad is summed at the end
    l1 = l1 * a1 + ps1;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      o[dt][0] *= a0;
      o[dt][1] *= a0;
      o[dt][2] *= a1;
      o[dt][3] *= a1;
    }

    // O += P V, 16 keys per step.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint32_t pa[4] = {PackBf16(s[2 * kk][0], s[2 * kk][1]),
                              PackBf16(s[2 * kk][2], s[2 * kk][3]),
                              PackBf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              PackBf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        const int key = kk * 16 + mr + ((mi & 1) ? 8 : 0);
        const int col = dp * 16 + ((mi >> 1) ? 8 : 0);
        uint32_t b0, b1, b2, b3;
        LdMatrixX4Trans(SmemAddr(v_s + key * kLd + col), b0, b1, b2, b3);
        MmaBf16(o[2 * dp], pa, b0, b1);
        MmaBf16(o[2 * dp + 1], pa, b2, b3);
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
  T* out = static_cast<T*>(p.out) + q_row0 * q_ld + int64_t{h} * D;
  if (r0 < rows) {
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      StorePair(out + r0 * q_ld + dt * 8 + 2 * t4, o[dt][0] * inv0, o[dt][1] * inv0);
    }
  }
  if (r1 < rows) {
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      StorePair(out + r1 * q_ld + dt * 8 + 2 * t4, o[dt][2] * inv1, o[dt][3] * inv1);
    }
  }
}

// ---------------------------------------------------------------------------
// Generic kernel (FP32 CUDA cores), any head dim up to 256: the FP32 mode's
// kernel and the BF16 mode's fallback for small or odd head dims.
//
// 4 warps x 8 query rows. Per tile of 32 keys (K, V in shared memory as
// FP32), lane j scores key j against one row at a time (a sequential FMA
// over d), the warp takes the tile's max and sum with xor butterflies
// (identical in every lane), and lane l accumulates output dims
// l, l + 32, ... over the tile's keys in order.

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void FromFloat(float* p, float v) { *p = v; }
__device__ __forceinline__ void FromFloat(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

template <typename T, int kDpl>
__global__ void __launch_bounds__(kAttnGenericThreads) AttnGenericKernel(AttnParams p) {
  constexpr int kRowsPerWarp = kAttnGenericBlockM / (kAttnGenericThreads / 32);
  static_assert(kAttnGenericBlockN == 32, "one key per lane");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int D = p.head_dim;
  float* sQ = reinterpret_cast<float*>(smem_raw);  // BlockM x D
  float* sK = sQ + kAttnGenericBlockM * D;         // BlockN x (D + 1)
  float* sV = sK + kAttnGenericBlockN * (D + 1);   // BlockN x D

  const int H = p.num_heads;
  const AttnWorkItem item = p.items[blockIdx.x / H];
  const int h = static_cast<int>(blockIdx.x % H);
  const int kvh = h / (H / p.num_kv_heads);
  const AttnSeqDesc sd = p.seqs[item.seq];
  const int q_start = item.q_start;
  const int rows = min(kAttnGenericBlockM, sd.rows - q_start);
  const int kv_len = sd.past + q_start + rows;
  const int first_pos = sd.past + q_start;
  const int64_t q_ld = int64_t{H} * D, kv_ld = int64_t{p.num_kv_heads} * D;
  const int64_t q_row0 = sd.row_begin + q_start;
  const T* q = static_cast<const T*>(p.q) + q_row0 * q_ld + int64_t{h} * D;
  const T* kc = static_cast<const T*>(sd.k) + int64_t{kvh} * D;
  const T* vc = static_cast<const T*>(sd.v) + int64_t{kvh} * D;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

  for (int i = threadIdx.x; i < kAttnGenericBlockM * D; i += blockDim.x) {
    const int r = i / D, c = i % D;
    sQ[i] = r < rows ? ToFloat(q[r * q_ld + c]) : 0.0f;
  }

  float o[kRowsPerWarp][kDpl];
  float m[kRowsPerWarp], l[kRowsPerWarp], sc[kRowsPerWarp];
  int lim[kRowsPerWarp];
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp * kRowsPerWarp + i;
    m[i] = -INFINITY;
    l[i] = 0.0f;
    sc[i] = r < rows ? p.scale[q_row0 + r] : 0.0f;
    lim[i] = min(first_pos + r, kv_len - 1);
#pragma unroll
    for (int c = 0; c < kDpl; ++c) o[i][c] = 0.0f;
  }

  const int n_tiles = (kv_len + kAttnGenericBlockN - 1) / kAttnGenericBlockN;
  for (int j = 0; j < n_tiles; ++j) {
    const int key0 = j * kAttnGenericBlockN;
    __syncthreads();  // the previous tile is consumed (and sQ is written)
    for (int i = threadIdx.x; i < kAttnGenericBlockN * D; i += blockDim.x) {
      const int r = i / D, c = i % D;
      const bool in = key0 + r < kv_len;
      const int64_t off = int64_t{key0 + r} * kv_ld + c;
      sK[r * (D + 1) + c] = in ? ToFloat(kc[off]) : 0.0f;
      sV[r * D + c] = in ? ToFloat(vc[off]) : 0.0f;
    }
    __syncthreads();
    const int key = key0 + lane;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int r = warp * kRowsPerWarp + i;
      if (r >= rows || key0 > lim[i]) continue;  // warp-uniform
      const float* qr = sQ + r * D;
      const float* kr = sK + lane * (D + 1);
      float dot = 0.0f;
#pragma unroll 4
      for (int d = 0; d < D; ++d) dot = fmaf(qr[d], kr[d], dot);
      // As the CPU backend: the product first, then times the row's scale.
      const float x = key > lim[i] ? -INFINITY : dot * sc[i];
      float tmax = x;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, off));
      }
      const float mn = fmaxf(m[i], tmax);  // finite: key 0 is in tile 0
      const float alpha = expf(m[i] - mn);
      const float pe = expf(x - mn);
      float psum = pe;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) psum += __shfl_xor_sync(0xffffffffu, psum, off);
      l[i] = l[i] * alpha + psum;
      m[i] = mn;
#pragma unroll
      for (int c = 0; c < kDpl; ++c) o[i][c] *= alpha;
#pragma unroll 8
      for (int jj = 0; jj < kAttnGenericBlockN; ++jj) {
        const float pj = __shfl_sync(0xffffffffu, pe, jj);
        const float* vr = sV + jj * D;
#pragma unroll
        for (int c = 0; c < kDpl; ++c) {
          const int d = lane + 32 * c;
          if (d < D) o[i][c] = fmaf(pj, vr[d], o[i][c]);
        }
      }
    }
  }

  T* out = static_cast<T*>(p.out) + q_row0 * q_ld + int64_t{h} * D;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp * kRowsPerWarp + i;
    if (r >= rows) continue;
    const float inv = 1.0f / l[i];
#pragma unroll
    for (int c = 0; c < kDpl; ++c) {
      const int d = lane + 32 * c;
      if (d < D) FromFloat(out + r * q_ld + d, o[i][c] * inv);
    }
  }
}

// ---------------------------------------------------------------------------
// Kernel launcher

template <typename Kernel>
cudaError_t Launch(Kernel kernel, const AttnParams& p, int threads, size_t smem,
                   cudaStream_t stream) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  const int64_t ctas = p.num_items * p.num_heads;
  kernel<<<static_cast<unsigned>(ctas), threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchTyped(const AttnParams& p, AttnKernel kernel, cudaStream_t stream) {
  switch (kernel) {
    case AttnKernel::kTensorCore64:
      return Launch(AttnTcKernel<T, 64>, p, kAttnTcThreads, AttnTcSharedBytes(64), stream);
    case AttnKernel::kTensorCore128:
      return Launch(AttnTcKernel<T, 128>, p, kAttnTcThreads, AttnTcSharedBytes(128), stream);
    case AttnKernel::kGeneric: {
      const size_t smem = AttnGenericSharedBytes(p.head_dim);
      constexpr int kThreads = kAttnGenericThreads;
      if (p.head_dim <= 32) return Launch(AttnGenericKernel<T, 1>, p, kThreads, smem, stream);
      if (p.head_dim <= 64) return Launch(AttnGenericKernel<T, 2>, p, kThreads, smem, stream);
      if (p.head_dim <= 128) return Launch(AttnGenericKernel<T, 4>, p, kThreads, smem, stream);
      if (p.head_dim <= kAttnGenericMaxHeadDim) {
        return Launch(AttnGenericKernel<T, 8>, p, kThreads, smem, stream);
      }
      return cudaErrorInvalidValue;
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchAttention(const AttnParams& p, StoreType type, AttnKernel kernel,
                            cudaStream_t stream) {
  if (p.num_items == 0 || p.num_heads == 0) return cudaSuccess;
  if (p.head_dim < 1 || p.num_kv_heads < 1 || p.num_heads % p.num_kv_heads != 0) {
    return cudaErrorInvalidValue;
  }
  if ((kernel == AttnKernel::kTensorCore64 && p.head_dim != 64) ||
      (kernel == AttnKernel::kTensorCore128 && p.head_dim != 128)) {
    return cudaErrorInvalidValue;
  }
  switch (type) {
    case StoreType::kF32:
      return LaunchTyped<float>(p, kernel, stream);
    case StoreType::kBF16:
      return LaunchTyped<__nv_bfloat16>(p, kernel, stream);
    case StoreType::kF16:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace focal::kernels
