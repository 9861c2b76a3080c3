// SPDX-License-Identifier: Apache-2.0
// Explicit backend list (no self-registration: static libraries drop it).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_plan.h"
#if FOCAL_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_probe.h"
#endif

namespace focal::kernels {

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view device, int num_threads,
                                                       [[maybe_unused]] std::string* note) {
  if (device == "cpu") return std::unique_ptr<Backend>(new CpuBackend(num_threads));
  const char* env_precision = std::getenv("FOCAL_CUDA_PRECISION");
  if (device == "auto") {
#if FOCAL_HAVE_CUDA
    int count = 0;
    CudaDeviceCount(&count);
    if (count > 0) {
      FOCAL_ASSIGN_OR_RETURN(const CudaDeviceSpec spec, ParseCudaDevice("cuda", env_precision));
      absl::StatusOr<std::unique_ptr<Backend>> cuda = CreateCudaBackend(spec);
      // A present but unusable device (too old, no cuBLASLt) leaves the CPU.
      if (cuda.ok()) return cuda;
      if (!absl::IsFailedPrecondition(cuda.status())) {
        return Annotate(cuda.status(), "--device auto");
      }
      if (note != nullptr) {
        *note = absl::StrCat("--device auto: using the CPU: ", cuda.status().message());
      }
    }
#endif
    return std::unique_ptr<Backend>(new CpuBackend(num_threads));
  }
  if (device == "cuda" || absl::StartsWith(device, "cuda:")) {
    FOCAL_ASSIGN_OR_RETURN(const CudaDeviceSpec spec, ParseCudaDevice(device, env_precision));
#if FOCAL_HAVE_CUDA
    int count = 0;
    const char* err = CudaDeviceCount(&count);
    if (count == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--device ", device, ": no usable CUDA device (", err ? err : "0 devices", ")"));
    }
    absl::StatusOr<std::unique_ptr<Backend>> cuda = CreateCudaBackend(spec);
    if (!cuda.ok()) return Annotate(cuda.status(), absl::StrCat("--device ", device));
    return cuda;
#else
    (void)spec;
    return absl::FailedPreconditionError(
        absl::StrCat("--device ", device,
                     ": this focal-eval was built without CUDA (configure with -DFOCAL_CUDA=ON)"));
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --device '", device, "' (expected auto, cpu, cuda, cuda:N or cuda:N:fp32|bf16)"));
}

absl::StatusOr<std::vector<std::unique_ptr<Backend>>> CreateBackends(absl::string_view devices,
                                                                     int num_threads,
                                                                     std::string* note) {
  const std::vector<std::string> list = absl::StrSplit(devices, ',');
  std::vector<std::unique_ptr<Backend>> out;
  if (list.size() == 1) {
    FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<Backend> b, CreateBackend(list[0], num_threads, note));
    out.push_back(std::move(b));
    return out;
  }
  // CPU replicas share the cores: each gets its part of --threads (all
  // cores when 0), so together they use what one would.
  int cpus = 0;
  for (const std::string& d : list) cpus += d == "cpu";
  const int cores = num_threads > 0 ? num_threads : UsableCores();
  std::set<std::string> seen;
  for (const std::string& d : list) {
    if (d.empty() || d == "auto") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device '", devices, "': a list names each device (cpu, cuda:N), not '", d, "'"));
    }
    if (d != "cpu" && !seen.insert(d == "cuda" ? "cuda:0" : d).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--device '", devices, "': '", d, "' is listed twice"));
    }
  }
  for (const std::string& d : list) {
    const int threads = d == "cpu" ? std::max(1, cores / cpus) : num_threads;
    absl::StatusOr<std::unique_ptr<Backend>> b = CreateBackend(d, threads, note);
    if (!b.ok()) {
      return Annotate(b.status(), absl::StrCat("device ", out.size(), " of '", devices, "'"));
    }
    out.push_back(*std::move(b));
  }
  return out;
}

}  // namespace focal::kernels
