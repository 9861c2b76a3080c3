// SPDX-License-Identifier: Apache-2.0
// CudaBackend's memory: buffers from the caching allocator, workspaces,
// weight upload (with the storage-dtype cast) and host/device copies.
#include "kernels/cuda/cuda_backend_impl.h"

namespace focal::kernels::cuda_internal {

absl::StatusOr<Buffer> CudaBackend::Raw(size_t bytes, DType dtype, int64_t rows, int64_t cols) {
  void* p = nullptr;
  const cudaError_t e = alloc_->Allocate(bytes, &p);
  if (e == cudaErrorMemoryAllocation) return OutOfMemory(bytes, dtype, rows, cols);
  if (e != cudaSuccess) {
    return absl::InternalError(
        absl::StrCat("cudaMalloc of ", bytes, " bytes on ", name_, ": ", cudaGetErrorString(e)));
  }
  std::shared_ptr<DeviceAllocator> alloc = alloc_;
  return Buffer(Tensor{p, dtype, rows, cols}, [alloc, bytes](void* q) { alloc->Free(q, bytes); });
}

absl::StatusOr<Buffer> CudaBackend::Allocate(DType dtype, int64_t rows, int64_t cols) {
  FOCAL_CHECK(rows >= 0 && cols >= 0);
  Enter();
  const size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(cols) * DTypeSize(dtype);
  FOCAL_ASSIGN_OR_RETURN(Buffer b, Raw(std::max<size_t>(bytes, 256), dtype, rows, cols));
  // Zero-filled like the CPU backend (ordered before any later use).
  Check("Allocate (memset)",
        cudaMemsetAsync(b.tensor().data, 0, std::max<size_t>(bytes, 256), stream_));
  return b;
}

void* CudaBackend::Scratch(Workspace w, size_t bytes, const char* op) {
  if (workspace_bytes_[w] >= bytes && workspaces_[w].tensor().data != nullptr) {
    return workspaces_[w].tensor().data;
  }
  workspaces_[w] = Buffer();  // back to the cache first, so it can be reused
  workspace_bytes_[w] = 0;
  const size_t grown = std::max(bytes, size_t{1} << 20);
  auto b = Raw(grown, DType::kF32, 1, static_cast<int64_t>(grown / 4));
  if (!b.ok()) {
    Record(Annotate(b.status(), absl::StrCat(op, " workspace")));
    return nullptr;
  }
  workspaces_[w] = std::move(*b);
  workspace_bytes_[w] = grown;
  return workspaces_[w].tensor().data;
}

absl::StatusOr<Buffer> CudaBackend::UploadWeight(const void* host, DType src, int64_t rows,
                                                 int64_t cols) {
  FOCAL_CHECK(rows >= 0 && cols >= 0);
  Enter();
  // BF16 mode keeps matrices in BF16 and vectors (norm and tau weights,
  // rows == 1) in FP32, which is exact for any source dtype.
  const DType dst =
      spec_.precision == CudaPrecision::kBf16 && rows > 1 ? DType::kBF16 : DType::kF32;
  const int64_t n = rows * cols;
  FOCAL_ASSIGN_OR_RETURN(Buffer out,
                         Raw(std::max<size_t>(n * DTypeSize(dst), 256), dst, rows, cols));
  const char* op = "UploadWeight";
  auto fail = [&](cudaError_t e) {
    return absl::InternalError(absl::StrCat(
        "CUDA error detected in ", op, " on ", name_,
        " (a fault in earlier queued work also surfaces here): ", cudaGetErrorString(e)));
  };
  if (src == dst) {
    const cudaError_t e = cudaMemcpyAsync(out.tensor().data, host, n * DTypeSize(dst),
                                          cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return fail(e);
  } else {
    // Through a device staging chunk in the source dtype, converted there.
    const int64_t chunk = std::min<int64_t>(n, int64_t{16} << 20);  // elements
    FOCAL_ASSIGN_OR_RETURN(Buffer stage,
                           Raw(std::max<size_t>(chunk * DTypeSize(src), 256), src, 1, chunk));
    const char* h = static_cast<const char*>(host);
    char* d = static_cast<char*>(out.tensor().data);
    for (int64_t i = 0; i < n; i += chunk) {
      const int64_t m = std::min(chunk, n - i);
      // A pageable copy returns once its source is staged and is ordered
      // after the previous chunk's conversion on the stream.
      cudaError_t e = cudaMemcpyAsync(stage.tensor().data, h + i * DTypeSize(src),
                                      m * DTypeSize(src), cudaMemcpyHostToDevice, stream_);
      if (e == cudaSuccess) {
        e = LaunchConvert(stage.tensor().data, ToStore(src), d + i * DTypeSize(dst), ToStore(dst),
                          m, stream_);
      }
      if (e != cudaSuccess) return fail(e);
    }
  }
  // Weights are loaded once: report faults here rather than at a later Sync.
  const cudaError_t e = cudaStreamSynchronize(stream_);
  if (e != cudaSuccess) return fail(e);
  return out;
}

void CudaBackend::CopyFromHost(const void* src, Tensor dst) {
  Enter();
  if (dst.bytes() == 0) return;
  // Pageable source: the call returns once `src` has been staged, so the
  // caller may reuse it immediately.
  Check("CopyFromHost",
        cudaMemcpyAsync(dst.data, src, dst.bytes(), cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::CopyToHost(Tensor src, void* dst) {
  Enter();
  if (src.bytes() == 0) return;
  if (Check("CopyToHost",
            cudaMemcpyAsync(dst, src.data, src.bytes(), cudaMemcpyDeviceToHost, stream_))) {
    Wait("CopyToHost");
  }
}

void CudaBackend::CopyRows(Tensor src, int64_t src_row, Tensor dst, int64_t dst_row, int64_t n) {
  FOCAL_CHECK(src.cols == dst.cols);
  FOCAL_CHECK(src.dtype == dst.dtype || (src.dtype == DType::kF32 && dst.dtype == DType::kBF16));
  FOCAL_CHECK(src_row >= 0 && dst_row >= 0 && n >= 0);
  FOCAL_CHECK(src_row + n <= src.rows && dst_row + n <= dst.rows);
  if (n == 0 || src.cols == 0) return;
  Enter();
  const void* s = src.Rows(src_row, n).data;
  void* d = dst.Rows(dst_row, n).data;
  const size_t bytes = dst.Rows(0, n).bytes();
  if (src.dtype != dst.dtype) {  // F32 -> BF16, rounded as the CPU's F32ToBf16
    FOCAL_CHECK(!Overlaps(s, src.Rows(0, n).bytes(), d, bytes));
    Check("CopyRows (to BF16)",
          LaunchConvert(s, StoreType::kF32, d, StoreType::kBF16, n * src.cols, stream_));
    return;
  }
  if (s == d) return;
  if (!Overlaps(s, bytes, d, bytes)) {
    Check("CopyRows", cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  // memmove semantics through a scratch copy.
  void* tmp = Scratch(kGemmIn, bytes, "CopyRows");
  if (tmp == nullptr) return;
  if (Check("CopyRows", cudaMemcpyAsync(tmp, s, bytes, cudaMemcpyDeviceToDevice, stream_))) {
    Check("CopyRows", cudaMemcpyAsync(d, tmp, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
}

}  // namespace focal::kernels::cuda_internal
