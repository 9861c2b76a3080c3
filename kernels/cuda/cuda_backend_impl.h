// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's class, shared by its two source files: cuda_backend.cc
// (the ops and CreateCudaBackend) and cuda_backend_memory.cc (buffers,
// workspaces, weight upload and copies). Not for use outside kernels/cuda.
#ifndef FOCAL_KERNELS_CUDA_CUDA_BACKEND_IMPL_H_
#define FOCAL_KERNELS_CUDA_CUDA_BACKEND_IMPL_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "kernels/cuda/attention_params.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_gemm.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/launchers.h"

namespace focal::kernels::cuda_internal {

inline StoreType ToStore(DType t) {
  switch (t) {
    case DType::kF32:
      return StoreType::kF32;
    case DType::kF16:
      return StoreType::kF16;
    case DType::kBF16:
      return StoreType::kBF16;
  }
  return StoreType::kF32;
}

inline bool Overlaps(const void* a, size_t an, const void* b, size_t bn) {
  const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bn && pb < pa + an;
}

class CudaBackend : public Backend {
 public:
  CudaBackend(const CudaDeviceSpec& spec, std::string gpu_name, cudaStream_t stream,
              std::unique_ptr<CudaGemm> gemm)
      : spec_(spec),
        name_(absl::StrCat("cuda:", spec.ordinal, " (", gpu_name, ", ",
                           CudaPrecisionName(spec.precision), ")")),
        device_label_(absl::StrCat("cuda:", spec.ordinal, " (", gpu_name, ")")),
        stream_(stream),
        gemm_(std::move(gemm)),
        alloc_(std::make_shared<DeviceAllocator>(spec.ordinal)),
        ring_(stream) {}

  ~CudaBackend() override {
    cudaSetDevice(spec_.ordinal);
    cudaStreamSynchronize(stream_);
    // Workspaces go back to the allocator, which outlives us while Buffers
    // (weights, caches) still hold it.
    workspaces_.clear();
    ring_.Release();
    gemm_.reset();
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return name_; }
  DType AttentionDType() const override {
    return spec_.precision == CudaPrecision::kBf16 ? DType::kBF16 : DType::kF32;
  }

  absl::StatusOr<Buffer> Allocate(DType dtype, int64_t rows, int64_t cols) override;
  absl::StatusOr<Buffer> UploadWeight(const void* host, DType src, int64_t rows,
                                      int64_t cols) override;
  void CopyFromHost(const void* src, Tensor dst) override;
  void CopyToHost(Tensor src, void* dst) override;
  void CopyRows(Tensor src, int64_t src_row, Tensor dst, int64_t dst_row, int64_t n) override;
  void Embed(Tensor table, absl::Span<const int32_t> tokens, Tensor out) override;
  void RmsNorm(Tensor x, Tensor w, float eps, Tensor out) override;
  void MatMul(Tensor x, Tensor w, Tensor out) override;
  void Rope(Tensor x, int num_heads, int head_dim, absl::Span<const int64_t> positions,
            absl::Span<const float> inv_freq) override;
  void Attention(const AttentionArgs& args) override;
  void SwiGlu(Tensor gate, Tensor up, Tensor out) override;
  void Add(Tensor x, Tensor inout) override;
  void RowDot(Tensor x, Tensor w, float bias, absl::Span<float> out) override;
  void GatherRows(Tensor x, absl::Span<const int64_t> rows, Tensor out) override;
  void LogSoftmaxGather(Tensor logits, absl::Span<const int32_t> targets,
                        absl::Span<double> logprob, absl::Span<int32_t> argmax) override;
  absl::Status Sync() override;
  int64_t AvailableMemoryBytes() override {
    cudaSetDevice(spec_.ordinal);
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    // Cached blocks go back to the driver when an allocation needs them.
    return static_cast<int64_t>(free_b + alloc_->cached_bytes());
  }
  int64_t ScratchBytes(const ForwardShape& shape) const override { return CudaScratchBytes(shape); }
  // The allocator's peak plus what bypasses it: the GEMM workspace and the
  // device half of the staging ring.
  int64_t PeakMemoryBytes() override {
    return static_cast<int64_t>(alloc_->peak_bytes() + kGemmWorkspaceBytes + ring_.device_bytes());
  }
  void ResetPeakMemory() override { alloc_->ResetPeak(); }

