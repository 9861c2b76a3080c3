// SPDX-License-Identifier: Apache-2.0
// Explicit backend list (no self-registration: static libraries drop it).
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#if FOCAL_HAVE_CUDA
#include "kernels/cuda/cuda_probe.h"
#endif

namespace focal::kernels {

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view device,
                                                       int num_threads) {
  if (device == "cpu") return std::unique_ptr<Backend>(new CpuBackend(num_threads));
  bool want_cuda = device == "cuda" || absl::StartsWith(device, "cuda:");
  if (device == "auto" || want_cuda) {
#if FOCAL_HAVE_CUDA
    int count = 0;
    const char* err = CudaDeviceCount(&count);
    if (count > 0 && want_cuda) {
      return absl::UnimplementedError(
          "the CUDA backend is not implemented yet (tracked in the CUDA backend issue); "
          "use --device cpu");
    }
    if (want_cuda) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--device ", device, ": no usable CUDA device (", err ? err : "0 devices", ")"));
    }
#else
    if (want_cuda) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--device ", device,
          ": this focal-eval was built without CUDA (configure with -DFOCAL_CUDA=ON)"));
    }
#endif
    return std::unique_ptr<Backend>(new CpuBackend(num_threads));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --device '", device, "' (expected auto, cpu, cuda or cuda:N)"));
}

}  // namespace focal::kernels
