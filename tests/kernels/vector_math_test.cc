// SPDX-License-Identifier: Apache-2.0
// The CPU backend's vectorised element-wise math: accuracy against libm in
// higher precision, and the AVX2 and portable paths giving the same bits.
#include "kernels/cpu/vector_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace focal::kernels::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

bool SameBits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }
bool SameBits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

// Gates over the whole range silu meets, with the awkward values in front.
std::vector<float> Gates() {
  std::vector<float> g = {0.0f,  -0.0f,  1.0f,  -1.0f,  1e-30f, -1e-30f, 86.9f, -86.9f,
                          87.0f, -87.0f, 87.1f, -87.1f, 100.0f, -100.0f, 1e30f, -1e30f,
                          kInf,  -kInf,  3.5f,  -3.5f,  1e-45f, -1e-45f, 20.0f, -20.0f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 7.0f);
  for (int i = 0; i < 5000; ++i) {
    const float v = std::exp2(exponent(rng));
    g.push_back(i % 2 ? v : -v);
  }
  return g;
}

TEST(VectorMathTest, SiluMulIsAccurate) {
  const std::vector<float> g = Gates();
  std::vector<float> u(g.size());
  std::mt19937 rng(8);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (float& v : u) v = nd(rng);
  std::vector<float> out(g.size());
  SiluMul(g.data(), u.data(), out.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    if (std::isinf(x)) {  // as x / (1 + exp(-x)): inf at +inf, NaN (-inf / inf) at -inf
      if (x > 0) {
        EXPECT_EQ(out[i], kInf * u[i]);
      } else {
        EXPECT_TRUE(std::isnan(out[i]));
      }
      continue;
    }
    const long double silu = x / (1.0L + std::exp(-static_cast<long double>(x)));
    const double want = static_cast<double>(silu * u[i]);
    // Gates below -87 give 0 where |silu| < 1.5e-36: the floor.
    EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want) + 1.5e-36 * std::fabs(u[i]))
        << "gate " << g[i] << " up " << u[i];
  }
}

TEST(VectorMathTest, SiluMulOfNanIsNan) {
  const float g[9] = {1, 2, kNan, 4, 5, 6, 7, 8, kNan}, u[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  float out[9];
  for (GemmPath path : {GemmPath::kBest, GemmPath::kPortable}) {
    SiluMul(g, u, out, 9, path);
    EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[8])) << (path == GemmPath::kPortable);
    EXPECT_FALSE(std::isnan(out[3]));
  }
}

TEST(VectorMathTest, SiluMulPathsAgreeBitForBitAndInPlace) {
  if (!GemmHasAvx2()) GTEST_SKIP() << "no AVX2 + FMA on this CPU: only the portable path runs";
  const std::vector<float> g = Gates();
  const std::vector<float> u(g.size(), 1.25f);
  const auto n = static_cast<int64_t>(g.size());
  std::vector<float> best(g.size()), portable(g.size());
  SiluMul(g.data(), u.data(), best.data(), n, GemmPath::kBest);
  SiluMul(g.data(), u.data(), portable.data(), n, GemmPath::kPortable);
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_TRUE(SameBits(best[i], portable[i])) << "gate " << g[i];
  }
  // In place (out == gate), and from an odd offset so lanes meet other values.
  std::vector<float> inplace = g;
  SiluMul(inplace.data() + 3, u.data() + 3, inplace.data() + 3, n - 3, GemmPath::kBest);
  for (size_t i = 3; i < g.size(); ++i) ASSERT_TRUE(SameBits(inplace[i], best[i])) << i;
}

// Logits like an LM head's: normal with a wide spread, a few far outliers.
std::vector<float> Logits(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = nd(rng);
  if (n > 10) x[3] = -1e4f, x[n - 2] = -800.0f;
  return x;
}

TEST(VectorMathTest, SumExpShiftedIsAccurate) {
  for (int64_t n : {1, 2, 15, 16, 17, 33, 49152, 128256}) {
    const std::vector<float> x = Logits(n, static_cast<uint32_t>(n));
    float mx = -kInf;
    for (float v : x) mx = std::max(mx, v);
    long double want = 0;
    for (float v : x) want += std::exp(static_cast<long double>(v) - mx);
    const double got = SumExpShifted(x.data(), n, mx);
    // Each term to an ulp or two; n / 16 additions per partial sum.
    EXPECT_NEAR(got, static_cast<double>(want), 1e-13 * static_cast<double>(want)) << "n=" << n;
  }
}

TEST(VectorMathTest, EachExpTermIsWithinAnUlpOrTwo) {
  // One term at a time: exp(x - shift) against libm's double exp.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> ud(-700.0f, 0.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = i < 4 ? std::vector<float>{0.0f, -1e-7f, -0.5f, -700.0f}[i] : ud(rng);
    for (GemmPath path : {GemmPath::kBest, GemmPath::kPortable}) {
      const double got = SumExpShifted(&x, 1, 0.0, path);
      const double want = std::exp(static_cast<double>(x));
      ASSERT_NEAR(got, want, 4.5e-16 * want) << "x=" << x;
    }
  }
}

