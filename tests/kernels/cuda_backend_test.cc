// SPDX-License-Identifier: Apache-2.0
// Every CUDA op against the CPU backend on odd shapes, in both precision
// modes (label cuda; skipped without a GPU).
//
// Tolerances. FP32 mode: the CPU result within a few FP32 ulps (or a
// summation-order bound for products). BF16 mode, the flash-attention rule:
// the GPU's maximum error against the FP32 CPU result must be at most twice
// the error of a low-precision CPU reference (the CPU op on BF16-rounded
// inputs and weights, its output rounded to BF16), plus a small floor.
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
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dtype.h"
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

float RoundBf16(float x) { return Bf16ToF32(F32ToBf16(x)); }
std::vector<float> RoundBf16(std::vector<float> v) {
  for (float& x : v) x = RoundBf16(x);
  return v;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::abs(double{a[i]} - double{b[i]});
    if (!(d <= m)) m = d;  // NaN propagates
  }
  return m;
}

// The flash-attention rule (see the file comment).
void ExpectBf16Rule(const std::vector<float>& gpu, const std::vector<float>& ref,
                    const std::vector<float>& lowp, double floor, const std::string& what) {
  const double e_gpu = MaxAbsDiff(gpu, ref), e_low = MaxAbsDiff(lowp, ref);
  EXPECT_LE(e_gpu, 2 * e_low + floor)
      << what << ": GPU error " << e_gpu << " vs BF16 reference error " << e_low;
}

// A (rows, cols) tensor of `dtype` on `b` holding v (rounded if BF16).
Buffer Put(Backend& b, const std::vector<float>& v, int64_t rows, int64_t cols,
           DType dtype = DType::kF32) {
  EXPECT_EQ(static_cast<int64_t>(v.size()), rows * cols);
  absl::StatusOr<Buffer> buf = b.Allocate(dtype, rows, cols);
  EXPECT_TRUE(buf.ok()) << buf.status();
  if (dtype == DType::kBF16) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = F32ToBf16(v[i]);
    b.CopyFromHost(h.data(), buf->tensor());
  } else {
    b.CopyFromHost(v.data(), buf->tensor());
  }
  return std::move(*buf);
}

