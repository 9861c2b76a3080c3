// SPDX-License-Identifier: Apache-2.0
// The shared forward pass with a backend whose attention reads BF16 tensors
// (Backend::AttentionDType(), as CUDA's BF16 mode), checked on the CPU so
// that CI covers the wiring without a GPU: q rounded into its own buffer,
// K/V rounded on their way into a BF16 cache, attention's BF16 output fed
// to the output projection.
//
// Two CPU wrappers compute the same arithmetic by different routes:
//  - Bf16Storage: AttentionDType() = BF16; its Attention widens the BF16
//    tensors, runs the CPU kernel and rounds the output into BF16, and its
//    MatMul widens a BF16 input. The transformer does the rounding.
//  - RoundedF32: AttentionDType() = F32 (the plain path); its Attention
//    rounds copies of q, K, V to BF16 values and the output in place.
// Their scores must be bit-identical: any row the transformer fails to
// convert, or converts from the wrong place, shows up.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dtype.h"
#include "model/kv_cache.h"
#include "model/language_model.h"
#include "model/memory_estimate.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using kernels::AttentionArgs;
using kernels::AttentionSeq;
using kernels::Buffer;
using kernels::DType;
using kernels::Tensor;

// A host F32 copy of a CPU tensor of any dtype, optionally rounded to BF16.
std::vector<float> Widen(Tensor t, bool round) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = t.dtype == DType::kBF16 ? kernels::Bf16ToF32(static_cast<const uint16_t*>(t.data)[i])
                                      : t.as<float>()[i];
    if (round) v = kernels::Bf16ToF32(kernels::F32ToBf16(v));
    out[i] = v;
  }
  return out;
}

Tensor View(std::vector<float>& v, int64_t rows, int64_t cols) {
  return Tensor{v.data(), DType::kF32, rows, cols};
}

// Runs the CPU attention on F32 copies (rounded to BF16 values when `round`)
// of args' tensors; returns the F32 output.
std::vector<float> AttentionOnCopies(kernels::CpuBackend& cpu, const AttentionArgs& a, bool round) {
  std::vector<float> q = Widen(a.q, round), out(static_cast<size_t>(a.out.numel()));
  std::vector<std::vector<float>> ks, vs;
  std::vector<AttentionSeq> seqs;
  ks.reserve(a.seqs.size());
  vs.reserve(a.seqs.size());
  for (const AttentionSeq& s : a.seqs) {
    // Only the rows attention reads: the cache's capacity may be larger.
    const int64_t n = s.past + s.rows;
    ks.push_back(Widen(s.k_cache.Rows(0, n), round));
    vs.push_back(Widen(s.v_cache.Rows(0, n), round));
    seqs.push_back({s.row_begin, s.rows, s.past, View(ks.back(), n, s.k_cache.cols),
                    View(vs.back(), n, s.v_cache.cols)});
  }
  AttentionArgs c = a;
  c.q = View(q, a.q.rows, a.q.cols);
  c.seqs = seqs;
  c.out = View(out, a.out.rows, a.out.cols);
  cpu.CpuBackend::Attention(c);  // the CPU kernel itself, not the wrapper's override
  return out;
}

class Bf16Storage : public kernels::CpuBackend {
 public:
  Bf16Storage() : CpuBackend(2) {}
  DType AttentionDType() const override { return DType::kBF16; }
  void Attention(const AttentionArgs& a) override {
    EXPECT_EQ(a.q.dtype, DType::kBF16);
    EXPECT_EQ(a.out.dtype, DType::kBF16);
    for (const AttentionSeq& s : a.seqs) {
      EXPECT_EQ(s.k_cache.dtype, DType::kBF16);
      EXPECT_EQ(s.v_cache.dtype, DType::kBF16);
    }
    ++calls;
    const std::vector<float> out = AttentionOnCopies(*this, a, /*round=*/false);
    auto* o = static_cast<uint16_t*>(a.out.data);
    for (size_t i = 0; i < out.size(); ++i) o[i] = kernels::F32ToBf16(out[i]);
  }
  void MatMul(Tensor x, Tensor w, Tensor out) override {
    if (x.dtype != DType::kBF16) return CpuBackend::MatMul(x, w, out);
    std::vector<float> wide = Widen(x, false);
    CpuBackend::MatMul(View(wide, x.rows, x.cols), w, out);
  }
  int calls = 0;
};

class RoundedF32 : public kernels::CpuBackend {
 public:
  RoundedF32() : CpuBackend(2) {}
  void Attention(const AttentionArgs& a) override {
    const std::vector<float> out = AttentionOnCopies(*this, a, /*round=*/true);
    float* o = a.out.as<float>();
    for (size_t i = 0; i < out.size(); ++i) o[i] = kernels::Bf16ToF32(kernels::F32ToBf16(out[i]));
  }
};

