// SPDX-License-Identifier: Apache-2.0
// The CPU backend's BF16 mode (--precision bf16): its widening GEMM is the
// F32 GEMM on exactly widened operands, its vdpbf16ps GEMM (AVX512_BF16) is
// batch-invariant and within F32 summation error of it, kBest picks the one
// the CPU has, its MatMul rounds the input to BF16 first, its error against
// the exact mode stays within the bound of two BF16 roundings, weights are
// kept as the mode says, and the device strings that select it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm.h"
#include "kernels/dtype.h"

namespace focal::kernels {
namespace {

class CpuBf16Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = CpuPrecisionUnsupported(CpuPrecision::kBf16); !why.empty()) {
      GTEST_SKIP() << why;
    }
  }

  std::vector<float> Random(int64_t n, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) f = d(rng_);
    return v;
  }
  static std::vector<uint16_t> ToBf16(const std::vector<float>& v) {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = F32ToBf16(v[i]);
    return out;
  }
  static std::vector<float> Widen(const std::vector<uint16_t>& v) {
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = Bf16ToF32(v[i]);
    return out;
  }

  std::mt19937 rng_{7};
};

// Odd depths exercise the padded k % 8 tail; odd row and column counts the
// partial micro-tiles.
TEST_F(CpuBf16Test, GemmIsTheF32GemmOnWidenedWeightsBitForBit) {
  ThreadPool pool1(1), pool2(2);
  for (int64_t depth : {1, 7, 8, 64, 77, 576}) {
    const int64_t rows = 53, cols = 29;
    const std::vector<float> x = Random(rows * depth);
    const std::vector<uint16_t> w = ToBf16(Random(cols * depth));
    const std::vector<float> wide = Widen(w);
    for (cpu::GemmPath path : {cpu::GemmPath::kBest, cpu::GemmPath::kPortable}) {
      std::vector<float> want(rows * cols), got(rows * cols), par(rows * cols);
      cpu::GemmNT({x.data(), depth}, {wide.data(), depth}, {want.data(), cols}, rows, cols, depth,
                  path);
      cpu::GemmNT({x.data(), depth}, {w.data(), depth}, {got.data(), cols}, rows, cols, depth,
                  path);
      cpu::ParallelGemmNT(pool2, {x.data(), depth}, {w.data(), depth}, {par.data(), cols}, rows,
                          cols, depth, path);
      for (int64_t i = 0; i < rows * cols; ++i) {
        ASSERT_EQ(got[i], want[i]) << "depth " << depth << " element " << i;
        ASSERT_EQ(par[i], want[i]) << "depth " << depth << " element " << i;
      }
    }
  }
}

// BF16 inputs too: kWiden (and kBest without AVX512_BF16) is the F32 GEMM
// of the widened operands bit for bit; kBest with AVX512_BF16 (vdpbf16ps)
// sums the same exact products in another fixed order, so it stays within
// F32 summation error of it. Depths around 32 exercise the masked tail.
TEST_F(CpuBf16Test, Bf16InputGemmMatchesTheWidenedProduct) {
  ThreadPool pool2(2);
  for (int64_t depth : {1, 31, 32, 33, 77, 576, 1536}) {
    const int64_t rows = 53, cols = 29;
    const std::vector<uint16_t> x = ToBf16(Random(rows * depth));
    const std::vector<uint16_t> w = ToBf16(Random(cols * depth));
    const std::vector<float> xw = Widen(x), ww = Widen(w);
    std::vector<float> want(rows * cols), widen(rows * cols), best(rows * cols), par(rows * cols);
    cpu::GemmNT({xw.data(), depth}, {ww.data(), depth}, {want.data(), cols}, rows, cols, depth);
    cpu::GemmNT(cpu::ConstMatBf16{x.data(), depth}, {w.data(), depth}, {widen.data(), cols}, rows,
                cols, depth, cpu::GemmPath::kWiden);
    cpu::GemmNT(cpu::ConstMatBf16{x.data(), depth}, {w.data(), depth}, {best.data(), cols}, rows,
                cols, depth);
    cpu::ParallelGemmNT(pool2, cpu::ConstMatBf16{x.data(), depth}, {w.data(), depth},
                        {par.data(), cols}, rows, cols, depth);
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t i = t * cols + j;
        ASSERT_EQ(widen[i], want[i]) << "depth " << depth << " element " << i;
        ASSERT_EQ(par[i], best[i]) << "depth " << depth << " element " << i;
        if (!cpu::GemmHasAvx512Bf16()) {
          ASSERT_EQ(best[i], want[i]) << "depth " << depth << " element " << i;
        }
        double mag = 0;
        for (int64_t k = 0; k < depth; ++k) {
          mag += std::fabs(double{xw[t * depth + k]} * ww[j * depth + k]);
        }
        ASSERT_LE(std::fabs(double{best[i]} - want[i]), 2e-5 * mag) << "depth " << depth;
      }
    }
  }
}

