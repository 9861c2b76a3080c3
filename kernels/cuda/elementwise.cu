// SPDX-License-Identifier: Apache-2.0
// Row-wise and element-wise kernels: embedding, RMSNorm, RoPE, SwiGLU,
// residual add, row dot, row gather, BF16 casts. Memory-bound; each output
// element is computed by one thread in a fixed order (no atomics), so every
// result depends only on its own row's inputs (batch invariance).
//
// Rounding follows the CPU backend op for op: products and sums that the CPU
// rounds separately are written with __fmul_rn/__fadd_rn so that nvcc does
// not contract them into FMAs.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/launchers.h"

namespace focal::kernels {
namespace {

using cuda_internal::BlockSum;
using cuda_internal::GridFor;
using cuda_internal::kThreads;
using cuda_internal::LoadAsFloat;

// ---------------------------------------------------------------------------
// CUDA kernels

__global__ void EmbedKernel(const void* table, StoreType type, int64_t cols, const int32_t* tokens,
                            float* out) {
  const int64_t row = blockIdx.x;
  const int64_t src = static_cast<int64_t>(tokens[row]) * cols;
  float* o = out + row * cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) o[i] = LoadAsFloat(table, type, src + i);
}

__global__ void RmsNormKernel(const float* x, const void* w, StoreType w_type, float eps,
                              int64_t cols, float* out) {
  __shared__ double scratch[32];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  float* orow = out + row * cols;
  double ss = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const double v = xr[i];
    ss += v * v;
  }
  ss = BlockSum(ss, scratch);
  const float inv = static_cast<float>(1.0 / sqrt(ss / static_cast<double>(cols) + double{eps}));
  // HF order: (x * inv) rounded to FP32, then times w.
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    orow[i] = __fmul_rn(LoadAsFloat(w, w_type, i), __fmul_rn(xr[i], inv));
  }
}

__global__ void RopeKernel(float* x, int64_t rows, int heads, int head_dim,
                           const int64_t* positions, const float* inv_freq) {
  const int half = head_dim / 2;
  const int64_t n = rows * half;
  const int64_t ld = static_cast<int64_t>(heads) * head_dim;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < n;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t t = idx / half;
    const int i = static_cast<int>(idx % half);
    // As HF (and the CPU backend): an FP32 angle, cos/sin taken of it.
    const float angle = __fmul_rn(static_cast<float>(positions[t]), inv_freq[i]);
    double s, c;
    sincos(static_cast<double>(angle), &s, &c);
    const float cs = static_cast<float>(c), sn = static_cast<float>(s);
    float* row = x + t * ld;
    for (int h = 0; h < heads; ++h) {
      float* v = row + static_cast<int64_t>(h) * head_dim;
      const float a = v[i], b = v[i + half];
      v[i] = __fsub_rn(__fmul_rn(a, cs), __fmul_rn(b, sn));
      v[i + half] = __fadd_rn(__fmul_rn(b, cs), __fmul_rn(a, sn));
    }
  }
}

__device__ __forceinline__ float SwiGluOne(float g, float u) {
  return __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), u);
}

__global__ void SwiGluKernel(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = SwiGluOne(gate[i], up[i]);
  }
}

// Four elements per thread through 16-byte loads and stores (n4 = n / 4,
// pointers 16-byte aligned): the same per-element arithmetic, so the same
// bits as SwiGluKernel, with a quarter of the memory instructions.
__global__ void SwiGluKernel4(const float4* gate, const float4* up, float4* out, int64_t n4) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n4;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float4 g = gate[i], u = up[i];
    out[i] = make_float4(SwiGluOne(g.x, u.x), SwiGluOne(g.y, u.y), SwiGluOne(g.z, u.z),
                         SwiGluOne(g.w, u.w));
  }
}

__global__ void AddKernel(const float* x, float* inout, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    inout[i] = __fadd_rn(inout[i], x[i]);
  }
}

__global__ void RowDotKernel(const float* x, int64_t cols, const void* w, StoreType w_type,
                             float bias, float* out) {
  __shared__ double scratch[32];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * cols;
  double acc = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    acc += static_cast<double>(xr[i]) * static_cast<double>(LoadAsFloat(w, w_type, i));
  }
  acc = BlockSum(acc, scratch);
  if (threadIdx.x == 0) out[row] = static_cast<float>(acc + double{bias});
}

__global__ void GatherRowsKernel(const float* x, int64_t cols, const int64_t* rows, float* out) {
  const int64_t r = blockIdx.x;
  const float* src = x + rows[r] * cols;
  float* dst = out + r * cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) dst[i] = src[i];
}