std::vector<float> Get(Backend& b, Tensor t) {
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

  CpuBackend cpu_{2};
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

TEST_P(CudaBackendTest, EmbedMatchesCpu) {
  const int64_t V = 37, C = 67, T = 301;
  const std::vector<float> table = RandomVec(V * C);
  std::vector<int32_t> tokens(T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng_() % V);
  Buffer tc = Weight(cpu_, table, V, C), tg = Weight(*gpu_, table, V, C);
  Buffer oc = *cpu_.Allocate(DType::kF32, T, C), og = *gpu_->Allocate(DType::kF32, T, C);
  cpu_.Embed(tc.tensor(), tokens, oc.tensor());
  gpu_->Embed(tg.tensor(), tokens, og.tensor());
  const std::vector<float> ref = Get(cpu_, oc.tensor());
  EXPECT_EQ(Get(*gpu_, og.tensor()), bf16() ? RoundBf16(ref) : ref);
}

TEST_P(CudaBackendTest, RmsNormMatchesCpuInAndOutOfPlace) {
  const int64_t T = 300, C = 515;
  const std::vector<float> x = RandomVec(T * C, 3.0f), w = RandomVec(C);
  Buffer xc = Put(cpu_, x, T, C), xg = Put(*gpu_, x, T, C);
  Buffer wc = Weight(cpu_, w, 1, C), wg = Weight(*gpu_, w, 1, C);
  Buffer oc = *cpu_.Allocate(DType::kF32, T, C), og = *gpu_->Allocate(DType::kF32, T, C);
  cpu_.RmsNorm(xc.tensor(), wc.tensor(), 1e-5f, oc.tensor());
  gpu_->RmsNorm(xg.tensor(), wg.tensor(), 1e-5f, og.tensor());
  const std::vector<float> ref = Get(cpu_, oc.tensor()), got = Get(*gpu_, og.tensor());
  for (size_t i = 0; i < ref.size(); ++i) {
    // Only the double sum's order differs: at most an ulp or two.
    ASSERT_NEAR(got[i], ref[i], 3e-7 * std::abs(ref[i]) + 1e-30) << i;
  }
  gpu_->RmsNorm(xg.tensor(), wg.tensor(), 1e-5f, xg.tensor());  // in place
  EXPECT_EQ(Get(*gpu_, xg.tensor()), got);
}

TEST_P(CudaBackendTest, MatMulMatchesCpuOnOddShapes) {
  struct Shape {
    int64_t k, n;
  };
  for (const Shape& s : {Shape{200, 130}, Shape{77, 33}}) {
    const std::vector<float> w = RandomVec(s.n * s.k, 0.05f);
    Buffer wc = Weight(cpu_, w, s.n, s.k), wg = Weight(*gpu_, w, s.n, s.k);
    Buffer wlow = Weight(cpu_, RoundBf16(w), s.n, s.k);
    for (int64_t T : {1, 255, 256, 257, 700}) {
      const std::vector<float> x = RandomVec(T * s.k);
      Buffer xc = Put(cpu_, x, T, s.k), xg = Put(*gpu_, x, T, s.k);
      Buffer oc = *cpu_.Allocate(DType::kF32, T, s.n), og = *gpu_->Allocate(DType::kF32, T, s.n);
      cpu_.MatMul(xc.tensor(), wc.tensor(), oc.tensor());
      gpu_->MatMul(xg.tensor(), wg.tensor(), og.tensor());
      const std::vector<float> ref = Get(cpu_, oc.tensor()), got = Get(*gpu_, og.tensor());
      // The CPU product of the very operands the GPU used.
      std::vector<float> same_operands = ref;
      if (bf16()) {
        Buffer xl = Put(cpu_, RoundBf16(x), T, s.k), ol = *cpu_.Allocate(DType::kF32, T, s.n);
        cpu_.MatMul(xl.tensor(), wlow.tensor(), ol.tensor());
        same_operands = Get(cpu_, ol.tensor());
        ExpectBf16Rule(got, ref, RoundBf16(same_operands), 1e-6,
                       "MatMul T=" + std::to_string(T) + " K=" + std::to_string(s.k));
      }
      // Both sides sum the same products in FP32, in different orders.
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t n = 0; n < s.n; ++n) {
          double absdot = 0;
          for (int64_t k = 0; k < s.k; ++k)
            absdot += std::abs(double{x[t * s.k + k]} * w[n * s.k + k]);
          ASSERT_NEAR(got[t * s.n + n], same_operands[t * s.n + n], 4e-5 * absdot + 1e-7)
              << "T=" << T << " K=" << s.k << " row " << t << " col " << n;
        }
      }
    }
  }
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
        << "rows [" << start << ", " << start + len << ") alone differ from the "
        << T << "-row call";
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

TEST_P(CudaBackendTest, RopeMatchesCpu) {
  const int64_t T = 133;
  const int H = 3;
  for (int D : {16, 64, 128}) {
    std::vector<float> inv_freq(D / 2);
    for (int i = 0; i < D / 2; ++i) {
      inv_freq[i] = static_cast<float>(1.0 / std::pow(500000.0, 2.0 * i / D));
    }
    std::vector<int64_t> pos(T);
    for (auto& p : pos) p = static_cast<int64_t>(rng_() % 200000);
    pos[0] = 0;
    const std::vector<float> x = RandomVec(T * H * D);
    Buffer xc = Put(cpu_, x, T, H * D), xg = Put(*gpu_, x, T, H * D);
    cpu_.Rope(xc.tensor(), H, D, pos, inv_freq);
    gpu_->Rope(xg.tensor(), H, D, pos, inv_freq);
    const std::vector<float> ref = Get(cpu_, xc.tensor()), got = Get(*gpu_, xg.tensor());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(got[i], ref[i], 1e-6 * std::abs(ref[i]) + 1e-6) << "D=" << D << " i=" << i;
    }
    // Same positions again (the backend reuses its staged copy): same result.
    Buffer xg2 = Put(*gpu_, x, T, H * D);
    gpu_->Rope(xg2.tensor(), H, D, pos, inv_freq);
    EXPECT_EQ(Get(*gpu_, xg2.tensor()), got);
  }
}

