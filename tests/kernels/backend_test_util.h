// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the backend tests (backend_ops_test, cuda_backend_test):
// host <-> backend copies in any dtype, BF16 rounding, and packed attention
// problems (several sequences, past keys, per-row scales).
#ifndef FOCAL_TESTS_KERNELS_BACKEND_TEST_UTIL_H_
#define FOCAL_TESTS_KERNELS_BACKEND_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/dtype.h"

namespace focal::kernels::backend_test {

inline float RoundBf16(float x) { return Bf16ToF32(F32ToBf16(x)); }
inline std::vector<float> RoundBf16(std::vector<float> v) {
  for (float& x : v) x = RoundBf16(x);
  return v;
}

// A (rows, cols) tensor of `dtype` on `b` holding v (rounded if BF16).
inline Buffer Put(Backend& b, const std::vector<float>& v, int64_t rows, int64_t cols,
                  DType dtype = DType::kF32) {
  EXPECT_EQ(static_cast<int64_t>(v.size()), rows * cols);
  absl::StatusOr<Buffer> buf = b.Allocate(dtype, rows, cols);
  EXPECT_TRUE(buf.ok()) << buf.status();
  if (!buf.ok()) return Buffer();
  if (dtype == DType::kBF16) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = F32ToBf16(v[i]);
    b.CopyFromHost(h.data(), buf->tensor());
  } else {
    b.CopyFromHost(v.data(), buf->tensor());
  }
  return std::move(*buf);
}

// The tensor's values as floats, whatever its dtype.
inline std::vector<float> Get(Backend& b, Tensor t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::kF32) {
    b.CopyToHost(t, out.data());
  } else {
    std::vector<uint16_t> h(out.size());
    b.CopyToHost(t, h.data());
    for (size_t i = 0; i < h.size(); ++i) {
      out[i] = t.dtype == DType::kBF16 ? Bf16ToF32(h[i]) : F16ToF32(h[i]);
    }
  }
  return out;
}

// One packed attention problem: caches per sequence, packed queries,
// per-row scales.
struct AttnProblem {
  int H = 0, Hkv = 0, D = 0;
  std::vector<AttentionSeq> seqs;        // caches left empty; filled per backend
  std::vector<std::vector<float>> k, v;  // per sequence, (capacity, Hkv*D)
  std::vector<int64_t> capacity;
  std::vector<float> q;  // (T, H*D)
  std::vector<float> scale;
  int64_t T = 0;
};

struct SeqShape {
  int64_t rows, past;
};

// Random q, k, v ~ N(0, 1); scales uniform in [0.02, 0.6] (learned focal:
// one per row), with row 3 sharply peaked (scale 2).
inline AttnProblem MakeProblem(std::mt19937& rng, int H, int Hkv, int D,
                               const std::vector<SeqShape>& shapes) {
  AttnProblem p;
  p.H = H;
  p.Hkv = Hkv;
  p.D = D;
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.02f, 0.6f);
  int64_t row = 0;
  for (const SeqShape& s : shapes) {
    AttentionSeq seq;
    seq.row_begin = row;
    seq.rows = s.rows;
    seq.past = s.past;
    p.seqs.push_back(seq);
    const int64_t cap = s.past + s.rows + 3;
    p.capacity.push_back(cap);
    std::vector<float> k(cap * Hkv * D), v(cap * Hkv * D);
    for (auto& e : k) e = n01(rng);
    for (auto& e : v) e = n01(rng);
    p.k.push_back(std::move(k));
    p.v.push_back(std::move(v));
    row += s.rows;
  }
  p.T = row;
  p.q.resize(p.T * H * D);
  for (auto& e : p.q) e = n01(rng);
  p.scale.resize(p.T);
  for (auto& e : p.scale) e = u(rng);
  if (p.T > 3) p.scale[3] = 2.0f;  // a sharply peaked row
  return p;
}

// `p` on one backend: its tensors (of `dtype`; q, k and v rounded to BF16
// first when `round_inputs`) and the arguments that name them.
struct AttnOnBackend {
  std::vector<Buffer> keep;
  std::vector<AttentionSeq> seqs;
  Buffer q, out;
  AttentionArgs args;
};

// The result points into itself (args.seqs): keep it where it was made.
inline void Upload(Backend& b, const AttnProblem& p, DType dtype, bool round_inputs,
                   AttnOnBackend* on) {
  auto prep = [&](const std::vector<float>& v) { return round_inputs ? RoundBf16(v) : v; };
  on->seqs = p.seqs;
  for (size_t s = 0; s < on->seqs.size(); ++s) {
    on->keep.push_back(Put(b, prep(p.k[s]), p.capacity[s], int64_t{p.Hkv} * p.D, dtype));
    on->seqs[s].k_cache = on->keep.back().tensor();
    on->keep.push_back(Put(b, prep(p.v[s]), p.capacity[s], int64_t{p.Hkv} * p.D, dtype));
    on->seqs[s].v_cache = on->keep.back().tensor();
  }
  on->q = Put(b, prep(p.q), p.T, int64_t{p.H} * p.D, dtype);
  absl::StatusOr<Buffer> out = b.Allocate(dtype, p.T, int64_t{p.H} * p.D);
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) on->out = std::move(*out);
  on->args = AttentionArgs();
  on->args.q = on->q.tensor();
  on->args.seqs = on->seqs;
  on->args.scale = p.scale;
  on->args.num_heads = p.H;
  on->args.num_kv_heads = p.Hkv;
  on->args.head_dim = p.D;
  on->args.out = on->out.tensor();
}

// Runs `p` on `b` with tensors of `dtype`; `round_inputs` rounds q, k, v to
// BF16 first. Returns out (T, H*D) as floats.
inline std::vector<float> RunAttention(Backend& b, const AttnProblem& p, DType dtype,
                                       bool round_inputs) {
  AttnOnBackend on;
  Upload(b, p, dtype, round_inputs, &on);
  b.Attention(on.args);
  std::vector<float> r = Get(b, on.out.tensor());
  const absl::Status s = b.Sync();
  EXPECT_TRUE(s.ok()) << s;
  return r;
}

}  // namespace focal::kernels::backend_test

#endif  // FOCAL_TESTS_KERNELS_BACKEND_TEST_UTIL_H_
