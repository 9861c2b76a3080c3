// SPDX-License-Identifier: Apache-2.0
// Host-callable launchers of the CUDA kernels: one line per kernel, device
// pointers in, the launch's cudaError_t (cudaGetLastError) out. No absl here
// (nvcc translation units stay free of it); kernels/cuda/cuda_backend.cc checks
// shapes, turns errors into absl::Status and owns every pointer passed.
//
// Shape letters as in kernels/backend.h. All activations are FP32 unless a
// parameter says otherwise; every launch is asynchronous on `stream`.
#ifndef FOCAL_KERNELS_CUDA_LAUNCHERS_H_
#define FOCAL_KERNELS_CUDA_LAUNCHERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/attention_params.h"

namespace focal::kernels {

// Storage type of a device array whose type is chosen at run time.
enum class StoreType : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

// out(T,C) = table[tokens[t], :] widened to FP32.   table: (V,C)
cudaError_t LaunchEmbed(const void* table, StoreType table_type, int64_t cols,
                        const int32_t* tokens, int64_t rows, float* out, cudaStream_t stream);

// out = w * (x * rsqrt(mean(x^2) + eps)), per row; the sum of squares in
// double as the CPU backend. x and out may alias.      w: (C) F32 or BF16
cudaError_t LaunchRmsNorm(const float* x, const void* w, StoreType w_type, float eps, int64_t rows,
                          int64_t cols, float* out, cudaStream_t stream);

// HF rotate_half RoPE in place; angle = float(position) * inv_freq[i] in
// FP32, cos/sin of it in double rounded to FP32 (as the CPU backend).
cudaError_t LaunchRope(float* x, int64_t rows, int heads, int head_dim, const int64_t* positions,
                       const float* inv_freq, cudaStream_t stream);

// out[i] = silu(gate[i]) * up[i]; out may alias gate or up.
cudaError_t LaunchSwiGlu(const float* gate, const float* up, float* out, int64_t n,
                         cudaStream_t stream);

// inout[i] += x[i].
cudaError_t LaunchAdd(const float* x, float* inout, int64_t n, cudaStream_t stream);

// out[t] = float(sum_i double(x[t,i]) * w[i] + bias).   w: (C) F32 or BF16
cudaError_t LaunchRowDot(const float* x, int64_t rows, int64_t cols, const void* w,
                         StoreType w_type, float bias, float* out, cudaStream_t stream);

// out(n,C) = x[rows[r], :].
cudaError_t LaunchGatherRows(const float* x, int64_t cols, const int64_t* rows, int64_t n,
                             float* out, cudaStream_t stream);

// dst(padded_rows, cols) BF16 = src(rows, cols) rounded to nearest even,
// rows [rows, padded_rows) zero.
cudaError_t LaunchCastRowsToBf16(const float* src, int64_t rows, int64_t cols, int64_t padded_rows,
                                 void* dst, cudaStream_t stream);

// dst[i] = src[i] converted (F32/F16/BF16 -> F32/BF16; BF16 rounding to
// nearest even).
cudaError_t LaunchConvert(const void* src, StoreType src_type, void* dst, StoreType dst_type,
                          int64_t n, cudaStream_t stream);

// For each row r of logits (R,V): logprob[r] = log_softmax(row)[targets[r]]
// (exp and sums in double) and argmax[r] = the first index of the maximum.
cudaError_t LaunchLogSoftmaxGather(const float* logits, int64_t rows, int64_t vocab,
                                   const int32_t* targets, double* logprob, int32_t* argmax,
                                   cudaStream_t stream);

// Causal GQA flash attention with a per-row scale over packed sequences:
// one CTA per (work item, head). q, caches and out are all of `type` (F32 or
// BF16). `kernel` must suit the head dim (see ChooseAttnKernel).
cudaError_t LaunchAttention(const AttnParams& params, StoreType type, AttnKernel kernel,
                            cudaStream_t stream);

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_LAUNCHERS_H_