// One packed attention problem: caches per sequence, packed queries,
// per-row scales.
struct AttnProblem {
  int H, Hkv, D;
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

AttnProblem MakeProblem(std::mt19937& rng, int H, int Hkv, int D,
                        const std::vector<SeqShape>& shapes, int64_t first_row = 0) {
  AttnProblem p;
  p.H = H;
  p.Hkv = Hkv;
  p.D = D;
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.02f, 0.6f);
  int64_t row = first_row;
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

// Runs `p` on `b` with tensors of `dtype`; `round_inputs` rounds q, k, v to
// BF16 first. Returns out (T, H*D) as floats.
std::vector<float> RunAttention(Backend& b, const AttnProblem& p, DType dtype, bool round_inputs) {
  auto prep = [&](const std::vector<float>& v) { return round_inputs ? RoundBf16(v) : v; };
  std::vector<Buffer> keep;
  std::vector<AttentionSeq> seqs = p.seqs;
  for (size_t s = 0; s < seqs.size(); ++s) {
    keep.push_back(Put(b, prep(p.k[s]), p.capacity[s], int64_t{p.Hkv} * p.D, dtype));
    seqs[s].k_cache = keep.back().tensor();
    keep.push_back(Put(b, prep(p.v[s]), p.capacity[s], int64_t{p.Hkv} * p.D, dtype));
    seqs[s].v_cache = keep.back().tensor();
  }
  Buffer q = Put(b, prep(p.q), p.T, int64_t{p.H} * p.D, dtype);
  Buffer out = *b.Allocate(dtype, p.T, int64_t{p.H} * p.D);
  AttentionArgs a;
  a.q = q.tensor();
  a.seqs = seqs;
  a.scale = p.scale;
  a.num_heads = p.H;
  a.num_kv_heads = p.Hkv;
  a.head_dim = p.D;
  a.out = out.tensor();
  b.Attention(a);
  std::vector<float> r = Get(b, out.tensor());
  const absl::Status s = b.Sync();
  EXPECT_TRUE(s.ok()) << s;
  return r;
}

struct HeadConfig {
  int H, Hkv, D;
};
const HeadConfig kHeadConfigs[] = {{4, 2, 64}, {8, 2, 128}, {4, 1, 16}, {6, 3, 24}, {2, 2, 80}};
const std::vector<SeqShape> kShapes = {{1, 0},   {63, 0},  {64, 0}, {65, 37}, {130, 128},
                                       {200, 0}, {1, 300}, {17, 5}, {129, 64}};

TEST_P(CudaBackendTest, AttentionMatchesCpu) {
  for (const HeadConfig& hc : kHeadConfigs) {
    const AttnProblem p = MakeProblem(rng_, hc.H, hc.Hkv, hc.D, kShapes);
    const std::string what = "H=" + std::to_string(hc.H) + " Hkv=" + std::to_string(hc.Hkv) +
                             " D=" + std::to_string(hc.D);
    const std::vector<float> ref = RunAttention(cpu_, p, DType::kF32, false);
    const std::vector<float> got = RunAttention(*gpu_, p, DType::kF32, false);
    if (bf16()) {
      const std::vector<float> lowp = RoundBf16(RunAttention(cpu_, p, DType::kF32, true));
      ExpectBf16Rule(got, ref, lowp, 1e-4, what);
    } else {
      EXPECT_LE(MaxAbsDiff(got, ref), 2e-5) << what;
    }
  }
}

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

TEST_P(CudaBackendTest, SwiGluAndAddMatchCpu) {
  const int64_t T = 1000, F = 37;
  const std::vector<float> g = RandomVec(T * F, 4.0f), u = RandomVec(T * F);
  Buffer gc = Put(cpu_, g, T, F), uc = Put(cpu_, u, T, F), gg = Put(*gpu_, g, T, F),
         ug = Put(*gpu_, u, T, F);
  Buffer oc = *cpu_.Allocate(DType::kF32, T, F), og = *gpu_->Allocate(DType::kF32, T, F);
  cpu_.SwiGlu(gc.tensor(), uc.tensor(), oc.tensor());
  gpu_->SwiGlu(gg.tensor(), ug.tensor(), og.tensor());
  const std::vector<float> ref = Get(cpu_, oc.tensor()), got = Get(*gpu_, og.tensor());
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(got[i], ref[i], 1e-6 * std::abs(ref[i]) + 1e-30) << i;  // expf's last ulps
  }
  gpu_->SwiGlu(gg.tensor(), ug.tensor(), gg.tensor());  // in place, as the Transformer
  EXPECT_EQ(Get(*gpu_, gg.tensor()), got);
  cpu_.Add(oc.tensor(), uc.tensor());
  gpu_->Add(og.tensor(), ug.tensor());
  const std::vector<float> sum_ref = Get(cpu_, uc.tensor());
  std::vector<float> sum_want(got.size());
  for (size_t i = 0; i < got.size(); ++i) sum_want[i] = u[i] + got[i];
  EXPECT_EQ(Get(*gpu_, ug.tensor()), sum_want);
}

