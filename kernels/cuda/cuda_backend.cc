// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's host side: argument checks (FOCAL_CHECK, as the CPU
// backend), workspaces, cuBLASLt GEMMs and kernel launches on one stream (the
// caching allocator and the staging ring of small index arrays are in
// device_memory.h). Device errors are sticky: the first one since the last
// Sync() is kept (naming the op) and returned by Sync(); ops that must hand
// results to the host synchronise themselves.
#include "kernels/cuda/cuda_backend.h"

#include "kernels/cuda/cuda_backend_impl.h"

namespace focal::kernels::cuda_internal {

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

}  // namespace focal::kernels::cuda_internal

namespace focal::kernels {

using cuda_internal::CudaBackend;

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
