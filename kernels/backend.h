// SPDX-License-Identifier: Apache-2.0
// The seam between the shared forward pass (model/transformer.cc) and a
// device. One virtual method per coarse op; the CPU backend is the reference
// every other backend is tested against.
//
// Shape letters: T tokens of the packed batch, C model dim, H query heads,
// Hkv kv heads, D head dim, F ffn dim, V vocab, R scored rows. Tensors are
// row-major. Small index arrays (tokens, positions, scales) are host spans;
// a device backend copies them. Shape mismatches are bugs (FOCAL_CHECK); device
// faults are sticky and reported by Sync().
#ifndef FOCAL_KERNELS_BACKEND_H_
#define FOCAL_KERNELS_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kernels/tensor.h"

namespace focal::kernels {

// One sequence of a packed attention call. Its queries are rows
// [row_begin, row_begin + rows) of q/out; the cache rows [0, past + rows) hold
// its keys and values (the new ones already stored), so query row i sits at
// absolute position past + i and attends to cache rows [0, past + i].
struct AttentionSeq {
  int64_t row_begin = 0;
  int64_t rows = 0;
  int64_t past = 0;
  Tensor k_cache;  // (capacity, Hkv*D)
  Tensor v_cache;  // (capacity, Hkv*D)
};

struct AttentionArgs {
  Tensor q;  // (T, H*D), RoPE applied
  absl::Span<const AttentionSeq> seqs;
  // Softmax scale per query row (T): 1/sqrt(D) for base, 1/(t*sqrt(D)) for
  // constant focal, 1/tau for learned focal. Focal attention is a parameter,
  // not a second kernel.
  absl::Span<const float> scale;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  Tensor out;  // (T, H*D)
};

// One query row whose attention distribution is summarised per head (the
// attention diagnostics): `row` is relative to seqs[seq].row_begin, and
// `key_ranges` are cache rows [begin, end) whose probability mass is summed
// (e.g. a needle's tokens).
struct AttentionProbe {
  int seq = 0;
  int64_t row = 0;
  absl::Span<const std::pair<int64_t, int64_t>> key_ranges;
};

// The largest forward call a run will make, for memory estimates.
struct ForwardShape {
  int64_t tokens = 0;       // rows of one packed forward call
  int64_t keys = 0;         // cache rows one query row may attend to
  int64_t max_inputs = 0;   // widest linear-layer input (K)
  int64_t max_outputs = 0;  // widest linear-layer output (N; the LM head's vocabulary)
  int64_t buffers = 0;      // tensors live at once (activations, KV caches)
};

// Every virtual op is listed once in kernels/backend_ops.h
// (FOCAL_BACKEND_OPS): adding an op here means adding it there, and
// tests/kernels/backend_ops_test.cc then requires its cross-backend check.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda:0"
  // Whether this backend's ops can read buffers `other` allocated or
  // uploaded, so a replica of a model can share the other's weights instead
  // of holding a copy. By default only its own.
  virtual bool CanUseBuffersOf(const Backend& other) const { return &other == this; }
  // The dtype of attention's tensors (q, the KV caches, the output) in the
  // shared forward pass: F32 (exact), or BF16 where the backend's attention
  // rounds its inputs to BF16 anyway (CUDA's BF16 mode), which halves the KV
  // cache and lets the kernel load its tiles asynchronously.
  virtual DType AttentionDType() const { return DType::kF32; }

  virtual absl::StatusOr<Buffer> Allocate(DType dtype, int64_t rows, int64_t cols) = 0;
  // Makes a weight usable by this backend's ops from host memory of dtype
  // `src` (F32, F16 or BF16). May keep a view of `host` (which must then
  // outlive the result) or convert into new memory.
  virtual absl::StatusOr<Buffer> UploadWeight(const void* host, DType src, int64_t rows,
                                              int64_t cols) = 0;
  // The memory UploadWeight will allocate for such a weight (0 when it is
  // used in place), or -1 when unknown: checked against
  // AvailableMemoryBytes() before a model loads.
  virtual int64_t UploadBytes(DType /*src*/, int64_t /*rows*/, int64_t /*cols*/) const {
    return -1;
  }
  virtual void CopyFromHost(const void* src, Tensor dst) = 0;
  virtual void CopyToHost(Tensor src, void* dst) = 0;
  // dst rows [dst_row, dst_row + n) = src rows [src_row, src_row + n). Same
  // dtypes (overlap allowed: memmove), or an F32 src into a BF16 dst (rounded
  // to nearest even; the two must not overlap).
  virtual void CopyRows(Tensor src, int64_t src_row, Tensor dst, int64_t dst_row, int64_t n) = 0;

