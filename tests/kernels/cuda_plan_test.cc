// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's host-side logic, which runs everywhere (label unit):
// --device parsing, GEMM row tiles, the attention work list and kernel
// choice, grid limits, the out-of-memory message and CreateBackend's answer
// on a machine without a GPU.
#include "kernels/cuda/cuda_plan.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/testing/test_util.h"
#if FOCAL_HAVE_CUDA
#include "kernels/cuda/cuda_probe.h"
#endif

namespace focal::kernels {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

int DeviceCount() {
#if FOCAL_HAVE_CUDA
  int count = 0;
  CudaDeviceCount(&count);
  return count;
#else
  return 0;
#endif
}

TEST(ParseCudaDeviceTest, AcceptsOrdinalAndPrecision) {
  struct Case {
    const char* device;
    const char* env;
    int ordinal;
    CudaPrecision precision;
  };
  const Case cases[] = {
      {"cuda", nullptr, 0, CudaPrecision::kBf16},
      {"cuda", "", 0, CudaPrecision::kBf16},
      {"cuda:3", nullptr, 3, CudaPrecision::kBf16},
      {"cuda:fp32", nullptr, 0, CudaPrecision::kFp32},
      {"cuda:1:fp32", nullptr, 1, CudaPrecision::kFp32},
      {"cuda:1:BF16", "fp32", 1, CudaPrecision::kBf16},  // the string beats the environment
      {"cuda:2", "fp32", 2, CudaPrecision::kFp32},
      {"cuda", "FP32", 0, CudaPrecision::kFp32},
  };
  for (const Case& c : cases) {
    auto spec = ParseCudaDevice(c.device, c.env);
    ASSERT_TRUE(spec.ok()) << c.device << ": " << spec.status();
    EXPECT_EQ(spec->ordinal, c.ordinal) << c.device;
    EXPECT_EQ(spec->precision, c.precision) << c.device;
  }
}

TEST(ParseCudaDeviceTest, RejectsMalformedStrings) {
  for (const char* bad : {"cuda:", "cuda:x", "cuda:0:0", "cuda:fp32:0", "cuda:0:fp32:1", "cudax",
                          "cuda:-1", "cuda:fp16", "cuda:0:", "cuda:99999999999", "gpu"}) {
    EXPECT_THAT(ParseCudaDevice(bad, nullptr),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cuda:N")))
        << bad;
  }
  EXPECT_THAT(ParseCudaDevice("cuda", "fp16"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("FOCAL_CUDA_PRECISION")));
  EXPECT_EQ(CudaPrecisionName(CudaPrecision::kBf16), "bf16");
  EXPECT_EQ(CudaPrecisionName(CudaPrecision::kFp32), "fp32");
}

TEST(PlanRowTilesTest, FullTilesAndTail) {
  auto p = PlanRowTiles(0);
  EXPECT_EQ(p.full, 0);
  EXPECT_EQ(p.tail, 0);
  p = PlanRowTiles(kCudaGemmRows - 1);
  EXPECT_EQ(p.full, 0);
  EXPECT_EQ(p.tail, kCudaGemmRows - 1);
  p = PlanRowTiles(kCudaGemmRows);
  EXPECT_EQ(p.full, 1);
  EXPECT_EQ(p.tail, 0);
  p = PlanRowTiles(3 * kCudaGemmRows + 7);
  EXPECT_EQ(p.full, 3);
  EXPECT_EQ(p.tail, 7);
  p = PlanRowTiles(int64_t{1} << 40, 256);  // no overflow in the arithmetic
  EXPECT_EQ(p.full, int64_t{1} << 32);
  EXPECT_EQ(p.tail, 0);
}

std::vector<AttnSeqShape> RandomSeqs(std::mt19937& rng, int n) {
  std::vector<AttnSeqShape> seqs;
  int64_t row = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t rows = static_cast<int64_t>(rng() % 300);  // zero-row sequences too
    const int64_t past = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 5000) : 0;
    seqs.push_back({row, rows, past});
    row += rows;
  }
  return seqs;
}

