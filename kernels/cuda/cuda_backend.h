// SPDX-License-Identifier: Apache-2.0
// The CUDA backend: cuBLASLt GEMMs on fixed row tiles, fused kernels for the
// row-wise ops and a fused flash-attention kernel with the focal per-row
// scale. Design, precision modes and batch invariance: kernels/cuda/README.md.
//
// Selecting it: --device cuda, cuda:N, cuda:bf16, cuda:N:fp32, ... (see
// ParseCudaDevice); without a precision in the string the environment
// variable FOCAL_CUDA_PRECISION=bf16|fp32 decides, default bf16. The name
// (recorded in results) is "cuda:N (<GPU name>, <precision>)".
//
// Memory: everything is cudaMalloc'd (no managed memory) through a caching
// allocator; Allocate zero-fills like the CPU backend. Out of memory is
// ResourceExhausted naming the flags that lower the need. Activations stay in
// the dtype they are allocated with (the Transformer asks for F32); in BF16
// mode matrices are stored as BF16 and rounded operands are made on the fly.
#ifndef FOCAL_KERNELS_CUDA_CUDA_BACKEND_H_
#define FOCAL_KERNELS_CUDA_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_plan.h"

namespace focal::kernels {

// The backend on device spec.ordinal. FailedPrecondition when there is no
// such device, its compute capability is below 8.0 (BF16 tensor cores), or
// cuBLASLt cannot be loaded.
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const CudaDeviceSpec& spec);

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_CUDA_BACKEND_H_
