// SPDX-License-Identifier: Apache-2.0
// The CPU backend: fp32 compute on our own thread pool, with our own GEMMs
// (kernels/cpu/gemm.h: every output element's arithmetic is fixed, so scores
// are batch-invariant bit for bit). It is the reference the CUDA backend is
// checked against.
#ifndef FOCAL_KERNELS_CPU_CPU_BACKEND_H_
#define FOCAL_KERNELS_CPU_CPU_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/backend.h"

namespace focal::kernels {

// kF32: exact F32 everywhere (the default). kBf16 (--precision bf16): the
// linear layers' and the embedding's weights are kept in BF16 (half the
// memory and memory traffic; BF16 checkpoints are used in place), and the
// activations entering those GEMMs are rounded to BF16, so every product is
// of two BF16 values, accumulated in F32. Norms, RoPE, attention (focal
// scale included), the softmaxes and the scores stay F32. The products run
// by vdpbf16ps where the CPU has AVX512_BF16; on AVX2+FMA alone they are
// widened to F32 (exact products, half the speed-up: memory only); without
// AVX2+FMA the mode is refused.
enum class CpuPrecision { kF32, kBf16 };

class CpuBackend : public Backend {
 public:
  // num_threads <= 0: every core this process may run on (UsableCores()).
  explicit CpuBackend(int num_threads, CpuPrecision precision = CpuPrecision::kF32);

  // "cpu" (exact) or "cpu:bf16": recorded in results and resume identities.
  std::string name() const override {
    return precision_ == CpuPrecision::kBf16 ? "cpu:bf16" : "cpu";
  }
  CpuPrecision precision() const { return precision_; }
  // CPU backends of one precision keep their weights alike in host memory:
  // any of them can read another's.
  bool CanUseBuffersOf(const Backend& other) const override;
  absl::StatusOr<Buffer> Allocate(DType dtype, int64_t rows, int64_t cols) override;
  absl::StatusOr<Buffer> UploadWeight(const void* host, DType src, int64_t rows,
                                      int64_t cols) override;
  int64_t UploadBytes(DType src, int64_t rows, int64_t cols) const override;
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
  absl::Status Sync() override { return absl::OkStatus(); }
  int64_t ScratchBytes(const ForwardShape& shape) const override;

  // Query rows per attention block (bounds the score scratch to kAttnRows x N).
  static constexpr int64_t kAttnRows = 128;
  // A block of at most this many (query row, head) pairs stacks the query heads of one KV head
  // (a decode step); at most kAttnRows, so the score scratch bound holds.
  static constexpr int64_t kMaxStackedRows = 64;

 private:
  // Runs fn over [0, n) in contiguous chunks of at least `grain` indices.
  void ParallelRange(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  ThreadPool pool_;
  CpuPrecision precision_;
  std::vector<uint16_t> rounded_;  // MatMul's input rounded to BF16 (kBf16)
};

// Why this CPU cannot run `precision`, or empty when it can.
std::string CpuPrecisionUnsupported(CpuPrecision precision);

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_CPU_CPU_BACKEND_H_
