// SPDX-License-Identifier: Apache-2.0
// What the CUDA backend must do beyond matching the CPU op by op (which
// tests/kernels/backend_ops_test.cc checks for every op, in both precision
// modes): storage dtypes, bitwise batch invariance of GEMMs and attention,
// the BF16 cast cache, BF16 vs F32 attention storage, out-of-memory errors.
// Label cuda; skipped without a GPU.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/dtype.h"
#include "tests/kernels/backend_test_util.h"
#include "tests/testing/test_util.h"
#if FOCAL_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_probe.h"
#endif

namespace focal::kernels {
namespace {

#if FOCAL_HAVE_CUDA

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

}  // namespace

// Readable parameter values in test names and messages.
void PrintTo(CudaPrecision p, std::ostream* os) { *os << CudaPrecisionName(p); }

namespace {

using backend_test::AttnProblem;
using backend_test::Get;
using backend_test::MakeProblem;
using backend_test::Put;
using backend_test::RoundBf16;
using backend_test::RunAttention;
using backend_test::SeqShape;

class CudaBackendTest : public ::testing::TestWithParam<CudaPrecision> {
 protected:
  void SetUp() override {
    int count = 0;
    const char* err = CudaDeviceCount(&count);
    if (count == 0) GTEST_SKIP() << "no CUDA device (" << (err ? err : "0 devices") << ")";
    auto b = CreateCudaBackend({0, GetParam()});
    ASSERT_TRUE(b.ok()) << b.status();
    gpu_ = std::move(*b);
  }
  void TearDown() override {
    if (gpu_ != nullptr) {
      const absl::Status s = gpu_->Sync();
      EXPECT_TRUE(s.ok()) << s;
    }
  }

  bool bf16() const { return GetParam() == CudaPrecision::kBf16; }

  std::vector<float> RandomVec(size_t n, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng_);
    return v;
  }

  static Buffer Weight(Backend& b, const std::vector<float>& v, int64_t rows, int64_t cols) {
    absl::StatusOr<Buffer> w = b.UploadWeight(v.data(), DType::kF32, rows, cols);
    EXPECT_TRUE(w.ok()) << w.status();
    return std::move(*w);
  }

