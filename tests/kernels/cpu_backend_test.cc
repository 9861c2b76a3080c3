// SPDX-License-Identifier: Apache-2.0
// CPU ops against plain double-precision loops on deliberately odd shapes,
// plus the row-invariance property the batch invariance of scores rests on.
#include "kernels/cpu/cpu_backend.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/gemm.h"
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

  // Random x (rows x depth) and w (cols x depth) for the cpu:: GEMM entry
  // points, with their data pointers.
  struct GemmOperands {
    Buffer x, w;
    const float* xs;
    const float* ws;
  };
  GemmOperands Operands(int64_t rows, int64_t cols, int64_t depth) {
    GemmOperands o{Random(rows, depth), Random(cols, depth), nullptr, nullptr};
    o.xs = o.x.tensor().as<float>();
    o.ws = o.w.tensor().as<float>();
    return o;
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

// The same property over every position of calls of many sizes, at one and
// two threads, against the row computed alone on one thread. OpenBLAS's
// Haswell sgemm failed this (rows 6-11, 18-23, ... of a call rounded
// differently), which is why the backend has its own GEMM.
TEST_F(CpuBackendTest, MatMulRowBitIdenticalAtEveryPositionAndThreadCount) {
  const int64_t K = 101, N = 67;  // both with tails (K % 8, N % 4)
  Buffer w = Random(N, K), probe = Random(1, K);
  CpuBackend one(1);
  Buffer alone = *one.Allocate(DType::kF32, 1, N);
  one.MatMul(probe.tensor(), w.tensor(), alone.tensor());
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    for (int64_t T : {1, 5, 64, 65, 130, 257}) {
      Buffer x = Random(T, K), out = *be.Allocate(DType::kF32, T, N);
      float* xs = x.tensor().as<float>();
      std::vector<float> saved(K);
      for (int64_t pos = 0; pos < T; ++pos) {
        std::copy_n(xs + pos * K, K, saved.data());
        std::copy_n(probe.tensor().as<float>(), K, xs + pos * K);
        be.MatMul(x.tensor(), w.tensor(), out.tensor());
        ASSERT_EQ(std::memcmp(out.tensor().as<float>() + pos * N, alone.tensor().as<float>(),
                              N * sizeof(float)),
                  0)
            << "threads=" << threads << " T=" << T << " pos=" << pos;
        std::copy_n(saved.data(), K, xs + pos * K);
      }
    }
  }
}

// Row and column positions across w tiles (depth 577 gives 84-row tiles) and
// thread counts, on both kernels: a row's products never change.
TEST_F(CpuBackendTest, GemmNTInvariantAcrossTilesThreadsAndPaths) {
  const int64_t K = 577, N = 345, T = 53;
  const auto [x, w, xs, ws] = Operands(T, N, K);
  ThreadPool pool1(1), pool2(2);
  for (cpu::GemmPath path : {cpu::GemmPath::kBest, cpu::GemmPath::kPortable}) {
    std::vector<float> all(T * N), par1(T * N), par2(T * N);
    cpu::GemmNT({xs, K}, {ws, K}, {all.data(), N}, T, N, K, path);
    cpu::ParallelGemmNT(pool1, {xs, K}, {ws, K}, {par1.data(), N}, T, N, K, path);
    cpu::ParallelGemmNT(pool2, {xs, K}, {ws, K}, {par2.data(), N}, T, N, K, path);
    EXPECT_EQ(std::memcmp(all.data(), par1.data(), all.size() * 4), 0);
    EXPECT_EQ(std::memcmp(all.data(), par2.data(), all.size() * 4), 0);
    for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{2}, T - 1}) {
      for (int64_t j0 : {int64_t{0}, int64_t{1}, int64_t{83}, int64_t{170}}) {
        // Row t alone against w rows [j0, N): a different block and tile.
        std::vector<float> one(N - j0);
        cpu::GemmNT({xs + t * K, K}, {ws + j0 * K, K}, {one.data(), N}, 1, N - j0, K, path);
        ASSERT_EQ(std::memcmp(one.data(), all.data() + t * N + j0, one.size() * 4), 0)
            << "t=" << t << " j0=" << j0 << " portable=" << (path == cpu::GemmPath::kPortable);
      }
    }
  }
}

