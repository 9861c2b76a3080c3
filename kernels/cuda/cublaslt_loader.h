// SPDX-License-Identifier: Apache-2.0
// cuBLASLt, loaded with dlopen on first use instead of linked: focal-eval
// built with CUDA then starts (and runs --device cpu) on machines without the
// CUDA libraries, and every test binary is spared loading a 500 MB library
// it never calls. The function pointer types are taken from cublasLt.h
// itself (decltype), so they cannot drift from the header.
#ifndef FOCAL_KERNELS_CUDA_CUBLASLT_LOADER_H_
#define FOCAL_KERNELS_CUDA_CUBLASLT_LOADER_H_

#include <cublasLt.h>

#include "absl/status/statusor.h"

namespace focal::kernels {

struct CublasLtApi {
  decltype(&cublasLtGetVersion) GetVersion = nullptr;
  decltype(&cublasLtGetStatusString) GetStatusString = nullptr;
  decltype(&cublasLtCreate) Create = nullptr;
  decltype(&cublasLtDestroy) Destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) MatmulAlgoConfigGetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoCapGetAttribute) MatmulAlgoCapGetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoCheck) MatmulAlgoCheck = nullptr;
  decltype(&cublasLtMatmul) Matmul = nullptr;
};

// The process-wide table, loaded once (thread-safe). FailedPrecondition
// naming the library when it cannot be opened, a symbol is missing, or its
// major version differs from the headers this binary was built with.
absl::StatusOr<const CublasLtApi*> LoadCublasLt();

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_CUBLASLT_LOADER_H_
