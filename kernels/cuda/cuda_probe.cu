// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/cuda_probe.h"

namespace focal::kernels {
namespace {

__global__ void IotaKernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
}

}  // namespace

const char* CudaDeviceCount(int* count) {
  *count = 0;
  cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess) {
    *count = 0;
    return cudaGetErrorString(e);
  }
  return nullptr;
}

const char* CudaSmokeTest(int n) {
  float* d = nullptr;
  cudaError_t e = cudaMalloc(&d, n * sizeof(float));
  if (e != cudaSuccess) return cudaGetErrorString(e);
  IotaKernel<<<(n + 255) / 256, 256>>>(d, n);
  std::vector<float> h(n);
  e = cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  for (int i = 0; i < n; ++i) {
    if (h[i] != 2.0f * i) return "device produced a wrong value";
  }
  return nullptr;
}

}  // namespace focal::kernels