TEST(PlanAttentionWorkTest, CoversEveryRowOnceInSequenceRelativeBlocks) {
  std::mt19937 rng(3);
  for (int block : {kAttnTcBlockM, kAttnGenericBlockM, 1, 7}) {
    const std::vector<AttnSeqShape> seqs = RandomSeqs(rng, 25);
    const std::vector<AttnWorkItem> items = PlanAttentionWork(seqs, block);
    std::vector<std::vector<int>> covered(seqs.size());
    for (size_t s = 0; s < seqs.size(); ++s) covered[s].assign(seqs[s].rows, 0);
    for (const AttnWorkItem& it : items) {
      ASSERT_GE(it.seq, 0);
      ASSERT_LT(it.seq, static_cast<int>(seqs.size()));
      const AttnSeqShape& s = seqs[it.seq];
      ASSERT_EQ(it.q_start % block, 0) << "blocks are cut from the sequence's first row";
      ASSERT_LT(it.q_start, s.rows);
      for (int64_t r = it.q_start; r < std::min<int64_t>(it.q_start + block, s.rows); ++r) {
        ++covered[it.seq][r];
      }
    }
    for (size_t s = 0; s < seqs.size(); ++s) {
      for (int64_t r = 0; r < seqs[s].rows; ++r) {
        ASSERT_EQ(covered[s][r], 1) << "block " << block << " seq " << s << " row " << r;
      }
    }
  }
}

TEST(PlanAttentionWorkTest, LongestBlocksFirst) {
  std::mt19937 rng(5);
  const std::vector<AttnSeqShape> seqs = RandomSeqs(rng, 30);
  const std::vector<AttnWorkItem> items = PlanAttentionWork(seqs, kAttnTcBlockM);
  auto keys = [&](const AttnWorkItem& it) {
    const AttnSeqShape& s = seqs[it.seq];
    return s.past + std::min<int64_t>(it.q_start + kAttnTcBlockM, s.rows);
  };
  for (size_t i = 1; i < items.size(); ++i) {
    EXPECT_GE(keys(items[i - 1]), keys(items[i])) << i;
  }
}

TEST(PlanAttentionWorkTest, ASequencesBlocksDoNotDependOnTheBatch) {
  std::mt19937 rng(9);
  std::vector<AttnSeqShape> batch = RandomSeqs(rng, 12);
  batch[5] = {batch[5].row_begin, 200, 33};
  auto blocks_of = [](const std::vector<AttnSeqShape>& seqs, int seq) {
    std::set<int32_t> starts;
    for (const AttnWorkItem& it : PlanAttentionWork(seqs, kAttnTcBlockM)) {
      if (it.seq == seq) starts.insert(it.q_start);
    }
    return starts;
  };
  const std::vector<AttnSeqShape> alone = {{0, 200, 33}};
  EXPECT_EQ(blocks_of(batch, 5), blocks_of(alone, 0));
  EXPECT_EQ(blocks_of(alone, 0), (std::set<int32_t>{0, 64, 128, 192}));
}

TEST(AttnKernelChoiceTest, TensorCoresForBf16At64And128Only) {
  EXPECT_EQ(ChooseAttnKernel(CudaPrecision::kBf16, 64), AttnKernel::kTensorCore64);
  EXPECT_EQ(ChooseAttnKernel(CudaPrecision::kBf16, 128), AttnKernel::kTensorCore128);
  for (int d : {8, 16, 24, 32, 80, 96, 256}) {
    EXPECT_EQ(ChooseAttnKernel(CudaPrecision::kBf16, d), AttnKernel::kGeneric) << d;
  }
  for (int d : {64, 128}) {
    EXPECT_EQ(ChooseAttnKernel(CudaPrecision::kFp32, d), AttnKernel::kGeneric) << d;
  }
  EXPECT_EQ(AttnBlockRows(AttnKernel::kTensorCore128), kAttnTcBlockM);
  EXPECT_EQ(AttnBlockRows(AttnKernel::kGeneric), kAttnGenericBlockM);
}