// Deep rows: the parallel GEMM sweeps groups of row blocks (two 48-row blocks
// at depth 2600, the last group short) across three w tiles. Every output is
// written, and equals the same product done in one call.
TEST_F(CpuBackendTest, ParallelGemmNTRowGroupsCoverEveryOutputOnce) {
  const int64_t K = 2600, N = 40, T = 200;
  const auto [x, w, xs, ws] = Operands(T, N, K);
  ThreadPool pool1(1), pool2(2);
  for (cpu::GemmPath path : {cpu::GemmPath::kBest, cpu::GemmPath::kPortable}) {
    std::vector<float> all(T * N);
    cpu::GemmNT({xs, K}, {ws, K}, {all.data(), N}, T, N, K, path);
    for (ThreadPool* pool : {&pool1, &pool2}) {
      std::vector<float> par(T * N, std::nanf(""));
      cpu::ParallelGemmNT(*pool, {xs, K}, {ws, K}, {par.data(), N}, T, N, K, path);
      EXPECT_EQ(std::memcmp(all.data(), par.data(), all.size() * 4), 0);
    }
  }
}

// The AVX2 kernel's sums, element by element: eight lanes, lane l fusing the
// products at k = l mod 8 in order of k (the depth zero-padded to a multiple
// of 8), then the tree ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Any blocking of
// the kernel (over rows, columns or depth) must keep exactly these sums.
TEST_F(CpuBackendTest, GemmNTAvx2IsItsLaneSums) {
  if (!cpu::GemmHasAvx2()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  for (int64_t K : {8, 576, 769, 1536, 1541, 2600}) {
    const int64_t T = 50, N = 37;  // partial 3 x 4 tiles at both edges
    const auto [x, w, xs, ws] = Operands(T, N, K);
    std::vector<float> out(T * N);
    cpu::GemmNT({xs, K}, {ws, K}, {out.data(), N}, T, N, K, cpu::GemmPath::kBest);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t j = 0; j < N; ++j) {
        float lane[8] = {};
        for (int64_t k = 0; k < (K + 7) / 8 * 8; ++k) {
          const float a = k < K ? xs[t * K + k] : 0.0f, b = k < K ? ws[j * K + k] : 0.0f;
          lane[k % 8] = std::fma(a, b, lane[k % 8]);
        }
        const float want = ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                           ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        ASSERT_EQ(std::memcmp(&out[t * N + j], &want, 4), 0)
            << "K=" << K << " t=" << t << " j=" << j << ": " << out[t * N + j] << " vs " << want;
      }
    }
  }
}

// Accuracy against double on awkward depths and widths, both kernels, within
// the first-order bound of their summation: (k/8 + 6) ulps of sum |x w|.
TEST_F(CpuBackendTest, GemmNTMatchesDoubleOnAwkwardShapes) {
  for (cpu::GemmPath path : {cpu::GemmPath::kBest, cpu::GemmPath::kPortable}) {
    for (int64_t K : {1, 7, 8, 9, 72, 577}) {
      for (int64_t N : {1, 3, 4, 5, 13}) {
        const int64_t T = 7;
        Buffer x = Random(T, K), w = Random(N, K);
        std::vector<float> out(T * N);
        cpu::GemmNT({x.tensor().as<float>(), K}, {w.tensor().as<float>(), K}, {out.data(), N}, T, N,
                    K, path);
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t j = 0; j < N; ++j) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; ++k) {
              const double p =
                  double{x.tensor().as<float>()[t * K + k]} * w.tensor().as<float>()[j * K + k];
              ref += p;
              mag += std::abs(p);
            }
            ASSERT_LE(std::abs(out[t * N + j] - ref), (K / 8 + 6) * 0x1p-24 * mag)
                << "K=" << K << " N=" << N << " t=" << t << " j=" << j;
          }
        }
      }
    }
  }
}

