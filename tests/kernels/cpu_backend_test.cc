// SPDX-License-Identifier: Apache-2.0
// CPU ops against plain double-precision loops on deliberately odd shapes,
// plus the row-invariance property the batch invariance of scores rests on.
#include "kernels/cpu/cpu_backend.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/dtype.h"

namespace focal::kernels {
namespace {

class CpuBackendTest : public ::testing::Test {
 protected:
  CpuBackend be_{2};
  std::mt19937 rng_{42};

  Buffer Random(int64_t rows, int64_t cols, float scale = 1.0f) {
    Buffer b = *be_.Allocate(DType::kF32, rows, cols);
    std::normal_distribution<float> d(0.0f, scale);
    for (int64_t i = 0; i < rows * cols; ++i) b.tensor().as<float>()[i] = d(rng_);
    return b;
  }
};

TEST_F(CpuBackendTest, MatMulMatchesNaive) {
  for (int64_t T : {1, 37, 64, 65, 130}) {
    Buffer x = Random(T, 72), w = Random(517, 72), out = *be_.Allocate(DType::kF32, T, 517);
    be_.MatMul(x.tensor(), w.tensor(), out.tensor());
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < 517; n += 7) {
        double ref = 0;
        for (int k = 0; k < 72; ++k) {
          ref += double{x.tensor().as<float>()[t * 72 + k]} * w.tensor().as<float>()[n * 72 + k];
        }
        ASSERT_NEAR(out.tensor().as<float>()[t * 517 + n], ref, 1e-4) << T << " " << t << " " << n;
      }
    }
  }
}

// A row's product must be bit-identical whatever row of the call it sits in
// and whatever the other rows hold: that is what makes a sequence's scores
// independent of its batch.
TEST_F(CpuBackendTest, MatMulRowResultIndependentOfPositionAndNeighbours) {
  const int64_t K = 96, N = 200;
  Buffer w = Random(N, K), probe = Random(1, K);
  Buffer alone = *be_.Allocate(DType::kF32, 1, N);
  be_.MatMul(probe.tensor(), w.tensor(), alone.tensor());
  for (int64_t T : {3, 64, 100, 200}) {
    Buffer x = Random(T, K), out = *be_.Allocate(DType::kF32, T, N);
    for (int64_t pos : {int64_t{0}, T / 2, T - 1}) {
      std::copy_n(probe.tensor().as<float>(), K, x.tensor().as<float>() + pos * K);
      be_.MatMul(x.tensor(), w.tensor(), out.tensor());
      for (int64_t n = 0; n < N; ++n) {
        ASSERT_EQ(out.tensor().as<float>()[pos * N + n], alone.tensor().as<float>()[n])
            << "T=" << T << " pos=" << pos << " n=" << n;
      }
    }
  }
}

TEST_F(CpuBackendTest, RmsNormLiteral) {
  Buffer x = *be_.Allocate(DType::kF32, 1, 4), w = *be_.Allocate(DType::kF32, 1, 4),
         out = *be_.Allocate(DType::kF32, 1, 4);
  float xs[4] = {1, 2, 3, 4}, ws[4] = {1, 0.5f, 2, -1};
  be_.CopyFromHost(xs, x.tensor());
  be_.CopyFromHost(ws, w.tensor());
  be_.RmsNorm(x.tensor(), w.tensor(), 0.0f, out.tensor());
  const double r = 1.0 / std::sqrt(7.5);  // mean of squares = 30 / 4
  const float* o = out.tensor().as<float>();
  EXPECT_NEAR(o[0], 1 * r, 1e-6);
  EXPECT_NEAR(o[1], 0.5 * 2 * r, 1e-6);
  EXPECT_NEAR(o[2], 2 * 3 * r, 1e-6);
  EXPECT_NEAR(o[3], -4 * r, 1e-6);
}

TEST_F(CpuBackendTest, RopeRotatesHalves) {
  const int H = 3, D = 10;
  Buffer x = Random(5, H * D);
  std::vector<float> before(x.tensor().as<float>(), x.tensor().as<float>() + 5 * H * D);
  std::vector<int64_t> pos = {0, 1, 7, 100, 4095};
  std::vector<float> inv = {1.0f, 0.3f, 0.05f, 0.01f, 0.001f};
  be_.Rope(x.tensor(), H, D, pos, inv);
  for (int t = 0; t < 5; ++t) {
    for (int h = 0; h < H; ++h) {
      for (int i = 0; i < D / 2; ++i) {
        const double a = before[t * H * D + h * D + i], b = before[t * H * D + h * D + i + D / 2];
        const double ang = static_cast<float>(pos[t]) * inv[i];
        EXPECT_NEAR(x.tensor().as<float>()[t * H * D + h * D + i], a * cos(ang) - b * sin(ang), 1e-5);
        EXPECT_NEAR(x.tensor().as<float>()[t * H * D + h * D + i + D / 2],
                    b * cos(ang) + a * sin(ang), 1e-5);
      }
    }
  }
}

// Naive causal GQA attention in double for one sequence.
std::vector<double> NaiveAttention(const float* q, const float* k, const float* v, int64_t past,
                                   int64_t rows, int H, int Hkv, int D,
                                   const std::vector<float>& scale) {
  std::vector<double> out(rows * H * D, 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / Hkv);
      const int64_t n = past + i + 1;
      std::vector<double> s(n);
      double mx = -1e300;
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += double{q[(i * H + h) * D + d]} * k[(j * Hkv + g) * D + d];
        s[j] = dot * scale[i];
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (int64_t j = 0; j < n; ++j) {
        for (int d = 0; d < D; ++d) out[(i * H + h) * D + d] += s[j] / sum * v[(j * Hkv + g) * D + d];
      }
    }
  }
  return out;
}