TEST(AttnKernelChoiceTest, DimsPerLaneAndSharedMemoryFitTheDevice) {
  const std::map<int, int> want = {{0, 0},  {1, 1},   {32, 1},  {33, 2},  {64, 2},
                                   {65, 4}, {128, 4}, {129, 8}, {256, 8}, {257, 0}};
  for (const auto& [d, n] : want) EXPECT_EQ(AttnGenericDimsPerLane(d), n) << d;
  // Every launchable configuration fits the 163 KiB an sm_80 CTA may use.
  const size_t limit = 163 * 1024;
  for (int d = 1; d <= kAttnGenericMaxHeadDim; ++d) {
    EXPECT_LE(AttnSharedBytes(AttnKernel::kGeneric, d), limit) << d;
  }
  EXPECT_LE(AttnSharedBytes(AttnKernel::kTensorCore128, 128), limit);
  // Q + 2 stages of K and V, 64 rows of 136 BF16 each.
  EXPECT_EQ(AttnSharedBytes(AttnKernel::kTensorCore128, 128), size_t{5} * 64 * 136 * 2);
  EXPECT_EQ(AttnSharedBytes(AttnKernel::kTensorCore64, 64), size_t{5} * 64 * 72 * 2);
  EXPECT_EQ(AttnSharedBytes(AttnKernel::kGeneric, 16), size_t{(32 * 16 + 32 * 17 + 32 * 16) * 4});
}

TEST(AttnGridSizeTest, CountsCtasAndRefusesOversizedGrids) {
  auto ok = AttnGridSize(2048 + 100, 32);  // 128K tokens in 64-row blocks, 32 heads
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (2048 + 100) * 32);
  EXPECT_THAT(AttnGridSize(int64_t{1} << 26, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--batch-tokens")));
}

// A Llama-3.2-1B-shaped prefill chunk of 2048 tokens, by hand: the BF16
// cast of 8 tiles x 256 rows x 8192 inputs (32 MiB), the padded tail output
// 256 x 128256 x 4 (125.25 MiB), host results 2048 x 4, each twice, the
// 16 MiB staging ring, plus 2 MiB of rounding per live tensor (40 + 3).
TEST(CudaScratchBytesTest, OneBillionShapedPrefillChunk) {
  ForwardShape s;
  s.tokens = 2048;
  s.keys = 131072;
  s.max_inputs = 8192;
  s.max_outputs = 128256;
  s.buffers = 40;
  const int64_t want = 2 * (int64_t{8} * 256 * 8192 * 2 + int64_t{256} * 128256 * 4 + 2048 * 4) +
                       (int64_t{16} << 20) + (int64_t{2} << 20) * 43;
  EXPECT_EQ(CudaScratchBytes(s), want);
  // A partial tile is padded to a whole one; FP32 tails never exceed the cast.
  s.tokens = 2049;
  EXPECT_EQ(CudaScratchBytes(s) - want, 2 * (int64_t{256} * 8192 * 2 + 4));
  // The keys do not matter: attention has no scratch on the GPU.
  s.tokens = 2048;
  s.keys = 7;
  EXPECT_EQ(CudaScratchBytes(s), want);
}

TEST(CudaOutOfMemoryMessageTest, SaysWhatWasAskedAndWhatToLower) {
  const std::string m = CudaOutOfMemoryMessage("cuda:0 (NVIDIA H200)", size_t{3} << 30, DType::kF32,
                                               131072, 6144, size_t{1} << 29, size_t{140} << 30);
  EXPECT_THAT(
      m, AllOf(HasSubstr("cuda:0 (NVIDIA H200)"), HasSubstr("3072.0 MiB"),
               HasSubstr("(131072, 6144) F32"), HasSubstr("512.0 MiB free of 143360.0 MiB"),
               HasSubstr("--batch-tokens"), HasSubstr("--prefill-chunk"), HasSubstr("--lengths")));
}

TEST(CreateBackendTest, CudaWithoutADeviceIsAClearFailedPrecondition) {
  if (DeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present (covered by the cuda tests)";
#if FOCAL_HAVE_CUDA
  EXPECT_THAT(CreateBackend("cuda", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no usable CUDA device")));
  EXPECT_THAT(CreateBackend("cuda:1:fp32", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--device cuda:1:fp32")));
#else
  EXPECT_THAT(CreateBackend("cuda", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("built without CUDA")));
#endif
  auto a = CreateBackend("auto", 1);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->name(), "cpu");
}

TEST(CreateBackendTest, MalformedCudaStringsAreInvalidArgumentEverywhere) {
  EXPECT_THAT(CreateBackend("cuda:0:fp16", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cuda:N:PRECISION")));
  EXPECT_THAT(CreateBackend("tpu", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown --device")));
}

}  // namespace
}  // namespace focal::kernels