// The sequential GEMM (attention's Q.K^T and P.V), B given either way round
// (untransposed with a row stride wider than its width, as a KV cache's head
// slice), with a different depth per row: accurate, and each row equal to the
// same row computed alone (row blocks share loads, not sums).
TEST_F(CpuBackendTest, GemmSequentialRowsAreIndependentAndAccurate) {
  const int64_t R = 11, J = 600;  // J: several depth blocks
  std::uniform_int_distribution<int64_t> len_d(0, J);
  for (cpu::GemmPath path : {cpu::GemmPath::kBest, cpu::GemmPath::kPortable}) {
    for (bool transposed : {false, true}) {
      for (int64_t W : {1, 8, 10, 16, 24, 64, 70}) {
        const int64_t ldb = transposed ? J : W + 3;
        Buffer a = Random(R, J), b = transposed ? Random(W, J) : Random(J, ldb);
        const float* as = a.tensor().as<float>();
        const float* bs = b.tensor().as<float>();
        auto B = [&](int64_t j, int64_t c) { return bs[transposed ? c * J + j : j * ldb + c]; };
        std::vector<int64_t> len(R);
        for (int64_t& l : len) l = len_d(rng_);
        len[3] = J;
        std::vector<float> out(R * W);
        const cpu::ConstMat bm{bs, ldb};
        cpu::GemmSequential({.a = {as, J},
                             .b = bm,
                             .b_transposed = transposed,
                             .len = len.data(),
                             .out = {out.data(), W},
                             .rows = R,
                             .width = W,
                             .depth = J},
                            path);
        for (int64_t i = 0; i < R; ++i) {
          std::vector<float> alone(W);
          cpu::GemmSequential({.a = {as + i * J, J},
                               .b = bm,
                               .b_transposed = transposed,
                               .len = &len[i],
                               .out = {alone.data(), W},
                               .rows = 1,
                               .width = W,
                               .depth = J},
                              path);
          ASSERT_EQ(std::memcmp(alone.data(), out.data() + i * W, W * 4), 0)
              << "W=" << W << " i=" << i << " transposed=" << transposed;
          for (int64_t c = 0; c < W; ++c) {
            double ref = 0, mag = 0;
            for (int64_t j = 0; j < len[i]; ++j) {
              ref += double{as[i * J + j]} * B(j, c);
              mag += std::abs(double{as[i * J + j]} * B(j, c));
            }
            ASSERT_LE(std::abs(out[i * W + c] - ref), (len[i] + 2) * 0x1p-24 * mag)
                << "W=" << W << " i=" << i << " c=" << c;
          }
        }
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
        EXPECT_NEAR(x.tensor().as<float>()[t * H * D + h * D + i], a * cos(ang) - b * sin(ang),
                    1e-5);
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
        for (int d = 0; d < D; ++d)
          dot += double{q[(i * H + h) * D + d]} * k[(j * Hkv + g) * D + d];
        s[j] = dot * scale[i];
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (int64_t j = 0; j < n; ++j) {
        for (int d = 0; d < D; ++d)
          out[(i * H + h) * D + d] += s[j] / sum * v[(j * Hkv + g) * D + d];
      }
    }
  }
  return out;
}

TEST_F(CpuBackendTest, AttentionMatchesNaiveWithCacheAndPerRowScale) {
  const int H = 6, Hkv = 2, D = 10;
  // Two sequences in one packed call: one fresh (past 0, 150 rows: crosses an
  // attention block), one continuing a cache (past 37, 5 rows).
  struct S {
    int64_t past, rows;
  };
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
      ASSERT_NEAR(out.tensor().as<float>()[row * H * D + j], ref[j], 2e-6)
          << "seq " << i << " " << j;
    }
    row += ss[i].rows;
  }
}

