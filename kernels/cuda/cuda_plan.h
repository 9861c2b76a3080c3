// SPDX-License-Identifier: Apache-2.0
// Host-side planning for the CUDA backend, in plain C++ (no CUDA headers), so
// that it builds and is unit-tested on machines without nvcc or a GPU: the
// --device string, GEMM row tiles, the attention work list and kernel
// choice, and the out-of-memory message.
#ifndef FOCAL_KERNELS_CUDA_CUDA_PLAN_H_
#define FOCAL_KERNELS_CUDA_CUDA_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "kernels/cuda/attention_params.h"
#include "kernels/tensor.h"

namespace focal::kernels {

// kBf16: weights (matrices) in BF16 on the device, GEMM and attention
// operands rounded to BF16 with FP32 accumulation, FP32 softmax statistics
// and FP32 storage between ops. kFp32: FP32 everywhere (no TF32), for parity
// checks against the CPU backend.
enum class CudaPrecision { kBf16, kFp32 };
absl::string_view CudaPrecisionName(CudaPrecision p);  // "bf16" / "fp32"

struct CudaDeviceSpec {
  int ordinal = 0;
  CudaPrecision precision = CudaPrecision::kBf16;
};

// Parses "cuda", "cuda:N", "cuda:P" or "cuda:N:P" with P = bf16 | fp32.
// When the string names no precision, `env_precision` (the value of
// FOCAL_CUDA_PRECISION; null or empty for unset) decides, else bf16.
// InvalidArgument for anything else, naming the accepted forms.
absl::StatusOr<CudaDeviceSpec> ParseCudaDevice(absl::string_view device, const char* env_precision);

// MatMul runs cuBLASLt on row tiles of exactly kCudaGemmRows rows (see
// kernels/cuda/README.md, "Batch invariance"): `full` whole tiles straight
// from/to the activations, then at most one zero-padded tail tile of `tail`
// rows through a workspace.
inline constexpr int64_t kCudaGemmRows = 256;
struct RowTilePlan {
  int64_t full = 0;
  int64_t tail = 0;
};
RowTilePlan PlanRowTiles(int64_t rows, int64_t tile_rows = kCudaGemmRows);

// The shape of one sequence of an attention call (AttentionSeq without the
// caches).
struct AttnSeqShape {
  int64_t row_begin = 0;
  int64_t rows = 0;
  int64_t past = 0;
};

// One work item per (sequence, block of `block_rows` query rows), blocks cut
// from each sequence's own first row, so the items of a sequence never
// depend on the rest of the batch. Items are ordered by decreasing number of
// keys their last row sees (longest first: the causal imbalance is then
// absorbed by the tail of the grid); ties by sequence, then block.
std::vector<AttnWorkItem> PlanAttentionWork(absl::Span<const AttnSeqShape> seqs, int block_rows);

// BF16 precision with head dim 64 or 128 takes the tensor-core kernel;
// everything else (FP32 precision, other head dims) the generic one.
AttnKernel ChooseAttnKernel(CudaPrecision precision, int head_dim);
int AttnBlockRows(AttnKernel k);
// Dynamic shared memory of one CTA, in bytes.
size_t AttnSharedBytes(AttnKernel k, int head_dim);
// Head dims per lane of the generic kernel (1, 2, 4 or 8: the smallest with
// 32 * n >= head_dim); 0 when head_dim is out of range.
int AttnGenericDimsPerLane(int head_dim);

// The number of CTAs of an attention launch (a 1-D grid of items x heads);
// InvalidArgument when it would pass the 2^31 - 1 the grid allows.
absl::StatusOr<int64_t> AttnGridSize(int64_t num_items, int num_heads);

// CudaBackend::ScratchBytes: MatMul's workspaces (the BF16 cast of a whole
// input, or a padded FP32 tail tile; the padded tail output; the host-result
// staging), each counted twice because a workspace that grows keeps its old
// block in the allocator's cache, plus the allocator's rounding (at most
// 2 MiB per live tensor), plus the staging ring for host index arrays.
int64_t CudaScratchBytes(const ForwardShape& shape);

// The message of the ResourceExhausted error when cudaMalloc fails: what was
// asked for, what the device has, and which flags lower the need.
std::string CudaOutOfMemoryMessage(absl::string_view device_name, size_t bytes, DType dtype,
                                   int64_t rows, int64_t cols, size_t free_bytes,
                                   size_t total_bytes);

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_CUDA_PLAN_H_
