// SPDX-License-Identifier: Apache-2.0
#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/dtype.h"

namespace focal::kernels {
namespace {

float* F(Tensor t) {
  FOCAL_CHECK(t.dtype == DType::kF32);
  return t.as<float>();
}

void FreeAligned(void* p) { std::free(p); }

// max(row[0..n)) as the sequential std::max(mx, row[j]) from -inf gives it:
// max is exact in any order, and both skip NaNs (maxps(x, m) keeps m when x
// is NaN, as std::max(m, x) does).
inline float RowMax(const float* row, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
#if defined(__SSE2__)
  __m128 m = _mm_set1_ps(mx);
  for (; j + 4 <= n; j += 4) m = _mm_max_ps(_mm_loadu_ps(row + j), m);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, m);
  for (float v : lanes) mx = std::max(mx, v);
#endif
  for (; j < n; ++j) mx = std::max(mx, row[j]);
  return mx;
}

// Rows summed together by RowSums.
constexpr int64_t kSumRows = 8;

// sum[r] = row r's first len[r] values summed in double in order (rows at
// stride ld, m <= kSumRows): the same sums as one row at a time, with up
// to kSumRows independent chains in flight.
inline void RowSums(const float* rows, int64_t ld, const int64_t* len, int64_t m, double* sum) {
  int64_t common = len[0];
  for (int64_t r = 1; r < m; ++r) common = std::min(common, len[r]);
  if (m == kSumRows) {
    double s[kSumRows] = {};
    for (int64_t j = 0; j < common; ++j) {
      for (int64_t r = 0; r < kSumRows; ++r) s[r] += rows[r * ld + j];
    }
    for (int64_t r = 0; r < kSumRows; ++r) sum[r] = s[r];
  } else {
    common = 0;
  }
  for (int64_t r = 0; r < m; ++r) {
    double acc = sum[r];
    for (int64_t j = common; j < len[r]; ++j) acc += rows[r * ld + j];
    sum[r] = acc;
  }
}
}  // namespace

CpuBackend::CpuBackend(int num_threads, CpuPrecision precision)
    : pool_(num_threads), precision_(precision) {}

std::string CpuPrecisionUnsupported(CpuPrecision precision) {
  if (precision == CpuPrecision::kBf16 && !cpu::GemmHasAvx2()) {
    return "this CPU has no AVX2+FMA, which the BF16 mode's kernels need (use --precision fp32)";
  }
  return "";
}

int64_t CpuBackend::ScratchBytes(const ForwardShape& s) const {
  const int64_t threads = pool_.num_threads();
  // Attention: one (kAttnRows x keys) score block per thread; it grows with
  // the keys chunk by chunk, and while it is reallocated the old block is
  // still live: count two.
  // Stacked heads stay within kAttnRows score rows; their query and output
  // copies are at most kMaxStackedRows x head_dim each (head_dim <= max_inputs).
  const int64_t scores =
      2 * threads * kAttnRows * s.keys * 4 + 2 * threads * kMaxStackedRows * s.max_inputs * 4;
  // And each row's visible key count, and the GEMM's packed panels; with
  // BF16 weights, the GEMM input rounded to BF16 (2 bytes) and, without
  // AVX512_BF16, widened back to F32 (4 more).
  const int64_t rounded = precision_ == CpuPrecision::kBf16 ? s.tokens * s.max_inputs * 6 : 0;
  return scores + threads * (kAttnRows * 8 + 128 * 1024) + rounded;
}

void CpuBackend::ParallelRange(int64_t n, int64_t grain,
                               const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int64_t chunks = std::min<int64_t>(pool_.num_threads() * 4, (n + grain - 1) / grain);
  chunks = std::max<int64_t>(chunks, 1);
  int64_t step = (n + chunks - 1) / chunks;
  pool_.ParallelFor(chunks, [&](int64_t c) {
    int64_t b = c * step, e = std::min(n, b + step);
    if (b < e) fn(b, e);
  });
}

absl::StatusOr<Buffer> CpuBackend::Allocate(DType dtype, int64_t rows, int64_t cols) {
  FOCAL_CHECK(rows >= 0 && cols >= 0);
  size_t bytes = static_cast<size_t>(rows * cols) * DTypeSize(dtype);
  size_t padded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, padded);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes of host memory for a (", rows, ", ", cols, ") tensor"));
  }
  std::memset(p, 0, padded);
  return Buffer(Tensor{p, dtype, rows, cols}, FreeAligned);
}

