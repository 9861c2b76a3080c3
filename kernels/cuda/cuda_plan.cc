// SPDX-License-Identifier: Apache-2.0
#include "kernels/cuda/cuda_plan.h"

#include <algorithm>
#include <cinttypes>
#include <limits>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/check.h"

namespace focal::kernels {
namespace {

bool ParsePrecision(absl::string_view s, CudaPrecision* p) {
  const std::string lower = absl::AsciiStrToLower(s);
  if (lower == "bf16") {
    *p = CudaPrecision::kBf16;
    return true;
  }
  if (lower == "fp32") {
    *p = CudaPrecision::kFp32;
    return true;
  }
  return false;
}

absl::Status BadDevice(absl::string_view device) {
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --device '", device,
      "' (expected cuda, cuda:N, cuda:PRECISION or cuda:N:PRECISION with PRECISION bf16 or "
      "fp32)"));
}

std::string MiB(size_t bytes) {
  return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

absl::string_view CudaPrecisionName(CudaPrecision p) {
  return p == CudaPrecision::kBf16 ? "bf16" : "fp32";
}

absl::StatusOr<CudaDeviceSpec> ParseCudaDevice(absl::string_view device,
                                               const char* env_precision) {
  std::vector<absl::string_view> parts = absl::StrSplit(device, ':');
  if (parts.empty() || parts[0] != "cuda" || parts.size() > 3) return BadDevice(device);
  CudaDeviceSpec spec;
  bool have_ordinal = false, have_precision = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    const absl::string_view p = parts[i];
    int n = 0;
    if (!have_ordinal && !have_precision && !p.empty() &&
        std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        absl::SimpleAtoi(p, &n)) {
      spec.ordinal = n;
      have_ordinal = true;
    } else if (!have_precision && ParsePrecision(p, &spec.precision)) {
      have_precision = true;
    } else {
      return BadDevice(device);
    }
  }
  if (!have_precision && env_precision != nullptr && *env_precision != '\0') {
    if (!ParsePrecision(env_precision, &spec.precision)) {
      return absl::InvalidArgumentError(
          absl::StrCat("FOCAL_CUDA_PRECISION='", env_precision, "' is neither bf16 nor fp32"));
    }
  }
  return spec;
}

RowTilePlan PlanRowTiles(int64_t rows, int64_t tile_rows) {
  FOCAL_CHECK(rows >= 0 && tile_rows > 0);
  return {rows / tile_rows, rows % tile_rows};
}

std::vector<AttnWorkItem> PlanAttentionWork(absl::Span<const AttnSeqShape> seqs, int block_rows) {
  FOCAL_CHECK(block_rows > 0);
  struct Keyed {
    int64_t keys;
    AttnWorkItem item;
  };
  std::vector<Keyed> all;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const AttnSeqShape& q = seqs[s];
    FOCAL_CHECK(q.rows >= 0 && q.past >= 0);
    FOCAL_CHECK(q.rows <= std::numeric_limits<int32_t>::max() &&
                q.past + q.rows <= std::numeric_limits<int32_t>::max());
    for (int64_t b = 0; b < q.rows; b += block_rows) {
      const int64_t last = std::min<int64_t>(b + block_rows, q.rows);  // exclusive
      all.push_back({q.past + last, {static_cast<int32_t>(s), static_cast<int32_t>(b)}});
    }
  }
  std::sort(all.begin(), all.end(), [](const Keyed& a, const Keyed& b) {
    return std::make_tuple(-a.keys, a.item.seq, a.item.q_start) <
           std::make_tuple(-b.keys, b.item.seq, b.item.q_start);
  });
  std::vector<AttnWorkItem> items;
  items.reserve(all.size());
  for (const Keyed& k : all) items.push_back(k.item);
  return items;
}

AttnKernel ChooseAttnKernel(CudaPrecision precision, int head_dim) {
  if (precision == CudaPrecision::kBf16) {
    if (head_dim == 64) return AttnKernel::kTensorCore64;
    if (head_dim == 128) return AttnKernel::kTensorCore128;
  }
  return AttnKernel::kGeneric;
}

int AttnBlockRows(AttnKernel k) {
  return k == AttnKernel::kGeneric ? kAttnGenericBlockM : kAttnTcBlockM;
}

size_t AttnSharedBytes(AttnKernel k, int head_dim) {
  switch (k) {
    case AttnKernel::kTensorCore64:
      return AttnTcSharedBytes(64);
    case AttnKernel::kTensorCore128:
      return AttnTcSharedBytes(128);
    case AttnKernel::kGeneric:
      return AttnGenericSharedBytes(head_dim);
  }
  return 0;
}

int AttnGenericDimsPerLane(int head_dim) {
  if (head_dim < 1 || head_dim > kAttnGenericMaxHeadDim) return 0;
  for (int n : {1, 2, 4, 8}) {
    if (32 * n >= head_dim) return n;
  }
  return 0;
}

absl::StatusOr<int64_t> AttnGridSize(int64_t num_items, int num_heads) {
  FOCAL_CHECK(num_items >= 0 && num_heads > 0);
  const int64_t ctas = num_items * num_heads;
  if (ctas > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention call of ", num_items, " query blocks x ", num_heads,
                     " heads exceeds the 2^31-1 CTAs of a CUDA grid; lower --batch-tokens"));
  }
  return ctas;
}

int64_t CudaScratchBytes(const ForwardShape& s) {
  const RowTilePlan tiles = PlanRowTiles(s.tokens);
  const int64_t tile_rows = (tiles.full + (tiles.tail > 0 ? 1 : 0)) * kCudaGemmRows;
  const int64_t gemm_in = std::max(tile_rows * s.max_inputs * 2, kCudaGemmRows * s.max_inputs * 4);
  const int64_t gemm_out = kCudaGemmRows * s.max_outputs * 4;
  const int64_t host_out = std::max<int64_t>(s.tokens * 4, kCudaGemmRows * 12);
  constexpr int64_t kRounding = int64_t{2} << 20;
  // The staging ring for host index arrays (16 MiB unless a call stages
  // more than 8 MiB: 4x that, i.e. tokens and positions of a huge batch).
  const int64_t ring = std::max<int64_t>(int64_t{16} << 20, 4 * s.tokens * 8);
  return 2 * (gemm_in + gemm_out + host_out) + ring + kRounding * (s.buffers + 3);
}

std::string CudaOutOfMemoryMessage(absl::string_view device_name, size_t bytes, DType dtype,
                                   int64_t rows, int64_t cols, size_t free_bytes,
                                   size_t total_bytes) {
  return absl::StrCat("CUDA out of memory on ", device_name, ": cannot allocate ", MiB(bytes),
                      " for a (", rows, ", ", cols, ") ", DTypeName(dtype), " tensor (",
                      MiB(free_bytes), " free of ", MiB(total_bytes),
                      "); lower --batch-tokens (tokens per forward batch), --prefill-chunk or "
                      "--lengths (long-context), or use a smaller model");
}

}  // namespace focal::kernels
