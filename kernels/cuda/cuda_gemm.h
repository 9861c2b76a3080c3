// SPDX-License-Identifier: Apache-2.0
// Batch-invariant GEMM on fixed-height row tiles through cuBLASLt.
//
// out = x . w^T is issued as a strided-batched cuBLASLt matmul whose batch
// entries are tiles of exactly kCudaGemmRows rows of x/out (w shared, batch
// stride 0). The algorithm is chosen once per (N, K, operand type) from the
// heuristic for a canonical batch and then pinned for every call, whatever
// the batch count, and only algorithms without split-K and without a
// reduction scheme are accepted (preferably ones needing no workspace; only
// when cuBLASLt offers none of those, ones using up to kGemmWorkspaceBytes):
// each output element is then one CTA's dot product over K in the kernel's
// fixed order. A row's result
// depends on its own row, the weight and the (pinned) algorithm only, never
// on how many rows share the call. See kernels/cuda/README.md.
#ifndef FOCAL_KERNELS_CUDA_CUDA_GEMM_H_
#define FOCAL_KERNELS_CUDA_CUDA_GEMM_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "absl/status/statusor.h"
#include "kernels/cuda/cublaslt_loader.h"

namespace focal::kernels {

enum class GemmOperands { kBf16, kF32 };  // x and w; out is always F32

// Workspace offered to cuBLASLt when no workspace-free algorithm qualifies.
inline constexpr size_t kGemmWorkspaceBytes = size_t{32} << 20;

class CudaGemm {
 public:
  // Loads cuBLASLt and creates its handle. All work goes to `stream`.
  static absl::StatusOr<std::unique_ptr<CudaGemm>> Create(cudaStream_t stream);
  ~CudaGemm();
  CudaGemm(const CudaGemm&) = delete;
  CudaGemm& operator=(const CudaGemm&) = delete;

  // For b in [0, tiles): out[b] (kCudaGemmRows, n) = x[b] (kCudaGemmRows, k)
  // . w(n, k)^T, with x/out tiles contiguous (row strides k and n). Device
  // pointers aligned to 256 bytes plus whole rows. Asynchronous; errors of
  // the call itself (no algorithm, bad arguments) are returned.
  absl::Status TiledMatMul(GemmOperands type, const void* x, int64_t tiles, const void* w,
                           int64_t n, int64_t k, float* out);

 private:
  struct Pinned {
    cublasLtMatmulAlgo_t algo;
    size_t workspace = 0;
  };
  CudaGemm(const CublasLtApi* api, cublasLtHandle_t handle, cudaStream_t stream, void* workspace)
      : api_(api), handle_(handle), stream_(stream), workspace_(workspace) {}
  absl::StatusOr<Pinned> Algo(GemmOperands type, int64_t n, int64_t k);

  const CublasLtApi* api_;
  cublasLtHandle_t handle_;
  cudaStream_t stream_;
  void* workspace_;  // kGemmWorkspaceBytes of device memory
  std::map<std::tuple<int, int64_t, int64_t>, Pinned> algos_;
};

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_CUDA_GEMM_H_