bool CpuBackend::CanUseBuffersOf(const Backend& other) const {
  const auto* cpu = dynamic_cast<const CpuBackend*>(&other);
  return cpu != nullptr && cpu->precision_ == precision_;
}

int64_t CpuBackend::UploadBytes(DType src, int64_t rows, int64_t cols) const {
  // As UploadWeight below (an aligned source assumed: memory maps are).
  const DType kept = precision_ == CpuPrecision::kBf16 && rows > 1 ? DType::kBF16 : DType::kF32;
  return src == kept ? 0 : rows * cols * static_cast<int64_t>(DTypeSize(kept));
}

absl::StatusOr<Buffer> CpuBackend::UploadWeight(const void* host, DType src, int64_t rows,
                                                int64_t cols) {
  // BF16 mode: matrices in BF16 (used in place when already BF16 and
  // aligned); vectors (norms, focal tau: one row) stay F32 below.
  if (precision_ == CpuPrecision::kBf16 && rows > 1) {
    if (src == DType::kBF16 && reinterpret_cast<uintptr_t>(host) % alignof(uint16_t) == 0) {
      return Buffer(Tensor{const_cast<void*>(host), DType::kBF16, rows, cols}, nullptr);
    }
    auto buf = Allocate(DType::kBF16, rows, cols);
    if (!buf.ok()) return buf.status();
    uint16_t* dst = buf->tensor().as<uint16_t>();
    const auto* s = static_cast<const uint8_t*>(host);
    ParallelRange(rows * cols, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (src == DType::kBF16) {
          std::memcpy(&dst[i], s + 2 * i, 2);
        } else if (src == DType::kF16) {
          uint16_t h;
          std::memcpy(&h, s + 2 * i, 2);
          dst[i] = F32ToBf16(F16ToF32(h));
        } else {
          float f;
          std::memcpy(&f, s + 4 * i, 4);
          dst[i] = F32ToBf16(f);
        }
      }
    });
    return buf;
  }
  // F32 weights in the memory map are used in place (no copy) when aligned.
  if (src == DType::kF32 && reinterpret_cast<uintptr_t>(host) % alignof(float) == 0) {
    return Buffer(Tensor{const_cast<void*>(host), DType::kF32, rows, cols}, nullptr);
  }
  auto buf = Allocate(DType::kF32, rows, cols);
  if (!buf.ok()) return buf.status();
  float* dst = buf->tensor().as<float>();
  int64_t n = rows * cols;
  const uint8_t* s = static_cast<const uint8_t*>(host);
  ParallelRange(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (src == DType::kF32) {
        std::memcpy(&dst[i], s + 4 * i, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, s + 2 * i, 2);
        dst[i] = src == DType::kBF16 ? Bf16ToF32(h) : F16ToF32(h);
      }
    }
  });
  return buf;
}

void CpuBackend::CopyFromHost(const void* src, Tensor dst) {
  std::memcpy(dst.data, src, dst.bytes());
}

void CpuBackend::CopyToHost(Tensor src, void* dst) { std::memcpy(dst, src.data, src.bytes()); }

void CpuBackend::CopyRows(Tensor src, int64_t src_row, Tensor dst, int64_t dst_row, int64_t n) {
  FOCAL_CHECK(src.cols == dst.cols);
  FOCAL_CHECK(src.dtype == dst.dtype || (src.dtype == DType::kF32 && dst.dtype == DType::kBF16));
  FOCAL_CHECK(src_row >= 0 && dst_row >= 0 && n >= 0);
  FOCAL_CHECK(src_row + n <= src.rows && dst_row + n <= dst.rows);
  if (n == 0) return;
  if (src.dtype == dst.dtype) {
    std::memmove(dst.Rows(dst_row, n).data, src.Rows(src_row, n).data, dst.Rows(0, n).bytes());
    return;
  }
  const float* s = src.Rows(src_row, n).as<float>();
  uint16_t* d = static_cast<uint16_t*>(dst.Rows(dst_row, n).data);
  const int64_t count = n * src.cols;
  const auto* sb = reinterpret_cast<const char*>(s);
  const auto* db = reinterpret_cast<const char*>(d);
  FOCAL_CHECK(db + count * 2 <= sb || sb + count * 4 <= db);  // no overlap across dtypes
  for (int64_t i = 0; i < count; ++i) d[i] = F32ToBf16(s[i]);
}