// A query row's attention output is bit-identical whether its sequence is
// scored in one call, alone or behind another sequence, or in chunks
// continuing the cache (the scorer's prefix + continuation, chunked
// prefill), and at any thread count. Short chunks (one decode row, 20 rows)
// stack the two query heads of each KV head as rows of one block
// (CpuBackend::kMaxStackedRows); long ones take a head at a time: the same bits.
TEST_F(CpuBackendTest, AttentionRowIndependentOfChunkingBatchAndThreads) {
  const int H = 4, Hkv = 2, D = 64;
  const int64_t L = 300;  // crosses attention blocks
  Buffer q = Random(L, H * D), kc = Random(L, Hkv * D), vc = Random(L, Hkv * D);
  Buffer other_q = Random(70, H * D), okc = Random(70, Hkv * D), ovc = Random(70, Hkv * D);
  std::vector<float> scale(L + 70, 0.125f);
  auto run = [&](CpuBackend& be, std::vector<int64_t> cuts, bool behind_other) {
    std::vector<float> result(L * H * D);
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int64_t past = cuts[c], rows = cuts[c + 1] - cuts[c];
      const int64_t lead = behind_other ? 70 : 0;
      Buffer qb = *be.Allocate(DType::kF32, lead + rows, H * D);
      Buffer ob = *be.Allocate(DType::kF32, lead + rows, H * D);
      std::vector<AttentionSeq> seqs;
      if (behind_other) {
        std::copy_n(other_q.tensor().as<float>(), 70 * H * D, qb.tensor().as<float>());
        seqs.push_back({0, 70, 0, okc.tensor(), ovc.tensor()});
      }
      std::copy_n(q.tensor().as<float>() + past * H * D, rows * H * D,
                  qb.tensor().as<float>() + lead * H * D);
      seqs.push_back({lead, rows, past, kc.tensor(), vc.tensor()});
      AttentionArgs a{qb.tensor(), seqs, absl::MakeConstSpan(scale).subspan(0, lead + rows),
                      H,           Hkv,  D,
                      ob.tensor()};
      be.Attention(a);
      std::copy_n(ob.tensor().as<float>() + lead * H * D, rows * H * D,
                  result.data() + past * H * D);
    }
    return result;
  };
  CpuBackend one(1);
  const std::vector<float> ref = run(one, {0, L}, false);
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    for (const auto& cuts : std::vector<std::vector<int64_t>>{
             {0, L}, {0, 37, L}, {0, 1, 2, 129, 130, L}, {0, 200, 299, L}, {0, 100, 120, L}}) {
      for (bool behind : {false, true}) {
        const std::vector<float> got = run(be, cuts, behind);
        ASSERT_EQ(std::memcmp(got.data(), ref.data(), ref.size() * 4), 0)
            << "threads=" << threads << " cuts=" << cuts.size() << " behind=" << behind;
      }
    }
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
    EXPECT_NEAR(o.tensor().as<float>()[i], x / (1 + std::exp(-x)) * u.tensor().as<float>()[i],
                1e-6);
  }
  std::vector<float> before(o.tensor().as<float>(), o.tensor().as<float>() + 15);
  be_.Add(g.tensor(), o.tensor());
  for (int i = 0; i < 15; ++i) {
    EXPECT_FLOAT_EQ(o.tensor().as<float>()[i], before[i] + g.tensor().as<float>()[i]);
  }
}

TEST_F(CpuBackendTest, CopyRowsIntoBf16RoundsToNearestEven) {
  const std::vector<float> src = {1.0f, 1.00390625f, 1.01171875f, -3.3f, 0.0f, 65504.5f};
  auto s = be_.Allocate(DType::kF32, 3, 2);
  auto d = be_.Allocate(DType::kBF16, 4, 2);
  ASSERT_TRUE(s.ok() && d.ok());
  be_.CopyFromHost(src.data(), s->tensor());
  be_.CopyRows(s->tensor(), 0, d->tensor(), 1, 3);
  const auto* got = static_cast<const uint16_t*>(d->tensor().data);
  EXPECT_EQ(got[0], 0);  // row 0 untouched
  EXPECT_EQ(got[1], 0);
  for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(got[2 + i], F32ToBf16(src[i])) << i;
  // Ties to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 and rounds to 1;
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6 and rounds up.
  EXPECT_EQ(got[3], 0x3F80);
  EXPECT_EQ(got[4], 0x3F82);
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