  std::unique_ptr<Backend> gpu_;
  std::mt19937 rng_{1234};
};

TEST_P(CudaBackendTest, NameSaysDeviceAndPrecision) {
  EXPECT_THAT(gpu_->name(), ::testing::StartsWith("cuda:0 ("));
  EXPECT_THAT(gpu_->name(), HasSubstr(bf16() ? "bf16)" : "fp32)"));
}

TEST_P(CudaBackendTest, UploadWeightStoresMatricesInThePrecisionsDtype) {
  const std::vector<float> m = RandomVec(5 * 7), vec = RandomVec(7);
  std::vector<uint16_t> m_bf16(m.size()), m_f16(m.size());
  for (size_t i = 0; i < m.size(); ++i) m_bf16[i] = F32ToBf16(m[i]);
  // F16 bits of small integers / 8 (exactly representable): i -> i/8.
  for (size_t i = 0; i < m.size(); ++i) m_f16[i] = static_cast<uint16_t>(0x3000 + i);

  Buffer wm = *gpu_->UploadWeight(m.data(), DType::kF32, 5, 7);
  Buffer wv = *gpu_->UploadWeight(vec.data(), DType::kF32, 1, 7);
  EXPECT_EQ(wm.tensor().dtype, bf16() ? DType::kBF16 : DType::kF32);
  EXPECT_EQ(wv.tensor().dtype, DType::kF32);  // vectors stay FP32 in both modes
  EXPECT_EQ(Get(*gpu_, wm.tensor()), bf16() ? RoundBf16(m) : m);
  EXPECT_EQ(Get(*gpu_, wv.tensor()), vec);

  Buffer from_bf16 = *gpu_->UploadWeight(m_bf16.data(), DType::kBF16, 5, 7);
  Buffer from_f16 = *gpu_->UploadWeight(m_f16.data(), DType::kF16, 5, 7);
  EXPECT_EQ(Get(*gpu_, from_bf16.tensor()), RoundBf16(m));
  std::vector<float> f16_want(m.size());
  for (size_t i = 0; i < m.size(); ++i) f16_want[i] = F16ToF32(m_f16[i]);
  EXPECT_EQ(Get(*gpu_, from_f16.tensor()), bf16() ? RoundBf16(f16_want) : f16_want);
}

// The batch invariance of GEMMs: a row's product is bit-identical whatever
// the call's row count, its position in the call (tile or padded tail) and
// its neighbours.
TEST_P(CudaBackendTest, MatMulRowsIndependentOfTheBatch) {
  const int64_t K = 192, N = 200, T = 700;
  const std::vector<float> w = RandomVec(N * K, 0.05f), x = RandomVec(T * K);
  Buffer wg = Weight(*gpu_, w, N, K), xg = Put(*gpu_, x, T, K);
  Buffer full = *gpu_->Allocate(DType::kF32, T, N);
  gpu_->MatMul(xg.tensor(), wg.tensor(), full.tensor());
  const std::vector<float> want = Get(*gpu_, full.tensor());
  struct Range {
    int64_t start, len;
  };
  for (const Range& r :
       {Range{0, 1}, Range{255, 3}, Range{300, 256}, Range{511, 189}, Range{7, 600}}) {
    const std::vector<float> sub(x.begin() + r.start * K, x.begin() + (r.start + r.len) * K);
    Buffer xs = Put(*gpu_, sub, r.len, K), os = *gpu_->Allocate(DType::kF32, r.len, N);
    gpu_->MatMul(xs.tensor(), wg.tensor(), os.tensor());
    const std::vector<float> got = Get(*gpu_, os.tensor());
    ASSERT_EQ(std::memcmp(got.data(), want.data() + r.start * N, got.size() * sizeof(float)), 0)
        << "rows [" << r.start << ", " << r.start + r.len << ") alone differ from the full call";
    // The same rows as a view into the full activation.
    Buffer ov = *gpu_->Allocate(DType::kF32, r.len, N);
    gpu_->MatMul(xg.tensor().Rows(r.start, r.len), wg.tensor(), ov.tensor());
    const std::vector<float> got_view = Get(*gpu_, ov.tensor());
    ASSERT_EQ(std::memcmp(got_view.data(), want.data() + r.start * N, got.size() * sizeof(float)),
              0)
        << "view rows [" << r.start << ", " << r.start + r.len << ")";
  }
}

// Many tiles in one call (more than the 16 the algorithm was pinned for, as
// in a 4K-token prefill): a persistent or stream-K kernel that split K by the
// grid would show up as rows that differ from the same rows computed alone.
TEST_P(CudaBackendTest, MatMulRowsIndependentOfTheBatchAcrossManyTiles) {
  const int64_t K = 256, N = 384, T = 17 * 256 + 40;
  const std::vector<float> w = RandomVec(N * K, 0.05f), x = RandomVec(T * K);
  Buffer wg = Weight(*gpu_, w, N, K), xg = Put(*gpu_, x, T, K);
  Buffer full = *gpu_->Allocate(DType::kF32, T, N);
  gpu_->MatMul(xg.tensor(), wg.tensor(), full.tensor());
  const std::vector<float> want = Get(*gpu_, full.tensor());
  for (const int64_t start : {int64_t{0}, int64_t{256 * 9 + 17}, T - 300}) {
    const int64_t len = 300;
    Buffer os = *gpu_->Allocate(DType::kF32, len, N);
    gpu_->MatMul(xg.tensor().Rows(start, len), wg.tensor(), os.tensor());
    const std::vector<float> got = Get(*gpu_, os.tensor());
    ASSERT_EQ(std::memcmp(got.data(), want.data() + start * N, got.size() * sizeof(float)), 0)
        << "rows [" << start << ", " << start + len << ") alone differ from the " << T
        << "-row call";
  }
}

// Consecutive products of one input (q/k/v, gate/up) share its BF16 cast;
// any write to the input in between must be seen.
TEST_P(CudaBackendTest, MatMulSeesInputChangesBetweenCalls) {
  const int64_t T = 300, K = 64, N = 48;
  const std::vector<float> w1 = RandomVec(N * K, 0.1f), w2 = RandomVec(N * K, 0.1f);
  const std::vector<float> x = RandomVec(T * K), x2 = RandomVec(T * K), d = RandomVec(T * K);
  Buffer g1 = Weight(*gpu_, w1, N, K), g2 = Weight(*gpu_, w2, N, K);
  Buffer xg = Put(*gpu_, x, T, K), o = *gpu_->Allocate(DType::kF32, T, N);
  auto fresh = [&](const std::vector<float>& xv, const Buffer& w) {
    Buffer xf = Put(*gpu_, xv, T, K), of = *gpu_->Allocate(DType::kF32, T, N);
    gpu_->MatMul(xf.tensor(), w.tensor(), of.tensor());
    return Get(*gpu_, of.tensor());
  };
  gpu_->MatMul(xg.tensor(), g1.tensor(), o.tensor());
  EXPECT_EQ(Get(*gpu_, o.tensor()), fresh(x, g1));
  gpu_->MatMul(xg.tensor(), g1.tensor(), o.tensor());
  gpu_->MatMul(xg.tensor(), g2.tensor(), o.tensor());
  EXPECT_EQ(Get(*gpu_, o.tensor()), fresh(x, g2));
  gpu_->CopyFromHost(x2.data(), xg.tensor());
  gpu_->MatMul(xg.tensor(), g1.tensor(), o.tensor());
  EXPECT_EQ(Get(*gpu_, o.tensor()), fresh(x2, g1));
  Buffer dg = Put(*gpu_, d, T, K);
  gpu_->MatMul(xg.tensor(), g2.tensor(), o.tensor());
  gpu_->Add(dg.tensor(), xg.tensor());  // x2 + d, written in place
  gpu_->MatMul(xg.tensor(), g2.tensor(), o.tensor());
  std::vector<float> sum(x2.size());
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = x2[i] + d[i];
  EXPECT_EQ(Get(*gpu_, o.tensor()), fresh(sum, g2));
}

// A MatMul whose output overwrites the input of an earlier, cached cast (here
// through a vector weight, which stays FP32 and so takes no cast of its own)
// must drop that cast: the next product of the input sees the new values.
TEST_P(CudaBackendTest, MatMulOutputOverwritingACachedInputDropsTheCast) {
  const int64_t T = 256, K = 64, N = 48;  // T a whole tile: no tail path
  const std::vector<float> w = RandomVec(N * K, 0.1f), wv = RandomVec(K, 0.1f);
  const std::vector<float> a = RandomVec(T * K), b = RandomVec(T * K);
  Buffer wg = Weight(*gpu_, w, N, K), wvg = Weight(*gpu_, wv, 1, K);
  Buffer ag = Put(*gpu_, a, T, K), bg = Put(*gpu_, b, T, K);
  Buffer o = *gpu_->Allocate(DType::kF32, T, N);
  gpu_->MatMul(ag.tensor(), wg.tensor(), o.tensor());  // caches a's cast (BF16 mode)
  // out = the first T floats of a's memory, viewed as (T, 1).
  const Tensor a_head{ag.tensor().data, DType::kF32, T, 1};
  gpu_->MatMul(bg.tensor(), wvg.tensor(), a_head);
  const std::vector<float> a_now = Get(*gpu_, ag.tensor());
  ASSERT_NE(a_now, a);
  gpu_->MatMul(ag.tensor(), wg.tensor(), o.tensor());
  Buffer fresh_in = Put(*gpu_, a_now, T, K), fresh_out = *gpu_->Allocate(DType::kF32, T, N);
  gpu_->MatMul(fresh_in.tensor(), wg.tensor(), fresh_out.tensor());
  EXPECT_EQ(Get(*gpu_, o.tensor()), Get(*gpu_, fresh_out.tensor()));
}

struct HeadConfig {
  int H, Hkv, D;
};
const HeadConfig kHeadConfigs[] = {{4, 2, 64}, {8, 2, 128}, {4, 1, 16}, {6, 3, 24}, {2, 2, 80}};
const std::vector<SeqShape> kShapes = {{1, 0},   {63, 0},  {64, 0}, {65, 37}, {130, 128},
                                       {200, 0}, {1, 300}, {17, 5}, {129, 64}};

// A sequence's attention output is bit-identical alone and packed (at
// another row offset, between other sequences), for both storage dtypes.
TEST_P(CudaBackendTest, AttentionOfASequenceIndependentOfItsBatch) {
  for (const HeadConfig& hc : kHeadConfigs) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      std::mt19937 rng_a(77);
      const AttnProblem packed = MakeProblem(rng_a, hc.H, hc.Hkv, hc.D, kShapes);
      const std::vector<float> all = RunAttention(*gpu_, packed, dtype, false);
      const int pick = 4;  // {130 rows, past 128}
      AttnProblem alone = packed;
      alone.seqs = {packed.seqs[pick]};
      alone.seqs[0].row_begin = 0;
      alone.k = {packed.k[pick]};
      alone.v = {packed.v[pick]};
      alone.capacity = {packed.capacity[pick]};
      const int64_t b0 = packed.seqs[pick].row_begin, n = packed.seqs[pick].rows;
      const int64_t ld = int64_t{hc.H} * hc.D;
      alone.q.assign(packed.q.begin() + b0 * ld, packed.q.begin() + (b0 + n) * ld);
      alone.scale.assign(packed.scale.begin() + b0, packed.scale.begin() + b0 + n);
      alone.T = n;
      const std::vector<float> one = RunAttention(*gpu_, alone, dtype, false);
      ASSERT_EQ(std::memcmp(one.data(), all.data() + b0 * ld, one.size() * sizeof(float)), 0)
          << "D=" << hc.D << " dtype=" << DTypeName(dtype);
    }
  }
}