// Every element's arithmetic is fixed by its depth: a row scored alone (a
// decode step), in a batch at another position, or by two threads, gets the
// same bits; likewise a column alone.
TEST_F(CpuBf16Test, Bf16InputGemmIsBatchInvariant) {
  ThreadPool pool2(2);
  for (int64_t depth : {33, 576}) {
    const int64_t rows = 61, cols = 23;
    const std::vector<uint16_t> x = ToBf16(Random(rows * depth));
    const std::vector<uint16_t> w = ToBf16(Random(cols * depth));
    std::vector<float> all(rows * cols), par(rows * cols);
    cpu::GemmNT(cpu::ConstMatBf16{x.data(), depth}, {w.data(), depth}, {all.data(), cols}, rows,
                cols, depth);
    cpu::ParallelGemmNT(pool2, cpu::ConstMatBf16{x.data(), depth}, {w.data(), depth},
                        {par.data(), cols}, rows, cols, depth);
    for (int64_t t : {0, 5, 59, 60}) {
      std::vector<float> one(cols);
      cpu::GemmNT(cpu::ConstMatBf16{x.data() + t * depth, depth}, {w.data(), depth},
                  {one.data(), cols}, 1, cols, depth);
      for (int64_t j = 0; j < cols; ++j) {
        ASSERT_EQ(one[j], all[t * cols + j]) << "row " << t << " col " << j;
        ASSERT_EQ(par[t * cols + j], all[t * cols + j]) << "row " << t << " col " << j;
      }
    }
    for (int64_t j : {0, 13, 22}) {
      std::vector<float> col(rows);
      cpu::GemmNT(cpu::ConstMatBf16{x.data(), depth}, {w.data() + j * depth, depth},
                  {col.data(), 1}, rows, 1, depth);
      for (int64_t t = 0; t < rows; ++t) ASSERT_EQ(col[t], all[t * cols + j]) << t << "," << j;
    }
  }
}

// kBest runs vdpbf16ps exactly where the CPU reports AVX512_BF16: the
// instruction flushes a subnormal product to zero (as the ISA defines it),
// an F32 FMA keeps it, so one tiny product tells the paths apart.
TEST_F(CpuBf16Test, FeatureDetectionPicksTheDotProductWhereTheCpuHasIt) {
#if defined(__x86_64__)
  const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512bf16");
  EXPECT_EQ(cpu::GemmHasAvx512Bf16(), has);
#endif
  const uint16_t tiny = F32ToBf16(1e-20f);  // a normal BF16; its square is subnormal
  ASSERT_GT(Bf16ToF32(tiny), 0.0f);
  float widened = -1, best = -1;
  cpu::GemmNT(cpu::ConstMatBf16{&tiny, 1}, {&tiny, 1}, {&widened, 1}, 1, 1, 1,
              cpu::GemmPath::kWiden);
  cpu::GemmNT(cpu::ConstMatBf16{&tiny, 1}, {&tiny, 1}, {&best, 1}, 1, 1, 1);
  EXPECT_GT(widened, 0.0f);
  if (cpu::GemmHasAvx512Bf16()) {
    EXPECT_EQ(best, 0.0f) << "kBest did not run vdpbf16ps on an AVX512_BF16 CPU";
  } else {
    EXPECT_EQ(best, widened);
  }
  std::printf("AVX512_BF16: %s\n", cpu::GemmHasAvx512Bf16() ? "yes (vdpbf16ps)" : "no (widening)");
}

