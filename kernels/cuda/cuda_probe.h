// SPDX-License-Identifier: Apache-2.0
// Host-callable CUDA probes. No absl here: nvcc translation units stay free of
// it, and the .cc callers turn the results into absl::Status.
#ifndef FOCAL_KERNELS_CUDA_CUDA_PROBE_H_
#define FOCAL_KERNELS_CUDA_CUDA_PROBE_H_

namespace focal::kernels {

// Sets *count to the number of CUDA devices; returns nullptr on success or the
// driver's error string (e.g. no driver on a CPU-only machine; *count = 0).
const char* CudaDeviceCount(int* count);

// Runs a tiny kernel on device 0 that writes n floats and checks them;
// returns nullptr when the device computes correctly, else an error string.
const char* CudaSmokeTest(int n);

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CUDA_CUDA_PROBE_H_