using Scores = std::vector<std::vector<TokenScore>>;

std::unique_ptr<LanguageModel> Load(const std::string& rel, kernels::Backend& b) {
  LoadOptions o;
  o.require_tokenizer = false;
  auto m = LanguageModel::Load(testing::SourcePath(rel), b, o);
  EXPECT_TRUE(m.ok()) << rel << ": " << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// Three sequences packed in one call, then a continuation of each through its
// cache (chunked prefill), every next token scored.
Scores ScoreTwice(LanguageModel& m, uint32_t seed) {
  Transformer& tf = m.transformer();
  const int vocab = static_cast<int>(m.config().vocab_size);
  std::mt19937 rng(seed);
  std::vector<KvCache> caches;
  for (int s = 0; s < 3; ++s) caches.push_back(*tf.NewCache(1));
  Scores all;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::vector<int32_t>> tokens(3), targets(3);
    std::vector<std::vector<int64_t>> rows(3);
    std::vector<SeqInput> batch;
    for (int s = 0; s < 3; ++s) {
      const int len = round == 0 ? 5 + 23 * s : 1 + 9 * s;
      for (int i = 0; i < len; ++i) {
        tokens[s].push_back(3 + static_cast<int32_t>(rng() % (vocab - 3)));
        rows[s].push_back(i);
        targets[s].push_back(3 + static_cast<int32_t>(rng() % (vocab - 3)));
      }
    }
    for (int s = 0; s < 3; ++s) batch.push_back({&caches[s], tokens[s], rows[s], targets[s]});
    Scores out;
    const absl::Status st = tf.Forward(batch, out);
    EXPECT_TRUE(st.ok()) << st;
    for (auto& o : out) all.push_back(o);
  }
  return all;
}

TEST(AttentionDTypeTest, Bf16AttentionTensorsMatchRoundingInF32BitForBit) {
  for (const char* rel :
       {"tests/testdata/models/gqa_untied", "tests/testdata/models/focal_learned_token"}) {
    Bf16Storage bf16;
    RoundedF32 rounded;
    kernels::CpuBackend exact(2);
    auto a = Load(rel, bf16), b = Load(rel, rounded), e = Load(rel, exact);
    ASSERT_TRUE(a && b && e);
    const Scores got = ScoreTwice(*a, 7), want = ScoreTwice(*b, 7), plain = ScoreTwice(*e, 7);
    EXPECT_GT(bf16.calls, 0);
    ASSERT_EQ(got.size(), want.size());
    double moved = 0;
    for (size_t s = 0; s < got.size(); ++s) {
      ASSERT_EQ(got[s].size(), want[s].size());
      for (size_t i = 0; i < got[s].size(); ++i) {
        ASSERT_EQ(std::memcmp(&got[s][i].logprob, &want[s][i].logprob, sizeof(double)), 0)
            << rel << " seq " << s << " row " << i << ": " << got[s][i].logprob << " vs "
            << want[s][i].logprob;
        EXPECT_EQ(got[s][i].argmax, want[s][i].argmax);
        moved = std::max(moved, std::abs(got[s][i].logprob - plain[s][i].logprob));
      }
    }
    // The rounding is real (not a no-op) and small.
    EXPECT_GT(moved, 0.0) << rel;
    EXPECT_LT(moved, 0.1) << rel;
  }
}

TEST(AttentionDTypeTest, CacheAndEstimateFollowTheBackend) {
  Bf16Storage bf16;
  kernels::CpuBackend exact(2);
  KvCache a(2, 8), b(2, 8);
  ASSERT_TRUE(a.Reserve(10, bf16).ok());
  ASSERT_TRUE(b.Reserve(10, exact).ok());
  EXPECT_EQ(a.k(1).dtype, DType::kBF16);
  EXPECT_EQ(a.v(0).dtype, DType::kBF16);
  EXPECT_EQ(b.k(0).dtype, DType::kF32);
  ASSERT_TRUE(a.Reserve(100, bf16).ok());  // growing keeps the dtype
  EXPECT_EQ(a.k(0).dtype, DType::kBF16);
  EXPECT_GE(a.capacity(), 100);
  ModelConfig c;
  c.num_layers = 4;
  c.num_kv_heads = 2;
  c.num_heads = 4;
  c.head_dim = 16;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.vocab_size = 100;
  const int64_t half = EstimateGenerationBytes(c, 4096, 512, 1, bf16);
  const int64_t full = EstimateGenerationBytes(c, 4096, 512, 1, exact);
  // K and V of 4 layers x 32 columns x 4096 tokens, doubled for growth:
  // 2 bytes fewer per element in BF16.
  EXPECT_EQ(full - half, int64_t{2} * 4 * 32 * 4096 * 2 * 2);
}

}  // namespace
}  // namespace focal::model
