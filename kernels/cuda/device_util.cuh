// SPDX-License-Identifier: Apache-2.0
// Device helpers shared by the kernels: typed loads, deterministic block
// reductions and grid sizing. Included by .cu files only.
#ifndef FOCAL_KERNELS_CUDA_DEVICE_UTIL_CUH_
#define FOCAL_KERNELS_CUDA_DEVICE_UTIL_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/launchers.h"

namespace focal::kernels::cuda_internal {

inline constexpr int kThreads = 256;  // threads of the row-wise kernels

// Element i of a run-time typed array, widened to FP32 (exact).
__device__ __forceinline__ float LoadAsFloat(const void* p, StoreType t, int64_t i) {
  switch (t) {
    case StoreType::kBF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case StoreType::kF16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case StoreType::kF32:
    default:
      return static_cast<const float*>(p)[i];
  }
}

// Sum over the block in a fixed order (xor butterfly in each warp, then warp
// 0 over the warp sums): the result depends only on the inputs and
// blockDim, never on timing. Every thread gets the total. `scratch` holds
// 32 values; blockDim.x must be a multiple of 32.
template <typename T>
__device__ __forceinline__ T BlockSum(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // scratch may still be read from a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? scratch[lane] : T(0);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  return scratch[0];
}

// Blocks for a grid-stride loop over n elements.
inline unsigned GridFor(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > (int64_t{1} << 20)) b = int64_t{1} << 20;
  return static_cast<unsigned>(b);
}

}  // namespace focal::kernels::cuda_internal

#endif  // FOCAL_KERNELS_CUDA_DEVICE_UTIL_CUH_