void CpuBackend::Embed(Tensor table, absl::Span<const int32_t> tokens, Tensor out) {
  FOCAL_CHECK(out.rows == static_cast<int64_t>(tokens.size()) && out.cols == table.cols);
  float* o = F(out);
  for (size_t i = 0; i < tokens.size(); ++i) {
    FOCAL_CHECK(tokens[i] >= 0 && tokens[i] < table.rows);
    float* orow = o + i * out.cols;
    if (table.dtype == DType::kBF16) {  // BF16 mode: widening is exact
      const uint16_t* row = table.as<uint16_t>() + tokens[i] * table.cols;
      for (int64_t c = 0; c < out.cols; ++c) orow[c] = Bf16ToF32(row[c]);
    } else {
      std::memcpy(orow, F(table) + tokens[i] * table.cols, out.cols * sizeof(float));
    }
  }
}

void CpuBackend::RmsNorm(Tensor x, Tensor w, float eps, Tensor out) {
  FOCAL_CHECK(x.rows == out.rows && x.cols == out.cols && w.numel() == x.cols);
  const int64_t c = x.cols;
  const float* xs = F(x);
  const float* ws = F(w);
  float* os = F(out);
  ParallelRange(x.rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* xr = xs + r * c;
      float* orow = os + r * c;
      // Sum of squares in double: the mean is then exact to fp32 rounding.
      double ss = 0;
      for (int64_t i = 0; i < c; ++i) ss += double{xr[i]} * xr[i];
      float inv = static_cast<float>(1.0 / std::sqrt(ss / c + double{eps}));
      // HF order: (x * rsqrt(var + eps)) rounded to fp32, then times w.
      for (int64_t i = 0; i < c; ++i) orow[i] = ws[i] * (xr[i] * inv);
    }
  });
}

void CpuBackend::MatMul(Tensor x, Tensor w, Tensor out) {
  FOCAL_CHECK(x.cols == w.cols && out.rows == x.rows && out.cols == w.rows);
  // Our GEMM, not sgemm: each element's arithmetic is fixed (kernels/cpu/gemm.h).
  if (w.dtype != DType::kBF16) {
    cpu::ParallelGemmNT(pool_, {F(x), x.cols}, {F(w), w.cols}, {F(out), out.cols}, x.rows, w.rows,
                        x.cols);
    return;
  }
  // BF16 weights: the input rounded to BF16 too (nearest even, per element,
  // so a row's rounding never depends on the batch), then BF16 products:
  // vdpbf16ps where the CPU has AVX512_BF16, else widened to F32 (gemm.h).
  const float* xs = F(x);
  rounded_.resize(x.numel());
  ParallelRange(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) rounded_[i] = F32ToBf16(xs[i]);
  });
  cpu::ParallelGemmNT(pool_, cpu::ConstMatBf16{rounded_.data(), x.cols},
                      cpu::ConstMatBf16{w.as<uint16_t>(), w.cols}, {F(out), out.cols}, x.rows,
                      w.rows, x.cols);
}

void CpuBackend::Rope(Tensor x, int num_heads, int head_dim, absl::Span<const int64_t> positions,
                      absl::Span<const float> inv_freq) {
  FOCAL_CHECK(x.cols == int64_t{num_heads} * head_dim && head_dim % 2 == 0);
  FOCAL_CHECK(static_cast<int64_t>(positions.size()) == x.rows);
  FOCAL_CHECK(static_cast<int>(inv_freq.size()) == head_dim / 2);
  const int half = head_dim / 2;
  float* xs = F(x);
  ParallelRange(x.rows, 8, [&](int64_t b, int64_t e) {
    std::vector<float> cs(half), sn(half);
    for (int64_t t = b; t < e; ++t) {
      for (int i = 0; i < half; ++i) {
        // As HF: the angle is an fp32 product (position * inv_freq), and
        // cos/sin are taken of that fp32 value. At 128K positions the fp32
        // angle differs from the exact one; matching HF matters more here.
        float angle = static_cast<float>(positions[t]) * inv_freq[i];
        cs[i] = static_cast<float>(std::cos(double{angle}));
        sn[i] = static_cast<float>(std::sin(double{angle}));
      }
      float* row = xs + t * x.cols;
      for (int h = 0; h < num_heads; ++h) {
        float* v = row + h * head_dim;
        for (int i = 0; i < half; ++i) {
          float a = v[i], bb = v[i + half];
          v[i] = a * cs[i] - bb * sn[i];
          v[i + half] = bb * cs[i] + a * sn[i];
        }
      }
    }
  });
}

