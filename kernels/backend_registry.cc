// SPDX-License-Identifier: Apache-2.0
// Explicit backend list (no self-registration: static libraries drop it).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
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
namespace {

// The precision a device string names after its last ':' ("bf16", "fp32"),
// or empty.
std::string NamedPrecision(absl::string_view device) {
  const size_t colon = device.rfind(':');
  if (colon == absl::string_view::npos) return "";
  const std::string p = absl::AsciiStrToLower(device.substr(colon + 1));
  return p == "bf16" || p == "fp32" ? p : "";
}

absl::StatusOr<std::unique_ptr<Backend>> NewCpuBackend(absl::string_view device, int num_threads,
                                                       absl::string_view precision) {
  CpuPrecision p = CpuPrecision::kF32;
  if (precision == "bf16") {
    p = CpuPrecision::kBf16;
  } else if (!precision.empty() && precision != "fp32") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --device '", device, "' (expected cpu, cpu:fp32 or cpu:bf16)"));
  }
  if (std::string why = CpuPrecisionUnsupported(p); !why.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("--device ", device, ": ", why));
  }
  return std::unique_ptr<Backend>(new CpuBackend(num_threads, p));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view device, int num_threads,
                                                       [[maybe_unused]] std::string* note,
                                                       absl::string_view precision) {
  if (!precision.empty() && precision != "bf16" && precision != "fp32") {
    return absl::InvalidArgumentError(
        absl::StrCat("--precision '", precision, "': expected fp32 or bf16"));
  }
  const std::string named = NamedPrecision(device);
  if (!precision.empty() && !named.empty() && named != precision) {
    return absl::InvalidArgumentError(absl::StrCat("--device ", device, " names precision ", named,
                                                   " but --precision is ", precision));
  }
  if (device == "cpu" || absl::StartsWith(device, "cpu:")) {
    if (device != "cpu" && named.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown --device '", device, "' (expected cpu, cpu:fp32 or cpu:bf16)"));
    }
    return NewCpuBackend(device, num_threads, named.empty() ? precision : named);
  }
  // --precision decides over FOCAL_CUDA_PRECISION (a precision in the device
  // string decides over both).
  const std::string flag_precision(precision);
  const char* env_precision =
      precision.empty() ? std::getenv("FOCAL_CUDA_PRECISION") : flag_precision.c_str();
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
    return NewCpuBackend("auto", num_threads, precision);
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
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --device '", device,
                   "' (expected auto, cpu, cpu:fp32|bf16, cuda, cuda:N or cuda:N:fp32|bf16)"));
}

absl::StatusOr<std::vector<std::unique_ptr<Backend>>> CreateBackends(absl::string_view devices,
                                                                     int num_threads,
                                                                     std::string* note,
                                                                     absl::string_view precision) {
  const std::vector<std::string> list = absl::StrSplit(devices, ',');
  std::vector<std::unique_ptr<Backend>> out;
  if (list.size() == 1) {
    FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<Backend> b,
                           CreateBackend(list[0], num_threads, note, precision));
    out.push_back(std::move(b));
    return out;
  }
  // CPU replicas share the cores: each gets its part of --threads (all
  // cores when 0), so together they use what one would.
  int cpus = 0;
  for (const std::string& d : list) cpus += absl::StartsWith(d, "cpu");
  const int cores = num_threads > 0 ? num_threads : UsableCores();
  std::set<std::string> seen;
  for (const std::string& d : list) {
    if (d.empty() || d == "auto") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device '", devices, "': a list names each device (cpu, cuda:N), not '", d, "'"));
    }
    if (!absl::StartsWith(d, "cpu") && !seen.insert(d == "cuda" ? "cuda:0" : d).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--device '", devices, "': '", d, "' is listed twice"));
    }
  }
  for (const std::string& d : list) {
    const int threads = absl::StartsWith(d, "cpu") ? std::max(1, cores / cpus) : num_threads;
    absl::StatusOr<std::unique_ptr<Backend>> b = CreateBackend(d, threads, note, precision);
    if (!b.ok()) {
      return Annotate(b.status(), absl::StrCat("device ", out.size(), " of '", devices, "'"));
    }
    out.push_back(*std::move(b));
  }
  return out;
}

}  // namespace focal::kernels