 private:
  enum Workspace { kGemmIn, kGemmOut, kHostOut, kNumWorkspaces };

  // Every op but MatMul starts here: it may write device memory, so the
  // cached BF16 cast of a MatMul input is forgotten.
  void Enter() {
    cudaSetDevice(spec_.ordinal);
    cast_ = CastCache{};
  }
  void Record(absl::Status s) {
    if (first_error_.ok() && !s.ok()) first_error_ = std::move(s);
  }
  // Records a failed CUDA call of `op`; true when it succeeded. Clears the
  // runtime's last error, so that a later launch check does not report a
  // non-sticky failure (e.g. an allocation) twice or against the wrong op.
  bool Check(const char* op, cudaError_t e) {
    if (e == cudaSuccess) return true;
    cudaGetLastError();
    Record(absl::InternalError(absl::StrCat(
        "CUDA error detected in ", op, " on ", name_,
        " (a fault in earlier queued work also surfaces here): ", cudaGetErrorString(e))));
    return false;
  }
  absl::Status OutOfMemory(size_t bytes, DType dtype, int64_t rows, int64_t cols) {
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    return absl::ResourceExhaustedError(
        CudaOutOfMemoryMessage(device_label_, bytes, dtype, rows, cols, free_b, total_b));
  }
  // Raw (not zeroed) device memory through the caching allocator;
  // ResourceExhausted (with the OOM message) or Internal on failure.
  absl::StatusOr<Buffer> Raw(size_t bytes, DType dtype, int64_t rows, int64_t cols);
  // A scratch area of at least `bytes` (grown, never shrunk); nullptr after
  // recording the error.
  void* Scratch(Workspace w, size_t bytes, const char* op);
  // Host arrays through the staging ring (see StagingRing::Stage): the
  // device address of each part, or empty after recording an error.
  std::vector<const void*> Stage(std::initializer_list<StagingRing::Part> parts, const char* op) {
    std::vector<const void*> staged;
    Check(op, ring_.Stage(parts, &staged));
    return staged;
  }
  template <typename T>
  static StagingRing::Part Part(absl::Span<const T> s) {
    return StagingRing::PartOf(s);
  }
  // Waits for the stream (ops returning host results); false on error.
  bool Wait(const char* op) { return Check(op, cudaStreamSynchronize(stream_)); }

  const CudaDeviceSpec spec_;
  const std::string name_;
  const std::string device_label_;
  cudaStream_t stream_;
  std::unique_ptr<CudaGemm> gemm_;
  std::shared_ptr<DeviceAllocator> alloc_;
  absl::Status first_error_;
  std::vector<Buffer> workspaces_ = std::vector<Buffer>(kNumWorkspaces);
  std::vector<size_t> workspace_bytes_ = std::vector<size_t>(kNumWorkspaces, 0);
  StagingRing ring_;  // small host arrays (tokens, positions, scales, work lists)
  // Rope is called twice per layer with the same positions: reuse them.
  std::vector<int64_t> last_positions_;
  std::vector<float> last_inv_freq_;
  const void* last_positions_dev_ = nullptr;
  const void* last_inv_freq_dev_ = nullptr;
  uint64_t last_rope_generation_ = ~uint64_t{0};
  // The BF16 copy of a MatMul input in the kGemmIn workspace: consecutive
  // MatMuls of one input (q/k/v, gate/up) cast it once. Valid until any other
  // op runs (Enter) or a MatMul writes over the input.
  struct CastCache {
    const void* x = nullptr;
    int64_t rows = 0, cols = 0;
  } cast_;
};

}  // namespace focal::kernels::cuda_internal

#endif  // FOCAL_KERNELS_CUDA_CUDA_BACKEND_IMPL_H_
