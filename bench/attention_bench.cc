// SPDX-License-Identifier: Apache-2.0
// CUDA flash-attention forward throughput: causal prefill, head dims 128 and
// 64, one 16K-token sequence and the same tokens packed as 8 x 2K sequences,
// BF16 and FP32 tensors (the Transformer's activations are FP32 today), plus
// a decode-like case (one query row over a long cache). TFLOP/s with the
// FlashAttention convention: 4 * S^2 * H * D per sequence, halved for causal.
// Medians over --repeats timed calls after one warm-up, wall clock around
// Attention + Sync (the per-call host work is included).
//
// --sweep 4096,8192,32768 adds one-sequence BF16 causal cases at those
// lengths, head dims 128 and 64 (the 4K-32K table of the benchmarks document).
//
// Usage: attention_bench [--repeats N] [--tokens T] [--precision bf16|fp32]
//                        [--sweep L1,L2,...]
// The last lines are "RESULT name value" records for tests/device/run.sh.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "kernels/backend.h"
#include "kernels/dtype.h"

namespace {

using focal::kernels::AttentionArgs;
using focal::kernels::AttentionSeq;
using focal::kernels::Backend;
using focal::kernels::Buffer;
using focal::kernels::DType;
using Clock = std::chrono::steady_clock;
using focal::bench::Median;

Buffer RandomTensor(Backend& be, DType dtype, int64_t rows, int64_t cols, std::mt19937& rng) {
  absl::StatusOr<Buffer> b = be.Allocate(dtype, rows, cols);
  if (!b.ok()) {
    std::fprintf(stderr, "%s\n", b.status().ToString().c_str());
    std::exit(1);
  }
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int64_t n = rows * cols;
  if (dtype == DType::kBF16) {
    std::vector<uint16_t> h(n);
    for (auto& x : h) x = focal::kernels::F32ToBf16(d(rng));
    be.CopyFromHost(h.data(), b->tensor());
  } else {
    std::vector<float> h(n);
    for (auto& x : h) x = d(rng);
    be.CopyFromHost(h.data(), b->tensor());
  }
  return std::move(*b);
}

struct Case {
  std::string name;
  int64_t seq_len, num_seqs, past;  // num_seqs sequences of seq_len new rows after `past`
  int heads, kv_heads, head_dim;
  DType dtype;
};

struct Timing {
  double seconds, tflops, gbps;
};

// Median time, TFLOP/s and GB/s (K/V, Q and out bytes, each counted once).
Timing Run(Backend& be, const Case& c, int repeats) {
  std::mt19937 rng(1);
  const int64_t T = c.seq_len * c.num_seqs, kv = int64_t{c.kv_heads} * c.head_dim;
  Buffer q = RandomTensor(be, c.dtype, T, int64_t{c.heads} * c.head_dim, rng);
  absl::StatusOr<Buffer> out = be.Allocate(c.dtype, T, int64_t{c.heads} * c.head_dim);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<Buffer> caches;
  std::vector<AttentionSeq> seqs;
  for (int64_t s = 0; s < c.num_seqs; ++s) {
    caches.push_back(RandomTensor(be, c.dtype, c.past + c.seq_len, kv, rng));
    caches.push_back(RandomTensor(be, c.dtype, c.past + c.seq_len, kv, rng));
    seqs.push_back({s * c.seq_len, c.seq_len, c.past, caches[caches.size() - 2].tensor(),
                    caches.back().tensor()});
  }
  const std::vector<float> scale(T, 1.0f / (0.4f * std::sqrt(static_cast<float>(c.head_dim))));
  AttentionArgs a;
  a.q = q.tensor();
  a.seqs = seqs;
  a.scale = scale;
  a.num_heads = c.heads;
  a.num_kv_heads = c.kv_heads;
  a.head_dim = c.head_dim;
  a.out = out->tensor();
  std::vector<double> secs;
  for (int r = 0; r < repeats + 1; ++r) {
    const auto t0 = Clock::now();
    be.Attention(a);
    const absl::Status st = be.Sync();
    const auto t1 = Clock::now();
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), st.ToString().c_str());
      std::exit(1);
    }
    if (r > 0) secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  const double s = Median(secs);
  // Causal FLOPs: each query row i (0-based within its sequence) sees past + i + 1 keys.
  double pairs = 0;
  for (int64_t i = 0; i < c.seq_len; ++i) pairs += static_cast<double>(c.past + i + 1);
  const double flops = 4.0 * pairs * c.heads * c.head_dim * c.num_seqs;
  const double bytes = static_cast<double>(focal::kernels::DTypeSize(c.dtype)) * c.num_seqs *
                       (2.0 * (c.past + c.seq_len) * kv + 2.0 * c.seq_len * c.heads * c.head_dim);
  return {s, flops / s / 1e12, bytes / s / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 10;
  int64_t tokens = 16384;
  std::string precision = "bf16";
  std::vector<int64_t> sweep;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--sweep")) {
      for (const char* p = argv[i + 1]; *p != '\0';) {
        char* end = nullptr;
        const long long v = std::strtoll(p, &end, 10);
        if (end == p || v <= 0) {
          std::fprintf(stderr, "--sweep wants positive lengths separated by commas: %s\n",
                       argv[i + 1]);
          return 2;
        }
        sweep.push_back(v);
        p = *end == ',' ? end + 1 : end;
      }
    }
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--tokens")) tokens = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--precision")) precision = argv[i + 1];
  }
  auto be = focal::kernels::CreateBackend("cuda:0:" + precision, 0);
  if (!be.ok()) {
    std::fprintf(stderr, "%s\n", be.status().ToString().c_str());
    return 1;
  }
  std::printf("CUDA attention benchmark on %s: causal, median of %d runs\n\n",
              (*be)->name().c_str(), repeats);
  std::printf("| case | new tokens | heads (kv) | head dim | tensors | ms | TFLOP/s | GB/s |\n");
  std::printf("|---|---:|---:|---:|---|---:|---:|---:|\n");
  std::vector<Case> cases;
  for (DType dt : {DType::kBF16, DType::kF32}) {
    const char* tn = dt == DType::kBF16 ? "bf16" : "f32";
    cases.push_back({std::string("prefill_1x") + std::to_string(tokens / 1024) + "K_d128_" + tn,
                     tokens, 1, 0, 32, 8, 128, dt});
    cases.push_back({std::string("prefill_1x") + std::to_string(tokens / 1024) + "K_d64_" + tn,
                     tokens, 1, 0, 32, 8, 64, dt});
    cases.push_back({std::string("prefill_8x2K_d128_") + tn, tokens / 8, 8, 0, 32, 8, 128, dt});
  }
  cases.push_back({"decode_1row_past32K_d128_bf16", 1, 8, 32768, 32, 8, 128, DType::kBF16});
  for (int64_t len : sweep) {
    for (int d : {128, 64}) {
      cases.push_back(
          {"prefill_1x" + std::to_string(len / 1024) + "K_d" + std::to_string(d) + "_bf16", len, 1,
           0, 32, 8, d, DType::kBF16});
    }
  }
  std::vector<std::pair<std::string, double>> results;
  for (const Case& c : cases) {
    const Timing t = Run(**be, c, repeats);
    std::printf("| %s | %lld | %d (%d) | %d | %s | %.3f | %.1f | %.0f |\n", c.name.c_str(),
                static_cast<long long>(c.seq_len * c.num_seqs), c.heads, c.kv_heads, c.head_dim,
                focal::kernels::DTypeName(c.dtype).data(), t.seconds * 1e3, t.tflops, t.gbps);
    results.push_back({c.name, t.tflops});
  }
  std::printf("\n");
  for (const auto& [name, v] : results) {
    std::printf("RESULT attention_tflops_%s %.2f\n", name.c_str(), v);
  }
  return 0;
}