TEST(VectorMathTest, SumExpShiftedPropagatesNanAndFloorsTinyTerms) {
  std::vector<float> x(40, 0.0f);
  x[21] = kNan;
  EXPECT_TRUE(std::isnan(SumExpShifted(x.data(), 40, 0.0)));
  EXPECT_TRUE(std::isnan(SumExpShifted(x.data(), 40, 0.0, GemmPath::kPortable)));
  // -inf and -1e30 count as exp(-708): nothing next to a 1.
  const float y[3] = {0.0f, -kInf, -1e30f};
  EXPECT_EQ(SumExpShifted(y, 3, 0.0), 1.0);
  EXPECT_EQ(SumExpShifted(y, 0, 0.0), 0.0);
}

TEST(VectorMathTest, SumExpShiftedPathsAgreeBitForBit) {
  if (!GemmHasAvx2()) GTEST_SKIP() << "no AVX2 + FMA on this CPU: only the portable path runs";
  for (int64_t n : {1, 7, 16, 31, 32, 49152}) {
    const std::vector<float> x = Logits(n, 100 + static_cast<uint32_t>(n));
    for (double shift : {20.0, 35.5}) {
      ASSERT_TRUE(SameBits(SumExpShifted(x.data(), n, shift, GemmPath::kBest),
                           SumExpShifted(x.data(), n, shift, GemmPath::kPortable)))
          << "n=" << n << " shift=" << shift;
    }
  }
}

int64_t SequentialArgMax(const std::vector<float>& x) {
  int64_t best = 0;
  for (size_t j = 1; j < x.size(); ++j) {
    if (x[j] > x[best]) best = static_cast<int64_t>(j);
  }
  return best;
}

TEST(VectorMathTest, FirstArgMaxIsTheSequentialLoops) {
  std::mt19937 rng(10);
  std::vector<std::vector<float>> rows = {{kNan, 1, 2},
                                          {1, kNan, 2, 2},
                                          {-kInf, -kInf},
                                          {-0.0f, 0.0f},
                                          {3},
                                          std::vector<float>(37, -kInf),
                                          std::vector<float>(40, kNan)};
  rows[5][36] = kNan;
  for (int n : {9, 16, 17, 100, 49152}) {
    std::vector<float> x(n);
    std::uniform_int_distribution<int> small(-5, 5);  // many ties
    for (float& v : x) v = static_cast<float>(small(rng));
    x[n / 2] = kNan;
    rows.push_back(x);
    rows.push_back(Logits(n, static_cast<uint32_t>(n)));
  }
  std::vector<float> nan_first(50, 1.0f);
  nan_first[0] = kNan;
  nan_first[30] = 9.0f;
  rows.push_back(nan_first);
  for (const auto& x : rows) {
    for (GemmPath path : {GemmPath::kBest, GemmPath::kPortable}) {
      EXPECT_EQ(FirstArgMax(x.data(), static_cast<int64_t>(x.size()), path), SequentialArgMax(x))
          << "size " << x.size() << " portable " << (path == GemmPath::kPortable);
    }
  }
}

// The attention softmax's exponentials: accurate, exact at 0, 0 below the
// floor, NaN kept, and the same bits on both paths at every length.
TEST(VectorMathTest, ExpShiftedIsAccurateAndPathsAgree) {
  std::vector<float> x = {0.0f, -1e-30f, -1.0f, -86.9f, -87.0f, -87.1f, -100.0f, -kInf, kNan};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-90.0f, 0.0f);
  for (int i = 0; i < 4000; ++i) x.push_back(u(rng));
  const float shift = 0.0f;
  for (int64_t n :
       {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, static_cast<int64_t>(x.size())}) {
    std::vector<float> best(x.begin(), x.begin() + n), portable = best;
    ExpShifted(best.data(), n, shift, GemmPath::kBest);
    ExpShifted(portable.data(), n, shift, GemmPath::kPortable);
    for (int64_t j = 0; j < n; ++j) {
      // A NaN stays NaN on both paths (its payload may differ).
      ASSERT_TRUE(SameBits(best[j], portable[j]) ||
                  (std::isnan(best[j]) && std::isnan(portable[j])))
          << "x " << x[j] << " n " << n;
    }
  }
  std::vector<float> y = x;
  ExpShifted(y.data(), static_cast<int64_t>(y.size()), shift);
  for (size_t j = 0; j < x.size(); ++j) {
    if (std::isnan(x[j])) {
      EXPECT_TRUE(std::isnan(y[j]));
    } else if (x[j] < -87.0f) {
      EXPECT_EQ(y[j], 0.0f) << x[j];
    } else {
      const double want = std::exp(static_cast<double>(x[j]));
      EXPECT_NEAR(y[j], want, 3e-7 * want) << x[j];
    }
  }
  EXPECT_EQ(y[0], 1.0f);
  // The shift is subtracted in float first: exp(3 - 5) = exp(-2).
  float z = 3.0f;
  ExpShifted(&z, 1, 5.0f);
  EXPECT_NEAR(z, std::exp(-2.0), 3e-7);
}

}  // namespace
}  // namespace focal::kernels::cpu