TEST_P(CudaBackendTest, RowDotMatchesCpu) {
  const int64_t T = 50, C = 333;
  const std::vector<float> x = RandomVec(T * C), w = RandomVec(C);
  Buffer xc = Put(cpu_, x, T, C), xg = Put(*gpu_, x, T, C);
  Buffer wc = Weight(cpu_, w, 1, C), wg = Weight(*gpu_, w, 1, C);
  std::vector<float> ref(T), got(T);
  cpu_.RowDot(xc.tensor(), wc.tensor(), 0.25f, absl::MakeSpan(ref));
  gpu_->RowDot(xg.tensor(), wg.tensor(), 0.25f, absl::MakeSpan(got));
  for (int64_t t = 0; t < T; ++t) ASSERT_NEAR(got[t], ref[t], 1e-6 * std::abs(ref[t]) + 1e-7) << t;
}

TEST_P(CudaBackendTest, GatherRowsAndCopies) {
  const int64_t T = 40, C = 19;
  const std::vector<float> x = RandomVec(T * C);
  Buffer xg = Put(*gpu_, x, T, C), og = *gpu_->Allocate(DType::kF32, 4, C);
  const std::vector<int64_t> rows = {39, 0, 7, 7};
  gpu_->GatherRows(xg.tensor(), rows, og.tensor());
  const std::vector<float> got = Get(*gpu_, og.tensor());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t c = 0; c < C; ++c) ASSERT_EQ(got[r * C + c], x[rows[r] * C + c]);
  }
  // Overlapping rows of one buffer: memmove semantics, as the CPU backend.
  Buffer xc = Put(cpu_, x, T, C);
  cpu_.CopyRows(xc.tensor(), 0, xc.tensor(), 3, 10);
  gpu_->CopyRows(xg.tensor(), 0, xg.tensor(), 3, 10);
  cpu_.CopyRows(xc.tensor(), 20, xc.tensor(), 15, 12);
  gpu_->CopyRows(xg.tensor(), 20, xg.tensor(), 15, 12);
  EXPECT_EQ(Get(*gpu_, xg.tensor()), Get(cpu_, xc.tensor()));
}

TEST_P(CudaBackendTest, LogSoftmaxGatherMatchesCpuWithTies) {
  const int64_t R = 37, V = 32001;
  std::vector<float> logits = RandomVec(R * V, 3.0f);
  for (int64_t r = 0; r < R; ++r) {
    float* row = logits.data() + r * V;
    const float mx = *std::max_element(row, row + V);
    if (r % 3 == 0) row[5] = row[V - 2] = mx + 1.0f;  // a tie: the first index wins
  }
  std::fill(logits.begin() + 7 * V, logits.begin() + 8 * V, 0.5f);  // all equal
  std::vector<int32_t> targets(R);
  for (auto& t : targets) t = static_cast<int32_t>(rng_() % V);
  targets[0] = 5;
  Buffer lc = Put(cpu_, logits, R, V), lg = Put(*gpu_, logits, R, V);
  std::vector<double> lp_ref(R), lp(R);
  std::vector<int32_t> am_ref(R), am(R);
  cpu_.LogSoftmaxGather(lc.tensor(), targets, absl::MakeSpan(lp_ref), absl::MakeSpan(am_ref));
  gpu_->LogSoftmaxGather(lg.tensor(), targets, absl::MakeSpan(lp), absl::MakeSpan(am));
  EXPECT_EQ(am, am_ref);
  EXPECT_EQ(am[0], 5);
  EXPECT_EQ(am[7], 0);
  for (int64_t r = 0; r < R; ++r) EXPECT_NEAR(lp[r], lp_ref[r], 1e-9) << r;
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
