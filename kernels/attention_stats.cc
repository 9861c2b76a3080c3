// SPDX-License-Identifier: Apache-2.0
// The default Backend::AttentionStats: host copies of one query row and the
// keys it sees, scored in double. Used by every backend that does not fuse
// the reduction into its own attention kernel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/check.h"
#include "kernels/backend.h"
#include "kernels/dtype.h"

namespace focal::kernels {
namespace {

// A host copy of `t` as floats, whatever its dtype.
std::vector<float> HostFloats(Backend& b, Tensor t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype == DType::kF32) {
    b.CopyToHost(t, out.data());
    return out;
  }
  std::vector<uint16_t> raw(out.size());
  b.CopyToHost(t, raw.data());
  for (size_t i = 0; i < raw.size(); ++i) {
    out[i] = t.dtype == DType::kBF16 ? Bf16ToF32(raw[i]) : F16ToF32(raw[i]);
  }
  return out;
}

}  // namespace

void Backend::AttentionStats(const AttentionArgs& a, absl::Span<const AttentionProbe> probes,
                             absl::Span<float> entropy, absl::Span<float> mass) {
  const int H = a.num_heads, Hkv = a.num_kv_heads, D = a.head_dim;
  FOCAL_CHECK(H % Hkv == 0 && a.q.cols == int64_t{H} * D);
  FOCAL_CHECK(entropy.size() == probes.size() * H && mass.size() == probes.size() * H);
  const int group = H / Hkv;
  for (size_t p = 0; p < probes.size(); ++p) {
    const AttentionProbe& pr = probes[p];
    FOCAL_CHECK(pr.seq >= 0 && pr.seq < static_cast<int>(a.seqs.size()));
    const AttentionSeq& s = a.seqs[pr.seq];
    FOCAL_CHECK(pr.row >= 0 && pr.row < s.rows);
    const int64_t qrow = s.row_begin + pr.row;
    const int64_t n = s.past + pr.row + 1;  // keys visible to this row
    const std::vector<float> q = HostFloats(*this, a.q.Rows(qrow, 1));
    const double scale = a.scale[qrow];
    // Scores of every head, keys copied a block at a time (bounded host
    // memory even for a 128K-token cache).
    std::vector<double> logits(static_cast<size_t>(H) * n);
    constexpr int64_t kBlock = 4096;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      const std::vector<float> k = HostFloats(*this, s.k_cache.Rows(b, len));
      for (int h = 0; h < H; ++h) {
        const float* qh = q.data() + int64_t{h} * D;
        const int64_t koff = int64_t{h / group} * D;
        for (int64_t j = 0; j < len; ++j) {
          const float* kj = k.data() + j * s.k_cache.cols + koff;
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += double{qh[d]} * kj[d];
          logits[h * n + b + j] = dot * scale;
        }
      }
    }
    for (int h = 0; h < H; ++h) {
      const double* lh = logits.data() + h * n;
      double mx = -INFINITY;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, lh[j]);
      double z = 0, ez = 0;  // sum e^(l - mx) and sum e^(l - mx) * (l - mx)
      for (int64_t j = 0; j < n; ++j) {
        const double e = std::exp(lh[j] - mx);
        z += e;
        ez += e * (lh[j] - mx);
      }
      // H = -sum p log p = log z - E[l - mx].
      entropy[p * H + h] = static_cast<float>(std::log(z) - ez / z);
      double m = 0;
      for (const auto& [b, e] : pr.key_ranges) {
        for (int64_t j = std::max<int64_t>(b, 0); j < std::min(e, n); ++j) {
          m += std::exp(lh[j] - mx);
        }
      }
      mass[p * H + h] = static_cast<float>(m / z);
    }
  }
}

}  // namespace focal::kernels