// What the mode changes, bounded: x and w are each rounded to BF16 (relative
// error at most 2^-9 each), so each product moves by at most about 2^-8 of its
// size, and a sum by 2^-8 of the sum of its terms' sizes, plus F32 rounding.
TEST_F(CpuBf16Test, MatMulRoundsItsInputAndStaysWithinTheBf16Bound) {
  CpuBackend exact(2), bf16(2, CpuPrecision::kBf16);
  const int64_t T = 37, K = 576, N = 45;
  const std::vector<float> x = Random(T * K), w = Random(N * K, 0.05f);
  Buffer xb = *exact.Allocate(DType::kF32, T, K);
  exact.CopyFromHost(x.data(), xb.tensor());
  Buffer w32 = *exact.UploadWeight(w.data(), DType::kF32, N, K);
  Buffer w16 = *bf16.UploadWeight(w.data(), DType::kF32, N, K);
  ASSERT_EQ(w16.tensor().dtype, DType::kBF16);
  Buffer o32 = *exact.Allocate(DType::kF32, T, N), o16 = *bf16.Allocate(DType::kF32, T, N);
  exact.MatMul(xb.tensor(), w32.tensor(), o32.tensor());
  bf16.MatMul(xb.tensor(), w16.tensor(), o16.tensor());

  // Exactly the BF16 GEMM of the rounded input and the rounded weights.
  const std::vector<uint16_t> xr = ToBf16(x), wr = ToBf16(w);
  std::vector<float> want(T * N);
  cpu::GemmNT(cpu::ConstMatBf16{xr.data(), K}, {wr.data(), K}, {want.data(), N}, T, N, K);
  double worst = 0;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < N; ++j) {
      const float got = o16.tensor().as<float>()[t * N + j];
      ASSERT_EQ(got, want[t * N + j]) << "row " << t << " col " << j;
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) mag += std::fabs(double{x[t * K + k]} * w[j * K + k]);
      const double err = std::fabs(double{got} - o32.tensor().as<float>()[t * N + j]);
      EXPECT_LE(err, 0.0040 * mag + 1e-6) << "row " << t << " col " << j;
      worst = std::max(worst, err / mag);
    }
  }
  // And not vacuously: the rounding does move the results.
  EXPECT_GT(worst, 1e-5);
}

TEST_F(CpuBf16Test, WeightsAreKeptAsTheModeSays) {
  CpuBackend bf16(1, CpuPrecision::kBf16);
  // A BF16 matrix is used in place: no copy, no widening.
  const std::vector<uint16_t> w = ToBf16(Random(6 * 4));
  Buffer in_place = *bf16.UploadWeight(w.data(), DType::kBF16, 6, 4);
  EXPECT_EQ(in_place.tensor().data, w.data());
  EXPECT_EQ(in_place.tensor().dtype, DType::kBF16);
  // F32 and F16 matrices are rounded to nearest even.
  const std::vector<float> f = {1.0f, 1.00390625f, 1.01171875f, -3.14159f, 65504.0f, 1e-30f};
  Buffer from_f32 = *bf16.UploadWeight(f.data(), DType::kF32, 2, 3);
  ASSERT_EQ(from_f32.tensor().dtype, DType::kBF16);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8 to 1 + 2^-6.
  const std::vector<float> want = {1.0f, 1.0f, 1.015625f, -3.140625f, 65536.0f, 1e-30f};
  for (int i = 0; i < 6; ++i) {
    const float got = Bf16ToF32(from_f32.tensor().as<uint16_t>()[i]);
    if (i == 5) {
      EXPECT_NEAR(got, want[i], 1e-32f);
    } else {
      EXPECT_EQ(got, want[i]) << i;
    }
  }
  const uint16_t half_one_third = 0x3555;  // F16 0.33325195...
  const std::vector<uint16_t> h = {half_one_third, half_one_third};
  Buffer from_f16 = *bf16.UploadWeight(h.data(), DType::kF16, 2, 1);
  EXPECT_EQ(from_f16.tensor().as<uint16_t>()[0], F32ToBf16(F16ToF32(half_one_third)));
  // Vectors (norm weights: one row) stay F32, widened exactly.
  Buffer norm = *bf16.UploadWeight(w.data(), DType::kBF16, 1, 24);
  ASSERT_EQ(norm.tensor().dtype, DType::kF32);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(norm.tensor().as<float>()[i], Bf16ToF32(w[i]));
}

