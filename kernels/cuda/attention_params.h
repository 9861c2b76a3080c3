// SPDX-License-Identifier: Apache-2.0
// The POD parameter block of the CUDA attention kernels (flash-attention's
// Flash_fwd_params idea) and the block shapes the host planner shares with
// the kernels. Plain C++17, no CUDA or absl: included by nvcc translation
// units, by the host backend and by the CPU-side unit tests.
#ifndef FOCAL_KERNELS_CUDA_ATTENTION_PARAMS_H_
#define FOCAL_KERNELS_CUDA_ATTENTION_PARAMS_H_

#include <cstddef>
#include <cstdint>

namespace focal::kernels {

// Query rows per tensor-core attention CTA (4 warps x 16 rows) and keys per
// K/V tile. Blocks are cut relative to each sequence's first row.
inline constexpr int kAttnTcBlockM = 64;
inline constexpr int kAttnTcBlockN = 64;
inline constexpr int kAttnTcThreads = 128;
// The generic (any head dim, fp32 CUDA-core) kernel: 4 warps x 8 rows, and
// 32-key tiles (one key per lane).
inline constexpr int kAttnGenericBlockM = 32;
inline constexpr int kAttnGenericBlockN = 32;
inline constexpr int kAttnGenericThreads = 128;
inline constexpr int kAttnGenericMaxHeadDim = 256;

// Shared memory of the tensor-core kernel: Q plus two stages of K and V,
// BF16 rows padded by 8 elements (16 bytes) so ldmatrix is conflict-free.
inline constexpr int kAttnTcRowPad = 8;
inline constexpr size_t AttnTcSharedBytes(int head_dim) {
  return (size_t{kAttnTcBlockM} + 4 * size_t{kAttnTcBlockN}) * (head_dim + kAttnTcRowPad) * 2;
}
// Shared memory of the generic kernel: Q (BlockM x D), K (BlockN x (D + 1),
// the +1 keeps the per-lane key rows in distinct banks) and V (BlockN x D),
// FP32.
inline constexpr size_t AttnGenericSharedBytes(int head_dim) {
  return (size_t{kAttnGenericBlockM} * head_dim + size_t{kAttnGenericBlockN} * (head_dim + 1) +
          size_t{kAttnGenericBlockN} * head_dim) *
         4;
}

enum class AttnKernel {
  kTensorCore64,   // BF16 mma.sync flash kernel, head dim 64
  kTensorCore128,  // same, head dim 128
  kGeneric,        // FP32 CUDA-core flash kernel, head dim 1..256
};

// One sequence of a packed attention call, on the device. Its queries are
// rows [row_begin, row_begin + rows) of q/out; its cache holds past + rows
// valid rows (see AttentionSeq in kernels/backend.h).
struct AttnSeqDesc {
  const void* k = nullptr;  // (capacity, Hkv*D), dtype of the call
  const void* v = nullptr;
  int64_t row_begin = 0;
  int32_t rows = 0;
  int32_t past = 0;
};

// One CTA's query block (per head): rows [q_start, q_start + block) of
// sequence `seq`, clipped to the sequence.
struct AttnWorkItem {
  int32_t seq = 0;
  int32_t q_start = 0;
};

// Everything one launch needs. Element offsets are computed in int64.
struct AttnParams {
  const void* q = nullptr;       // (T, H*D)
  void* out = nullptr;           // (T, H*D)
  const float* scale = nullptr;  // (T): softmax scale of each query row
  const AttnSeqDesc* seqs = nullptr;
  const AttnWorkItem* items = nullptr;
  int64_t num_items = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
};

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_ATTENTION_PARAMS_H_