void CpuBackend::Attention(const AttentionArgs& a) {
  const int H = a.num_heads, Hkv = a.num_kv_heads, D = a.head_dim;
  FOCAL_CHECK(H % Hkv == 0 && a.q.cols == int64_t{H} * D && a.out.cols == a.q.cols);
  FOCAL_CHECK(static_cast<int64_t>(a.scale.size()) == a.q.rows);
  const int group = H / Hkv;
  const int64_t qld = int64_t{H} * D, kvld = int64_t{Hkv} * D;
  const float* q = F(a.q);
  float* out = F(a.out);
  // Tasks: (sequence, block of query rows, heads). Blocks are cut relative to
  // the sequence's own first row, so the calls a sequence makes never depend
  // on the rest of the batch. A short block (a decode step) takes the `group`
  // query heads that share one KV head as stacked rows, so their keys and
  // values are read and packed once, not once per head: every score and
  // output is the same fixed-order sum either way (kernels/cpu/gemm.h).
  struct Task {
    const AttentionSeq* s;
    int64_t b0, rows;
    int h0, heads;
  };
  std::vector<Task> tasks;
  for (const AttentionSeq& s : a.seqs) {
    FOCAL_CHECK(s.k_cache.cols == kvld && s.past + s.rows <= s.k_cache.rows);
    for (int64_t b0 = 0; b0 < s.rows; b0 += kAttnRows) {
      const int64_t rows = std::min(kAttnRows, s.rows - b0);
      const int heads = group > 1 && rows * group <= kMaxStackedRows ? group : 1;
      for (int h = 0; h < H; h += heads) tasks.push_back({&s, b0, rows, h, heads});
    }
  }
  pool_.ParallelFor(static_cast<int64_t>(tasks.size()), [&](int64_t ti) {
    const Task& t = tasks[ti];
    const AttentionSeq& s = *t.s;
    const float* kc = F(s.k_cache);
    const float* vc = F(s.v_cache);
    const int g = t.h0 / group;
    const int64_t n = s.past + t.b0 + t.rows;  // keys visible to the block's last row
    const int64_t m = t.rows * t.heads;        // score rows, (query row, head) in that order
    thread_local std::vector<float> scores, stacked_q, stacked_out;
    thread_local std::vector<int64_t> visible;
    scores.resize(m * n);
    visible.resize(m);
    const int64_t row0 = s.row_begin + t.b0;
    // One head reads q and writes out in place; stacked heads go through
    // (m, D) copies, since their rows are not one stride apart in q.
    const float* qb = q + row0 * qld + int64_t{t.h0} * D;
    int64_t qbld = qld;
    if (t.heads > 1) {
      stacked_q.resize(m * D);
      stacked_out.resize(m * D);
      for (int64_t r = 0; r < t.rows; ++r) {
        std::memcpy(stacked_q.data() + r * t.heads * D, qb + r * qld, sizeof(float) * t.heads * D);
      }
      qb = stacked_q.data();
      qbld = D;
    }
    // S(m, n) = Q K^T, then scaled per row (HF: matmul, then * scale).
    // Each score is one fixed-order sum over D (kernels/cpu/gemm.h), so it
    // does not depend on the block's rows or key count.
    cpu::GemmSequential({.a = {qb, qbld},
                         .b = {kc + int64_t{g} * D, kvld},
                         .b_transposed = true,
                         .out = {scores.data(), n},
                         .rows = m,
                         .width = n,
                         .depth = D});
    // Softmax, kSumRows rows at a time (they stay in L2): scale, max and
    // exp(s - max) in fp32 like torch (vectorised), then the normalisers
    // summed in double in key order, several rows together only so that
    // their sums' latencies overlap.
    for (int64_t i0 = 0; i0 < m; i0 += kSumRows) {
      const int64_t mm = std::min(kSumRows, m - i0);
      for (int64_t i = i0; i < i0 + mm; ++i) {
        const int64_t r = i / t.heads;  // the query row
        const int64_t vis = visible[i] = s.past + t.b0 + r + 1;
        const float scale = a.scale[row0 + r];
        float* row = scores.data() + i * n;
        for (int64_t j = 0; j < vis; ++j) row[j] *= scale;
        const float mx = RowMax(row, vis);
        cpu::ExpShifted(row, vis, mx);
      }
      double sum[kSumRows] = {};
      RowSums(scores.data() + i0 * n, n, visible.data() + i0, mm, sum);
      for (int64_t r = 0; r < mm; ++r) {
        const float inv = static_cast<float>(1.0 / sum[r]);
        float* row = scores.data() + (i0 + r) * n;
        for (int64_t j = 0; j < visible[i0 + r]; ++j) row[j] *= inv;
      }
    }
    // O(m, D) = P V, each row over exactly its visible keys in key order
    // (the causal mask): the same sums however the sequence is chunked.
    float* ob = out + row0 * qld + int64_t{t.h0} * D;
    cpu::GemmSequential({.a = {scores.data(), n},
                         .b = {vc + int64_t{g} * D, kvld},
                         .len = visible.data(),
                         .out = {t.heads > 1 ? stacked_out.data() : ob, t.heads > 1 ? D : qld},
                         .rows = m,
                         .width = D,
                         .depth = n});
    if (t.heads > 1) {
      for (int64_t r = 0; r < t.rows; ++r) {
        std::memcpy(ob + r * qld, stacked_out.data() + r * t.heads * D,
                    sizeof(float) * t.heads * D);
      }
    }
  });
}