TEST_F(CpuBf16Test, EmbedWidensBf16Rows) {
  CpuBackend bf16(1, CpuPrecision::kBf16);
  const std::vector<float> table = Random(5 * 8);
  Buffer t = *bf16.UploadWeight(table.data(), DType::kF32, 5, 8);
  Buffer out = *bf16.Allocate(DType::kF32, 3, 8);
  const std::vector<int32_t> tokens = {4, 0, 4};
  bf16.Embed(t.tensor(), tokens, out.tensor());
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(out.tensor().as<float>()[r * 8 + c],
                Bf16ToF32(F32ToBf16(table[tokens[r] * 8 + c])));
    }
  }
}

TEST_F(CpuBf16Test, BackendsShareWeightsOnlyAtOnePrecision) {
  CpuBackend a(1), b(1), c(1, CpuPrecision::kBf16), d(1, CpuPrecision::kBf16);
  EXPECT_TRUE(a.CanUseBuffersOf(b));
  EXPECT_TRUE(c.CanUseBuffersOf(d));
  EXPECT_FALSE(a.CanUseBuffersOf(c));
  EXPECT_FALSE(c.CanUseBuffersOf(a));
}

TEST(CpuPrecisionDeviceTest, DeviceStringsAndPrecisionFlag) {
  auto name = [](absl::string_view device, absl::string_view precision) -> std::string {
    absl::StatusOr<std::unique_ptr<Backend>> b = CreateBackend(device, 1, nullptr, precision);
    return b.ok() ? (*b)->name() : std::string(b.status().message());
  };
  EXPECT_EQ(name("cpu", ""), "cpu");
  EXPECT_EQ(name("cpu:fp32", ""), "cpu");
  EXPECT_EQ(name("cpu", "fp32"), "cpu");
  if (CpuPrecisionUnsupported(CpuPrecision::kBf16).empty()) {
    EXPECT_EQ(name("cpu:bf16", ""), "cpu:bf16");
    EXPECT_EQ(name("cpu", "bf16"), "cpu:bf16");
    EXPECT_EQ(name("cpu:bf16", "bf16"), "cpu:bf16");
  } else {
    EXPECT_NE(name("cpu:bf16", "").find("AVX2+FMA"), std::string::npos);
  }
  EXPECT_EQ(name("cpu:bf16", "fp32"),
            "--device cpu:bf16 names precision bf16 but --precision is fp32");
  EXPECT_NE(name("cpu:fp16", "").find("expected cpu, cpu:fp32 or cpu:bf16"), std::string::npos);
  EXPECT_EQ(name("cpu", "fp16"), "--precision 'fp16': expected fp32 or bf16");
  // A list: every CPU entry at the precision.
  absl::StatusOr<std::vector<std::unique_ptr<Backend>>> list =
      CreateBackends("cpu,cpu", 2, nullptr, "fp32");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)[1]->name(), "cpu");
}

}  // namespace
}  // namespace focal::kernels
