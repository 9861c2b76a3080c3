// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's host side: argument checks (FOCAL_CHECK, as the CPU
// backend), workspaces, cuBLASLt GEMMs and kernel launches on one stream (the
// caching allocator and the staging ring of small index arrays are in
// device_memory.h). Device errors are sticky: the first one since the last
// Sync() is kept (naming the op) and returned by Sync(); ops that must hand
// results to the host synchronise themselves.
#include "kernels/cuda/cuda_backend.h"

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
#include "kernels/cuda/cuda_gemm.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/launchers.h"

namespace focal::kernels {
namespace {

StoreType ToStore(DType t) {
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

bool Overlaps(const void* a, size_t an, const void* b, size_t bn) {
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

void CudaBackend::Embed(Tensor table, absl::Span<const int32_t> tokens, Tensor out) {
  FOCAL_CHECK(out.rows == static_cast<int64_t>(tokens.size()) && out.cols == table.cols);
  FOCAL_CHECK(out.dtype == DType::kF32);
  for (int32_t t : tokens) FOCAL_CHECK(t >= 0 && t < table.rows);
  if (tokens.empty()) return;
  Enter();
  const std::vector<const void*> d = Stage({Part(tokens)}, "Embed");
  if (d.empty()) return;
  Check("Embed",
        LaunchEmbed(table.data, ToStore(table.dtype), table.cols, static_cast<const int32_t*>(d[0]),
                    out.rows, out.as<float>(), stream_));
}

void CudaBackend::RmsNorm(Tensor x, Tensor w, float eps, Tensor out) {
  FOCAL_CHECK(x.rows == out.rows && x.cols == out.cols && w.numel() == x.cols);
  FOCAL_CHECK(x.dtype == DType::kF32 && out.dtype == DType::kF32 && w.dtype != DType::kF16);
  Enter();
  Check("RmsNorm", LaunchRmsNorm(x.as<float>(), w.data, ToStore(w.dtype), eps, x.rows, x.cols,
                                 out.as<float>(), stream_));
}

void CudaBackend::MatMul(Tensor x, Tensor w, Tensor out) {
  FOCAL_CHECK(x.cols == w.cols && out.rows == x.rows && out.cols == w.rows);
  FOCAL_CHECK(out.dtype == DType::kF32);
  FOCAL_CHECK(w.dtype == DType::kBF16 || (w.dtype == DType::kF32 && x.dtype == DType::kF32));
  FOCAL_CHECK(x.dtype == DType::kF32 || x.dtype == DType::kBF16);
  const int64_t T = x.rows, K = x.cols, N = w.rows;
  if (T == 0 || N == 0) return;
  cudaSetDevice(spec_.ordinal);  // not Enter(): keeps the cast cache
  if (K == 0) {
    Check("MatMul", cudaMemsetAsync(out.data, 0, out.bytes(), stream_));
    return;
  }
  constexpr int64_t R = kCudaGemmRows;
  const RowTilePlan plan = PlanRowTiles(T);
  const int64_t tiles = plan.full + (plan.tail > 0 ? 1 : 0);
  float* o = out.as<float>();
  const GemmOperands type = w.dtype == DType::kBF16 ? GemmOperands::kBf16 : GemmOperands::kF32;
  const size_t es = type == GemmOperands::kBf16 ? 2 : 4;
  // The operand rows: x itself when it already is the operand type and no
  // tail needs padding, else a (tiles * R, K) copy, tail rows zero.
  const void* xs = x.data;
  // After the products: forget the cached cast if `out` overwrote the input
  // it was made from (whichever MatMul made it, not just this call's x).
  struct Invalidate {
    CastCache& cast;
    const char* o_begin;
    const char* o_end;
    ~Invalidate() {
      if (cast.x == nullptr) return;
      const char* c_begin = static_cast<const char*>(cast.x);
      const char* c_end = c_begin + cast.rows * cast.cols * 4;  // the F32 input
      if (o_begin < c_end && c_begin < o_end) cast = CastCache{};
    }
  } invalidate{cast_, static_cast<const char*>(out.data),
               static_cast<const char*>(out.data) + out.bytes()};
  if (x.dtype == DType::kF32 && type == GemmOperands::kBf16) {
    const size_t need = static_cast<size_t>(tiles * R * K) * 2;
    if (cast_.x == x.data && cast_.rows == T && cast_.cols == K &&
        workspace_bytes_[kGemmIn] >= need) {
      xs = workspaces_[kGemmIn].tensor().data;
    } else {
      cast_ = CastCache{};
      void* ws = Scratch(kGemmIn, need, "MatMul");
      if (ws == nullptr) return;
      if (!Check("MatMul (cast)",
                 LaunchCastRowsToBf16(x.as<float>(), T, K, tiles * R, ws, stream_))) {
        return;
      }
      cast_ = CastCache{x.data, T, K};
      xs = ws;
    }
  } else if (plan.tail > 0) {
    cast_ = CastCache{};  // kGemmIn is reused below
    // Only the tail tile needs a padded copy; full tiles are read in place.
    void* ws = Scratch(kGemmIn, static_cast<size_t>(R * K) * es, "MatMul");
    if (ws == nullptr) return;
    const char* tail_src = static_cast<const char*>(x.data) + plan.full * R * K * es;
    if (!Check("MatMul (pad)", cudaMemcpyAsync(ws, tail_src, plan.tail * K * es,
                                               cudaMemcpyDeviceToDevice, stream_)) ||
        !Check("MatMul (pad)", cudaMemsetAsync(static_cast<char*>(ws) + plan.tail * K * es, 0,
                                               (R - plan.tail) * K * es, stream_))) {
      return;
    }
    if (plan.full > 0) {
      Record(gemm_->TiledMatMul(type, x.data, plan.full, w.data, N, K, o));
    }
    float* ows = static_cast<float*>(Scratch(kGemmOut, static_cast<size_t>(R * N) * 4, "MatMul"));
    if (ows == nullptr) return;
    Record(gemm_->TiledMatMul(type, ws, 1, w.data, N, K, ows));
    Check("MatMul (tail)", cudaMemcpyAsync(o + plan.full * R * N, ows, plan.tail * N * 4,
                                           cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  if (plan.full > 0) Record(gemm_->TiledMatMul(type, xs, plan.full, w.data, N, K, o));
  if (plan.tail > 0) {
    float* ows = static_cast<float*>(Scratch(kGemmOut, static_cast<size_t>(R * N) * 4, "MatMul"));
    if (ows == nullptr) return;
    const void* tail_x = static_cast<const char*>(xs) + plan.full * R * K * es;
    Record(gemm_->TiledMatMul(type, tail_x, 1, w.data, N, K, ows));
    Check("MatMul (tail)", cudaMemcpyAsync(o + plan.full * R * N, ows, plan.tail * N * 4,
                                           cudaMemcpyDeviceToDevice, stream_));
  }
}

void CudaBackend::Rope(Tensor x, int num_heads, int head_dim, absl::Span<const int64_t> positions,
                       absl::Span<const float> inv_freq) {
  FOCAL_CHECK(x.cols == int64_t{num_heads} * head_dim && head_dim % 2 == 0);
  FOCAL_CHECK(static_cast<int64_t>(positions.size()) == x.rows);
  FOCAL_CHECK(static_cast<int>(inv_freq.size()) == head_dim / 2);
  FOCAL_CHECK(x.dtype == DType::kF32);
  if (x.rows == 0 || head_dim == 0) return;
  Enter();
  const bool same = last_rope_generation_ == ring_.generation() &&
                    last_positions_.size() == positions.size() &&
                    last_inv_freq_.size() == inv_freq.size() &&
                    std::equal(positions.begin(), positions.end(), last_positions_.begin()) &&
                    std::equal(inv_freq.begin(), inv_freq.end(), last_inv_freq_.begin());
  if (!same) {
    last_rope_generation_ = ~uint64_t{0};
    const std::vector<const void*> d = Stage({Part(positions), Part(inv_freq)}, "Rope");
    if (d.empty()) return;
    last_positions_.assign(positions.begin(), positions.end());
    last_inv_freq_.assign(inv_freq.begin(), inv_freq.end());
    last_positions_dev_ = d[0];
    last_inv_freq_dev_ = d[1];
    last_rope_generation_ = ring_.generation();
  }
  Check("Rope", LaunchRope(x.as<float>(), x.rows, num_heads, head_dim,
                           static_cast<const int64_t*>(last_positions_dev_),
                           static_cast<const float*>(last_inv_freq_dev_), stream_));
}

void CudaBackend::Attention(const AttentionArgs& a) {
  const int H = a.num_heads, Hkv = a.num_kv_heads, D = a.head_dim;
  FOCAL_CHECK(H > 0 && Hkv > 0 && D > 0 && H % Hkv == 0);
  FOCAL_CHECK(a.q.cols == int64_t{H} * D && a.out.cols == a.q.cols && a.out.rows == a.q.rows);
  FOCAL_CHECK(static_cast<int64_t>(a.scale.size()) == a.q.rows);
  FOCAL_CHECK(a.q.dtype == a.out.dtype && (a.q.dtype == DType::kF32 || a.q.dtype == DType::kBF16));
  const int64_t kvld = int64_t{Hkv} * D;
  std::vector<AttnSeqShape> shapes;
  std::vector<AttnSeqDesc> descs;
  for (const AttentionSeq& s : a.seqs) {
    FOCAL_CHECK(s.k_cache.cols == kvld && s.v_cache.cols == kvld);
    FOCAL_CHECK(s.k_cache.dtype == a.q.dtype && s.v_cache.dtype == a.q.dtype);
    FOCAL_CHECK(s.rows >= 0 && s.past >= 0 && s.row_begin >= 0 && s.row_begin + s.rows <= a.q.rows);
    FOCAL_CHECK(s.past + s.rows <= s.k_cache.rows && s.past + s.rows <= s.v_cache.rows);
    FOCAL_CHECK(s.past + s.rows <= std::numeric_limits<int32_t>::max());
    shapes.push_back({s.row_begin, s.rows, s.past});
    AttnSeqDesc d;
    d.k = s.k_cache.data;
    d.v = s.v_cache.data;
    d.row_begin = s.row_begin;
    d.rows = static_cast<int32_t>(s.rows);
    d.past = static_cast<int32_t>(s.past);
    descs.push_back(d);
  }
  const AttnKernel kernel = ChooseAttnKernel(spec_.precision, D);
  if (kernel == AttnKernel::kGeneric && AttnGenericDimsPerLane(D) == 0) {
    Record(absl::UnimplementedError(absl::StrCat("CUDA attention supports head dims up to ",
                                                 kAttnGenericMaxHeadDim, ", not ", D)));
    return;
  }
  if (kernel != AttnKernel::kGeneric) {
    // 16-byte vector loads and cp.async: base pointers aligned (rows are,
    // since D * element size is a multiple of 16).
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    FOCAL_CHECK(aligned(a.q.data) && aligned(a.out.data));
    for (const AttnSeqDesc& d : descs) FOCAL_CHECK(aligned(d.k) && aligned(d.v));
  }
  const std::vector<AttnWorkItem> items = PlanAttentionWork(shapes, AttnBlockRows(kernel));
  if (items.empty()) return;
  const absl::StatusOr<int64_t> grid = AttnGridSize(static_cast<int64_t>(items.size()), H);
  if (!grid.ok()) {
    Record(grid.status());
    return;
  }
  Enter();
  AttnParams p;
  p.q = a.q.data;
  p.out = a.out.data;
  const std::vector<const void*> d =
      Stage({Part(a.scale), Part(absl::MakeConstSpan(descs)), Part(absl::MakeConstSpan(items))},
            "Attention");
  if (d.empty()) return;
  p.scale = static_cast<const float*>(d[0]);
  p.seqs = static_cast<const AttnSeqDesc*>(d[1]);
  p.items = static_cast<const AttnWorkItem*>(d[2]);
  p.num_items = static_cast<int64_t>(items.size());
  p.num_heads = H;
  p.num_kv_heads = Hkv;
  p.head_dim = D;
  Check("Attention", LaunchAttention(p, ToStore(a.q.dtype), kernel, stream_));
}

void CudaBackend::SwiGlu(Tensor gate, Tensor up, Tensor out) {
  FOCAL_CHECK(gate.numel() == up.numel() && gate.numel() == out.numel());
  FOCAL_CHECK(gate.dtype == DType::kF32 && up.dtype == DType::kF32 && out.dtype == DType::kF32);
  Enter();
  Check("SwiGlu",
        LaunchSwiGlu(gate.as<float>(), up.as<float>(), out.as<float>(), out.numel(), stream_));
}

void CudaBackend::Add(Tensor x, Tensor inout) {
  FOCAL_CHECK(x.numel() == inout.numel());
  FOCAL_CHECK(x.dtype == DType::kF32 && inout.dtype == DType::kF32);
  Enter();
  Check("Add", LaunchAdd(x.as<float>(), inout.as<float>(), x.numel(), stream_));
}

void CudaBackend::RowDot(Tensor x, Tensor w, float bias, absl::Span<float> out) {
  FOCAL_CHECK(w.numel() == x.cols && static_cast<int64_t>(out.size()) == x.rows);
  FOCAL_CHECK(x.dtype == DType::kF32 && w.dtype != DType::kF16);
  if (x.rows == 0) return;
  Enter();
  std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
  float* d = static_cast<float*>(Scratch(kHostOut, out.size() * sizeof(float), "RowDot"));
  if (d == nullptr) return;
  if (Check("RowDot", LaunchRowDot(x.as<float>(), x.rows, x.cols, w.data, ToStore(w.dtype), bias, d,
                                   stream_)) &&
      Check("RowDot", cudaMemcpyAsync(out.data(), d, out.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream_))) {
    Wait("RowDot");
  }
}

void CudaBackend::GatherRows(Tensor x, absl::Span<const int64_t> rows, Tensor out) {
  FOCAL_CHECK(out.rows == static_cast<int64_t>(rows.size()) && out.cols == x.cols);
  FOCAL_CHECK(x.dtype == DType::kF32 && out.dtype == DType::kF32);
  for (int64_t r : rows) FOCAL_CHECK(r >= 0 && r < x.rows);
  if (rows.empty()) return;
  Enter();
  const std::vector<const void*> d = Stage({Part(rows)}, "GatherRows");
  if (d.empty()) return;
  Check("GatherRows", LaunchGatherRows(x.as<float>(), x.cols, static_cast<const int64_t*>(d[0]),
                                       out.rows, out.as<float>(), stream_));
}

void CudaBackend::LogSoftmaxGather(Tensor logits, absl::Span<const int32_t> targets,
                                   absl::Span<double> logprob, absl::Span<int32_t> argmax) {
  const int64_t R = logits.rows, V = logits.cols;
  FOCAL_CHECK(static_cast<int64_t>(targets.size()) == R);
  FOCAL_CHECK(static_cast<int64_t>(logprob.size()) == R &&
              static_cast<int64_t>(argmax.size()) == R);
  FOCAL_CHECK(logits.dtype == DType::kF32 && V > 0);
  for (int32_t t : targets) FOCAL_CHECK(t >= 0 && t < V);
  if (R == 0) return;
  Enter();
  std::fill(logprob.begin(), logprob.end(), std::numeric_limits<double>::quiet_NaN());
  std::fill(argmax.begin(), argmax.end(), -1);
  const std::vector<const void*> staged = Stage({Part(targets)}, "LogSoftmaxGather");
  // One scratch area: R doubles, then R int32.
  char* d = static_cast<char*>(
      Scratch(kHostOut, R * (sizeof(double) + sizeof(int32_t)), "LogSoftmaxGather"));
  if (staged.empty() || d == nullptr) return;
  const int32_t* d_targets = static_cast<const int32_t*>(staged[0]);
  double* d_logprob = reinterpret_cast<double*>(d);
  int32_t* d_argmax = reinterpret_cast<int32_t*>(d + R * sizeof(double));
  if (Check("LogSoftmaxGather", LaunchLogSoftmaxGather(logits.as<float>(), R, V, d_targets,
                                                       d_logprob, d_argmax, stream_)) &&
      Check("LogSoftmaxGather", cudaMemcpyAsync(logprob.data(), d_logprob, R * sizeof(double),
                                                cudaMemcpyDeviceToHost, stream_)) &&
      Check("LogSoftmaxGather", cudaMemcpyAsync(argmax.data(), d_argmax, R * sizeof(int32_t),
                                                cudaMemcpyDeviceToHost, stream_))) {
    Wait("LogSoftmaxGather");
  }
}

absl::Status CudaBackend::Sync() {
  Enter();
  Check("Sync", cudaStreamSynchronize(stream_));
  absl::Status s = std::move(first_error_);
  first_error_ = absl::OkStatus();
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const CudaDeviceSpec& spec) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", spec.ordinal, ": no usable CUDA device (",
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 devices", ")"));
  }
  if (spec.ordinal < 0 || spec.ordinal >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", spec.ordinal, ": no such device (", count,
                     " CUDA device(s): cuda:0..cuda:", count - 1, ")"));
  }
  cudaDeviceProp prop;
  e = cudaSetDevice(spec.ordinal);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, spec.ordinal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", spec.ordinal, ": ", cudaGetErrorString(e)));
  }
  if (prop.major < 8) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cuda:", spec.ordinal, " (", prop.name, ") has compute capability ", prop.major, ".",
        prop.minor, "; the CUDA backend needs 8.0 or newer (BF16 tensor cores)"));
  }
  cudaStream_t stream = nullptr;
  e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", spec.ordinal, ": cannot create a stream: ", cudaGetErrorString(e)));
  }
  absl::StatusOr<std::unique_ptr<CudaGemm>> gemm = CudaGemm::Create(stream);
  if (!gemm.ok()) {
    cudaStreamDestroy(stream);
    return gemm.status();
  }
  return std::unique_ptr<Backend>(new CudaBackend(spec, prop.name, stream, std::move(*gemm)));
}

}  // namespace focal::kernels