void CpuBackend::SwiGlu(Tensor gate, Tensor up, Tensor out) {
  FOCAL_CHECK(gate.numel() == up.numel() && gate.numel() == out.numel());
  const float* g = F(gate);
  const float* u = F(up);
  float* o = F(out);
  ParallelRange(gate.numel(), 1 << 14,
                [&](int64_t b, int64_t e) { cpu::SiluMul(g + b, u + b, o + b, e - b); });
}

void CpuBackend::Add(Tensor x, Tensor inout) {
  FOCAL_CHECK(x.numel() == inout.numel());
  const float* a = F(x);
  float* o = F(inout);
  ParallelRange(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] += a[i];
  });
}

void CpuBackend::RowDot(Tensor x, Tensor w, float bias, absl::Span<float> out) {
  FOCAL_CHECK(w.numel() == x.cols && static_cast<int64_t>(out.size()) == x.rows);
  const float* xs = F(x);
  const float* ws = F(w);
  for (int64_t r = 0; r < x.rows; ++r) {
    double acc = 0;
    for (int64_t i = 0; i < x.cols; ++i) acc += double{xs[r * x.cols + i]} * ws[i];
    out[r] = static_cast<float>(acc + bias);
  }
}

void CpuBackend::GatherRows(Tensor x, absl::Span<const int64_t> rows, Tensor out) {
  FOCAL_CHECK(out.rows == static_cast<int64_t>(rows.size()) && out.cols == x.cols);
  for (size_t r = 0; r < rows.size(); ++r) {
    FOCAL_CHECK(rows[r] >= 0 && rows[r] < x.rows);
    std::memcpy(F(out) + r * x.cols, F(x) + rows[r] * x.cols, x.cols * sizeof(float));
  }
}

void CpuBackend::LogSoftmaxGather(Tensor logits, absl::Span<const int32_t> targets,
                                  absl::Span<double> logprob, absl::Span<int32_t> argmax) {
  const int64_t R = logits.rows, V = logits.cols;
  FOCAL_CHECK(static_cast<int64_t>(targets.size()) == R);
  FOCAL_CHECK(static_cast<int64_t>(logprob.size()) == R &&
              static_cast<int64_t>(argmax.size()) == R);
  const float* ls = F(logits);
  ParallelRange(R, 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* row = ls + r * V;
      const auto best = static_cast<int32_t>(cpu::FirstArgMax(row, V));
      const double mx = row[best];
      const double sum = cpu::SumExpShifted(row, V, mx);
      argmax[r] = best;
      FOCAL_CHECK(targets[r] >= 0 && targets[r] < V);
      logprob[r] = double{row[targets[r]]} - mx - std::log(sum);
    }
  });
}

}  // namespace focal::kernels