TEST_F(CpuBackendTest, AttentionMatchesNaiveWithCacheAndPerRowScale) {
  const int H = 6, Hkv = 2, D = 10;
  // Two sequences in one packed call: one fresh (past 0, 150 rows: crosses an
  // attention block), one continuing a cache (past 37, 5 rows).
  struct S { int64_t past, rows; };
  std::vector<S> ss = {{0, 150}, {37, 5}};
  const int64_t T = 155;
  Buffer q = Random(T, H * D), out = *be_.Allocate(DType::kF32, T, H * D);
  std::vector<Buffer> kc, vc;
  std::vector<AttentionSeq> seqs;
  std::vector<float> scale(T);
  std::uniform_real_distribution<float> u(0.1f, 0.9f);
  for (float& s : scale) s = u(rng_);
  int64_t row = 0;
  for (const S& s : ss) {
    kc.push_back(Random(s.past + s.rows + 3, Hkv * D));
    vc.push_back(Random(s.past + s.rows + 3, Hkv * D));
    seqs.push_back({row, s.rows, s.past, kc.back().tensor(), vc.back().tensor()});
    row += s.rows;
  }
  AttentionArgs a{q.tensor(), seqs, scale, H, Hkv, D, out.tensor()};
  be_.Attention(a);
  row = 0;
  for (size_t i = 0; i < ss.size(); ++i) {
    std::vector<float> sc(scale.begin() + row, scale.begin() + row + ss[i].rows);
    auto ref = NaiveAttention(q.tensor().as<float>() + row * H * D, kc[i].tensor().as<float>(),
                              vc[i].tensor().as<float>(), ss[i].past, ss[i].rows, H, Hkv, D, sc);
    for (int64_t j = 0; j < ss[i].rows * H * D; ++j) {
      ASSERT_NEAR(out.tensor().as<float>()[row * H * D + j], ref[j], 2e-6) << "seq " << i << " " << j;
    }
    row += ss[i].rows;
  }
}

TEST_F(CpuBackendTest, LogSoftmaxGatherAndArgmax) {
  Buffer l = *be_.Allocate(DType::kF32, 2, 4);
  float v[8] = {1, 3, 3, -2, /*row 2*/ -100, 0, 50, 49};
  be_.CopyFromHost(v, l.tensor());
  std::vector<int32_t> tg = {1, 3};
  std::vector<double> lp(2);
  std::vector<int32_t> am(2);
  be_.LogSoftmaxGather(l.tensor(), tg, absl::MakeSpan(lp), absl::MakeSpan(am));
  const double z0 = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(-2.0));
  EXPECT_NEAR(lp[0], 3.0 - z0, 1e-12);
  EXPECT_EQ(am[0], 1);  // first of the tied maxima, as torch.argmax
  const double z1 = 50 + std::log(std::exp(-150.0) + std::exp(-50.0) + 1 + std::exp(-1.0));
  EXPECT_NEAR(lp[1], 49.0 - z1, 1e-12);
  EXPECT_EQ(am[1], 2);
}

TEST_F(CpuBackendTest, SwiGluAndAdd) {
  Buffer g = Random(3, 5), u = Random(3, 5), o = *be_.Allocate(DType::kF32, 3, 5);
  be_.SwiGlu(g.tensor(), u.tensor(), o.tensor());
  for (int i = 0; i < 15; ++i) {
    const double x = g.tensor().as<float>()[i];
    EXPECT_NEAR(o.tensor().as<float>()[i], x / (1 + std::exp(-x)) * u.tensor().as<float>()[i], 1e-6);
  }
  std::vector<float> before(o.tensor().as<float>(), o.tensor().as<float>() + 15);
  be_.Add(g.tensor(), o.tensor());
  for (int i = 0; i < 15; ++i) {
    EXPECT_FLOAT_EQ(o.tensor().as<float>()[i], before[i] + g.tensor().as<float>()[i]);
  }
}

TEST(DTypeTest, HalfConversionsAreExact) {
  EXPECT_EQ(F16ToF32(0x3C00), 1.0f);
  EXPECT_EQ(F16ToF32(0xC000), -2.0f);
  EXPECT_EQ(F16ToF32(0x7BFF), 65504.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToF32(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isinf(F16ToF32(0x7C00)));
  EXPECT_TRUE(std::isnan(F16ToF32(0x7E00)));
  EXPECT_EQ(Bf16ToF32(0x3F80), 1.0f);
  EXPECT_EQ(Bf16ToF32(0xC0A0), -5.0f);
  EXPECT_EQ(F32ToBf16(1.0f), 0x3F80);
  EXPECT_EQ(F32ToBf16(1.00390625f), 0x3F80);  // halfway: rounds to even
}

TEST_F(CpuBackendTest, UploadWidensHalfWeights) {
  uint16_t bf[3] = {0x3F80, 0xC0A0, 0x0000};
  auto b = be_.UploadWeight(bf, DType::kBF16, 1, 3);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->tensor().as<float>()[0], 1.0f);
  EXPECT_EQ(b->tensor().as<float>()[1], -5.0f);
  uint16_t h[2] = {0x3C00, 0xC000};
  auto hb = be_.UploadWeight(h, DType::kF16, 1, 2);
  ASSERT_TRUE(hb.ok());
  EXPECT_EQ(hb->tensor().as<float>()[1], -2.0f);
}

}  // namespace
}  // namespace focal::kernels
