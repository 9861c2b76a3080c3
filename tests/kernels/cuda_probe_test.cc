// SPDX-License-Identifier: Apache-2.0
// Runs on a GPU machine (label "cuda"); skips cleanly everywhere else.
#include "gtest/gtest.h"
#if FOCAL_HAVE_CUDA
#include "kernels/cuda/cuda_probe.h"
#endif

namespace focal::kernels {
namespace {

TEST(CudaProbeTest, DeviceComputesCorrectly) {
#if FOCAL_HAVE_CUDA
  int count = 0;
  const char* err = CudaDeviceCount(&count);
  if (count == 0) GTEST_SKIP() << "no CUDA device (" << (err ? err : "0 devices") << ")";
  const char* smoke = CudaSmokeTest(1000);
  EXPECT_EQ(smoke, nullptr) << smoke;
#else
  GTEST_SKIP() << "built without CUDA (FOCAL_CUDA=OFF or no nvcc)";
#endif
}

}  // namespace
}  // namespace focal::kernels