  // out(T,C) = table[tokens[t], :].                 table: (V,C)
  virtual void Embed(Tensor table, absl::Span<const int32_t> tokens, Tensor out) = 0;
  // out = x * rsqrt(mean(x^2) + eps) * w, per row.  x,out: (T,C)  w: (1,C)
  virtual void RmsNorm(Tensor x, Tensor w, float eps, Tensor out) = 0;
  // out(T,N) = x(T,K) . w(N,K)^T (nn.Linear layout). Each output row must
  // depend only on its input row (batch invariance).
  virtual void MatMul(Tensor x, Tensor w, Tensor out) = 0;
  // HF rotate_half RoPE in place on x (T, heads*D) at positions[t];
  // inv_freq has D/2 entries.
  virtual void Rope(Tensor x, int num_heads, int head_dim, absl::Span<const int64_t> positions,
                    absl::Span<const float> inv_freq) = 0;
  // Causal GQA attention with a per-row softmax scale; see AttentionArgs.
  virtual void Attention(const AttentionArgs& args) = 0;
  // out = silu(gate) * up.                          all (T,F)
  virtual void SwiGlu(Tensor gate, Tensor up, Tensor out) = 0;
  // inout += x.
  virtual void Add(Tensor x, Tensor inout) = 0;
  // out[t] = x[t,:] . w + bias, written to host.    x: (T,C)  w: (1,C)
  virtual void RowDot(Tensor x, Tensor w, float bias, absl::Span<float> out) = 0;
  // out(R,C) = x[rows[r], :].
  virtual void GatherRows(Tensor x, absl::Span<const int64_t> rows, Tensor out) = 0;
  // For each row r of logits (R,V): logprob[r] = log_softmax(row)[targets[r]]
  // and argmax[r] = first index of the row's maximum; written to host.
  virtual void LogSoftmaxGather(Tensor logits, absl::Span<const int32_t> targets,
                                absl::Span<double> logprob, absl::Span<int32_t> argmax) = 0;

  // For each probe p and head h: entropy[p*H + h] = the entropy (nats) of
  // the attention distribution of that query row, and mass[p*H + h] = its
  // probability on the probe's key ranges. Reads the same q, caches and
  // scales as Attention (call it with the same args, after Attention). The
  // default runs on the host from copies of the rows it needs, in double: a
  // diagnostic over a few rows, not a hot path.
  virtual void AttentionStats(const AttentionArgs& args, absl::Span<const AttentionProbe> probes,
                              absl::Span<float> entropy, absl::Span<float> mass);

  // Bytes this backend can still allocate: free device memory (plus what its
  // allocator keeps for reuse) on a GPU, the host's MemAvailable on the CPU;
  // -1 when unknown.
  virtual int64_t AvailableMemoryBytes();
  // Memory the backend's ops use beyond the tensors the caller allocates, at
  // most, for forward calls up to `shape`: workspaces, per-thread scratch,
  // allocation rounding. Part of the up-front long-context estimate.
  virtual int64_t ScratchBytes(const ForwardShape& shape) const = 0;
  // The most memory the backend has held since ResetPeakMemory() (tensors,
  // workspaces, its allocator's cache), or -1 when it does not track it (the
  // CPU: the process's peak RSS says it).
  virtual int64_t PeakMemoryBytes() { return -1; }
  virtual void ResetPeakMemory() {}

  // Waits for queued work; returns the first device error since the last Sync().
  virtual absl::Status Sync() = 0;
};

// "cpu[:fp32|bf16]" (threads <= 0: every usable core) or, when built with
// CUDA, "cuda[:N][:fp32|bf16]"; "auto" picks CUDA device 0 when one is
// present and usable, else the CPU, and then sets *note (when given) to why a
// present device was not used. `precision` ("fp32", "bf16"; empty: each
// device's default, fp32 on the CPU, FOCAL_CUDA_PRECISION or bf16 on CUDA) is
// --precision: it must agree with a precision the device string names.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view device,
                                                       int num_threads = 0,
                                                       std::string* note = nullptr,
                                                       absl::string_view precision = "");

// A comma-separated list ("cpu,cpu", "cuda:0,cuda:1"): one backend per entry,
// each to hold a replica of the model. CPU entries split --threads (all
// cores when 0) between them. One entry is CreateBackend's.
absl::StatusOr<std::vector<std::unique_ptr<Backend>>> CreateBackends(
    absl::string_view devices, int num_threads = 0, std::string* note = nullptr,
    absl::string_view precision = "");

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_BACKEND_H_
