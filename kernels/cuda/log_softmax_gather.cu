// SPDX-License-Identifier: Apache-2.0
// Log-softmax + gather + argmax over the scored rows of the LM head only:
// one CTA of 1024 threads per row, two passes over the row (max/argmax, then
// the sum of exponentials in double), block reductions in a fixed order. The
// full logits never leave the device. The LM head comes in chunks of a few
// hundred rows, so a CTA must keep many loads in flight on its own: a full
// SM's worth of threads, four independent loads each per step (with 256
// threads and one load each, the H200 spent 21% of a 1B-shape scoring
// forward here).
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/launchers.h"

namespace focal::kernels {
namespace {

using cuda_internal::BlockSum;

// (value, index) with the larger value winning and, on equal values, the
// smaller index: the first index of the maximum, as the CPU backend.
struct ArgMax {
  float v;
  int32_t i;
};

__device__ __forceinline__ ArgMax Better(ArgMax a, ArgMax b) {
  if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}

// ---------------------------------------------------------------------------
// CUDA kernels

constexpr int kRowThreads = 1024;
constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kRowThreads)
    LogSoftmaxGatherKernel(const float* logits, int64_t vocab, const int32_t* targets,
                           double* logprob, int32_t* argmax) {
  __shared__ double scratch[32];
  __shared__ float best_v[32];
  __shared__ int32_t best_i[32];
  const int64_t r = blockIdx.x;
  const float* row = logits + r * vocab;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;

  // Pass 1: the first index of the maximum. Each thread scans its strided
  // indices in increasing order with a strict '>' (its own first maximum);
  // INT32_MAX marks "nothing yet", so a row of -inf still yields its first
  // index. A NaN never compares greater, as in the CPU loop (which starts
  // from index 0: a NaN there wins, handled after the reduction).
  // The loads of one step are independent; they are consumed in index order.
  ArgMax m{-INFINITY, INT32_MAX};
  const int64_t step = int64_t{blockDim.x} * kUnroll;
  for (int64_t base = threadIdx.x; base < vocab; base += step) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = base + u * int64_t{blockDim.x};
      v[u] = j < vocab ? row[j] : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = base + u * int64_t{blockDim.x};
      if (j < vocab && (v[u] > m.v || (m.i == INT32_MAX && v[u] == m.v))) {
        m = {v[u], static_cast<int32_t>(j)};
      }
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    ArgMax other{__shfl_xor_sync(0xffffffffu, m.v, o), __shfl_xor_sync(0xffffffffu, m.i, o)};
    m = Better(m, other);
  }
  if (lane == 0) {
    best_v[warp] = m.v;
    best_i[warp] = m.i;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < warps ? ArgMax{best_v[lane], best_i[lane]} : ArgMax{-INFINITY, INT32_MAX};
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      ArgMax other{__shfl_xor_sync(0xffffffffu, m.v, o), __shfl_xor_sync(0xffffffffu, m.i, o)};
      m = Better(m, other);
    }
    if (lane == 0) {
      best_v[0] = m.v;
      best_i[0] = m.i;
    }
  }
  __syncthreads();
  int32_t best = best_i[0];
  if (best == INT32_MAX || isnan(row[0])) best = 0;  // all NaN, or NaN first: as the CPU
  const double mx = row[best];

  // Pass 2: log of the normaliser, in double.
  double sum = 0;
  for (int64_t base = threadIdx.x; base < vocab; base += step) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = base + u * int64_t{blockDim.x};
      v[u] = j < vocab ? row[j] : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * int64_t{blockDim.x} < vocab) sum += exp(static_cast<double>(v[u]) - mx);
    }
  }
  sum = BlockSum(sum, scratch);
  if (threadIdx.x == 0) {
    argmax[r] = best;
    logprob[r] = static_cast<double>(row[targets[r]]) - mx - log(sum);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Kernel launcher

cudaError_t LaunchLogSoftmaxGather(const float* logits, int64_t rows, int64_t vocab,
                                   const int32_t* targets, double* logprob, int32_t* argmax,
                                   cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  LogSoftmaxGatherKernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
      logits, vocab, targets, logprob, argmax);
  return cudaGetLastError();
}

}  // namespace focal::kernels