__global__ void CastRowsToBf16Kernel(const float* src, int64_t rows, int64_t cols,
                                     int64_t padded_rows, __nv_bfloat16* dst) {
  const int64_t n = padded_rows * cols, valid = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = i < valid ? __float2bfloat16_rn(src[i]) : __float2bfloat16_rn(0.0f);
  }
}

// Four elements per thread (cols % 4 == 0, so rows * cols and padded_rows *
// cols are too; src 16-byte and dst 8-byte aligned): the same bits as
// CastRowsToBf16Kernel.
__global__ void CastRowsToBf16Kernel4(const float4* src, int64_t valid4, int64_t n4, uint2* dst) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n4;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float4 v = i < valid4 ? src[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
    dst[i] = make_uint2(*reinterpret_cast<const uint32_t*>(&lo),
                        *reinterpret_cast<const uint32_t*>(&hi));
  }
}

bool Aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

__global__ void ConvertKernel(const void* src, StoreType src_type, void* dst, StoreType dst_type,
                              int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = LoadAsFloat(src, src_type, i);
    if (dst_type == StoreType::kBF16) {
      static_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(v);
    } else {
      static_cast<float*>(dst)[i] = v;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Kernel launchers

cudaError_t LaunchEmbed(const void* table, StoreType table_type, int64_t cols,
                        const int32_t* tokens, int64_t rows, float* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  EmbedKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(table, table_type, cols, tokens,
                                                                    out);
  return cudaGetLastError();
}

cudaError_t LaunchRmsNorm(const float* x, const void* w, StoreType w_type, float eps, int64_t rows,
                          int64_t cols, float* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, w, w_type, eps, cols, out);
  return cudaGetLastError();
}

cudaError_t LaunchRope(float* x, int64_t rows, int heads, int head_dim, const int64_t* positions,
                       const float* inv_freq, cudaStream_t stream) {
  const int64_t n = rows * (head_dim / 2);
  if (n == 0) return cudaSuccess;
  RopeKernel<<<GridFor(n), kThreads, 0, stream>>>(x, rows, heads, head_dim, positions, inv_freq);
  return cudaGetLastError();
}

cudaError_t LaunchSwiGlu(const float* gate, const float* up, float* out, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (n % 4 == 0 && Aligned(gate, 16) && Aligned(up, 16) && Aligned(out, 16)) {
    SwiGluKernel4<<<GridFor(n / 4), kThreads, 0, stream>>>(reinterpret_cast<const float4*>(gate),
                                                           reinterpret_cast<const float4*>(up),
                                                           reinterpret_cast<float4*>(out), n / 4);
  } else {
    SwiGluKernel<<<GridFor(n), kThreads, 0, stream>>>(gate, up, out, n);
  }
  return cudaGetLastError();
}

cudaError_t LaunchAdd(const float* x, float* inout, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  AddKernel<<<GridFor(n), kThreads, 0, stream>>>(x, inout, n);
  return cudaGetLastError();
}

cudaError_t LaunchRowDot(const float* x, int64_t rows, int64_t cols, const void* w,
                         StoreType w_type, float bias, float* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  RowDotKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, cols, w, w_type, bias, out);
  return cudaGetLastError();
}

cudaError_t LaunchGatherRows(const float* x, int64_t cols, const int64_t* rows, int64_t n,
                             float* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  GatherRowsKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(x, cols, rows, out);
  return cudaGetLastError();
}

cudaError_t LaunchCastRowsToBf16(const float* src, int64_t rows, int64_t cols, int64_t padded_rows,
                                 void* dst, cudaStream_t stream) {
  const int64_t n = padded_rows * cols;
  if (n == 0) return cudaSuccess;
  if (cols % 4 == 0 && Aligned(src, 16) && Aligned(dst, 8)) {
    CastRowsToBf16Kernel4<<<GridFor(n / 4), kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(src), rows * cols / 4, n / 4, static_cast<uint2*>(dst));
  } else {
    CastRowsToBf16Kernel<<<GridFor(n), kThreads, 0, stream>>>(src, rows, cols, padded_rows,
                                                              static_cast<__nv_bfloat16*>(dst));
  }
  return cudaGetLastError();
}

cudaError_t LaunchConvert(const void* src, StoreType src_type, void* dst, StoreType dst_type,
                          int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  ConvertKernel<<<GridFor(n), kThreads, 0, stream>>>(src, src_type, dst, dst_type, n);
  return cudaGetLastError();
}

}  // namespace focal::kernels