// BF16 tensors hold exactly the values F32 tensors of BF16-rounded inputs
// hold, so both storage paths must agree (up to the output's rounding).
TEST_P(CudaBackendTest, AttentionBf16StorageAgreesWithF32Storage) {
  for (const HeadConfig& hc : kHeadConfigs) {
    const AttnProblem p = MakeProblem(rng_, hc.H, hc.Hkv, hc.D, kShapes);
    const std::vector<float> f32 = RunAttention(*gpu_, p, DType::kF32, true);
    const std::vector<float> b16 = RunAttention(*gpu_, p, DType::kBF16, false);
    EXPECT_EQ(b16, RoundBf16(f32)) << "D=" << hc.D;
  }
}

TEST_P(CudaBackendTest, OutOfMemoryIsResourceExhaustedAndNotSticky) {
  EXPECT_THAT(
      gpu_->Allocate(DType::kF32, int64_t{1} << 22, int64_t{1} << 20),
      StatusIs(absl::StatusCode::kResourceExhausted,
               ::testing::AllOf(HasSubstr("(4194304, 1048576) F32"), HasSubstr("--batch-tokens"))));
  EXPECT_TRUE(gpu_->Sync().ok());
  const std::vector<float> x = RandomVec(8);
  Buffer b = Put(*gpu_, x, 2, 4);
  EXPECT_EQ(Get(*gpu_, b.tensor()), x);
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaBackendTest,
                         ::testing::Values(CudaPrecision::kFp32, CudaPrecision::kBf16),
                         [](const ::testing::TestParamInfo<CudaPrecision>& info) {
                           return std::string(CudaPrecisionName(info.param));
                         });

#else  // !FOCAL_HAVE_CUDA

TEST(CudaBackendTest, Skipped) { GTEST_SKIP() << "built without CUDA (FOCAL_CUDA=OFF or no nvcc)"; }

#endif

}  // namespace
}  // namespace focal::kernels
