// SPDX-License-Identifier: Apache-2.0
// Prefill of a real GGUF checkpoint, driven line by line on stdin so that
// bench/llamacpp_compare.py can take turns with llama.cpp in one run.
//
// Usage: gguf_prefill_bench --threads N --tokens FILE [--profile] LABEL=PATH[@bf16]...
// A model whose path ends in "@bf16" runs on the CPU backend's BF16 mode
// (cpu:bf16), the others on the exact F32 mode.
// FILE holds whitespace-separated token ids. Each stdin line
// "LABEL MODE T" runs one forward pass over the first T ids on that model,
// scoring the last row (MODE "last") or every row (MODE "all": log-prob of
// each next token, what a perplexity/loglikelihood pass over the whole prompt
// computes), and answers "LABEL MODE T SECONDS LOGPROB_SUM". "LABEL decode T
// G" prefills T ids (as "last") into a cache with room for G more, then runs
// G one-token forward passes on the next ids (greedy decoding's work per
// step: one row through every layer and the LM head), and answers "LABEL
// decode T G PREFILL_SECONDS DECODE_SECONDS". Loading happens before the
// first line and is not timed. "profile" prints (to stdout, then "end") the
// time per backend op since the previous "profile", with each linear-layer
// shape's GFLOP/s, OpenBLAS's sgemm on the same shape beside it, and the
// forward passes' share of what sgemm would need for their GEMMs.
// --paired-sgemm: every MatMul of the passes also runs OpenBLAS's sgemm on the
// same operands into a scratch output, the two taking turns in which goes
// first, so the table compares them in place (same data, same cache state)
// rather than against sgemm on warm isolated buffers.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "bench/bench_util.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"

namespace {

using focal::kernels::AttentionArgs;
using focal::kernels::AttentionProbe;
using focal::kernels::Backend;
using focal::kernels::Buffer;
using focal::kernels::CpuBackend;
using focal::kernels::DType;
using focal::kernels::ForwardShape;
using focal::kernels::Tensor;
using Clock = std::chrono::steady_clock;

// The CPU backend with a stopwatch around every op (the CPU backend is
// synchronous, so wall time per call is the op's time). MatMul is also
// split by shape (M, N, K) for the GEMM table.
class TimedBackend : public Backend {
 public:
  TimedBackend(int threads, focal::kernels::CpuPrecision precision) : cpu_(threads, precision) {}

  struct Stat {
    double seconds = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Stat> ops;
  std::map<std::tuple<int64_t, int64_t, int64_t>, Stat> gemms;   // (M, N, K)
  std::map<std::tuple<int64_t, int64_t, int64_t>, Stat> paired;  // sgemm, --paired-sgemm
  bool pair_sgemm = false;

  double PairedSeconds() const {
    double s = 0;
    for (const auto& [shape, st] : paired) s += st.seconds;
    return s;
  }

  std::string name() const override { return cpu_.name(); }
  absl::StatusOr<Buffer> Allocate(DType dtype, int64_t rows, int64_t cols) override {
    return cpu_.Allocate(dtype, rows, cols);
  }
  absl::StatusOr<Buffer> UploadWeight(const void* host, DType src, int64_t rows,
                                      int64_t cols) override {
    return cpu_.UploadWeight(host, src, rows, cols);
  }
  void CopyFromHost(const void* src, Tensor dst) override {
    Time("CopyFromHost", [&] { cpu_.CopyFromHost(src, dst); });
  }
  void CopyToHost(Tensor src, void* dst) override {
    Time("CopyToHost", [&] { cpu_.CopyToHost(src, dst); });
  }
  void CopyRows(Tensor src, int64_t src_row, Tensor dst, int64_t dst_row, int64_t n) override {
    Time("CopyRows", [&] { cpu_.CopyRows(src, src_row, dst, dst_row, n); });
  }
  void Embed(Tensor table, absl::Span<const int32_t> tokens, Tensor out) override {
    Time("Embed", [&] { cpu_.Embed(table, tokens, out); });
  }
  void RmsNorm(Tensor x, Tensor w, float eps, Tensor out) override {
    Time("RmsNorm", [&] { cpu_.RmsNorm(x, w, eps, out); });
  }
  void MatMul(Tensor x, Tensor w, Tensor out) override {
    const std::tuple<int64_t, int64_t, int64_t> shape{x.rows, w.rows, x.cols};
    const bool pair = pair_sgemm && x.dtype == DType::kF32 && w.dtype == DType::kF32;
    Stat& g = gemms[shape];
    Stat& b = paired[shape];
    auto ours = [&] {
      const double s = Time("MatMul", [&] { cpu_.MatMul(x, w, out); });
      g.seconds += s;
      ++g.calls;
    };
    auto blas = [&] {
      scratch_.resize(x.rows * w.rows);
      const auto t0 = Clock::now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, x.rows, w.rows, x.cols, 1.0f,
                  x.as<float>(), x.cols, w.as<float>(), w.cols, 0.0f, scratch_.data(), w.rows);
      b.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      ++b.calls;
    };
    if (!pair) return ours();
    // Whichever runs second finds the operands in cache: take turns.
    if (turn_++ % 2 == 0) {
      ours();
      blas();
    } else {
      blas();
      ours();
    }
  }
  void Rope(Tensor x, int num_heads, int head_dim, absl::Span<const int64_t> positions,
            absl::Span<const float> inv_freq) override {
    Time("Rope", [&] { cpu_.Rope(x, num_heads, head_dim, positions, inv_freq); });
  }
  void Attention(const AttentionArgs& args) override {
    Time("Attention", [&] { cpu_.Attention(args); });
  }
  void SwiGlu(Tensor gate, Tensor up, Tensor out) override {
    Time("SwiGlu", [&] { cpu_.SwiGlu(gate, up, out); });
  }
  void Add(Tensor x, Tensor inout) override {
    Time("Add", [&] { cpu_.Add(x, inout); });
  }
  void RowDot(Tensor x, Tensor w, float bias, absl::Span<float> out) override {
    Time("RowDot", [&] { cpu_.RowDot(x, w, bias, out); });
  }
  void GatherRows(Tensor x, absl::Span<const int64_t> rows, Tensor out) override {
    Time("GatherRows", [&] { cpu_.GatherRows(x, rows, out); });
  }
  void LogSoftmaxGather(Tensor logits, absl::Span<const int32_t> targets,
                        absl::Span<double> logprob, absl::Span<int32_t> argmax) override {
    Time("LogSoftmaxGather", [&] { cpu_.LogSoftmaxGather(logits, targets, logprob, argmax); });
  }
  void AttentionStats(const AttentionArgs& args, absl::Span<const AttentionProbe> probes,
                      absl::Span<float> entropy, absl::Span<float> mass) override {
    cpu_.AttentionStats(args, probes, entropy, mass);
  }
  int64_t AvailableMemoryBytes() override { return cpu_.AvailableMemoryBytes(); }
  int64_t ScratchBytes(const ForwardShape& shape) const override {
    return cpu_.ScratchBytes(shape);
  }
  absl::Status Sync() override { return cpu_.Sync(); }

 private:
  template <typename Fn>
  double Time(const char* op, Fn fn) {
    const auto t0 = Clock::now();
    fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    Stat& st = ops[op];
    st.seconds += s;
    ++st.calls;
    return s;
  }

  CpuBackend cpu_;
  std::vector<float> scratch_;
  int64_t turn_ = 0;
};

// Median seconds of OpenBLAS's sgemm on out(M,N) = a(M,K) . b(N,K)^T.
double SgemmSeconds(int64_t M, int64_t N, int64_t K, int repeats) {
  std::vector<float> a(M * K), b(N * K), c(M * N);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (float& v : a) v = d(rng);
  for (float& v : b) v = d(rng);
  std::vector<double> secs;
  for (int r = 0; r < repeats + 1; ++r) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K,
                0.0f, c.data(), N);
    if (r > 0) secs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return focal::bench::Median(secs);
}

void PrintProfile(TimedBackend& be, double forward_seconds, int64_t passes) {
  std::printf("%lld forward passes, %.3f s\n\n| op | calls | s | share |\n|---|---:|---:|---:|\n",
              static_cast<long long>(passes), forward_seconds);
  double in_ops = 0;
  for (const auto& [name, st] : be.ops) in_ops += st.seconds;
  for (const auto& [name, st] : be.ops) {
    std::printf("| %s | %lld | %.3f | %.1f%% |\n", name.c_str(), static_cast<long long>(st.calls),
                st.seconds, 100 * st.seconds / forward_seconds);
  }
  std::printf("| (outside ops) | | %.3f | %.1f%% |\n\n", forward_seconds - in_ops,
              100 * (forward_seconds - in_ops) / forward_seconds);
  std::printf(
      "| GEMM (M x N x K) | calls | ours s | ours GFLOP/s | sgemm GFLOP/s | ours/sgemm |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  double ours_total = 0, blas_total = 0;
  for (const auto& [shape, st] : be.gemms) {
    const auto [m, n, k] = shape;
    const double flop = 2.0 * m * n * k;
    // Small calls are timed with more repeats; all after a short pause so
    // our pool's and OpenBLAS's threads do not overlap.
    const auto p = be.paired.find(shape);
    const bool in_place = p != be.paired.end() && p->second.calls == st.calls;
    if (!in_place) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double blas =
        in_place ? p->second.seconds / p->second.calls : SgemmSeconds(m, n, k, flop < 1e9 ? 7 : 3);
    const double ours = st.seconds / st.calls;
    ours_total += st.seconds;
    blas_total += blas * st.calls;
    std::printf("| %lld x %lld x %lld | %lld | %.3f | %.1f | %.1f | %.0f%% |\n",
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                static_cast<long long>(st.calls), st.seconds, flop / ours / 1e9, flop / blas / 1e9,
                100 * blas / ours);
  }
  std::printf(
      "\nGEMMs: ours %.3f s, sgemm would take %.3f s (%.0f%%); whole forward passes "
      "%.3f s: sgemm's GEMM time is %.0f%% of it\n",
      ours_total, blas_total, 100 * blas_total / ours_total, forward_seconds,
      100 * blas_total / forward_seconds);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool paired = false;
  std::string tokens_path;
  std::vector<std::pair<std::string, std::string>> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--paired-sgemm") {
      paired = true;
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--tokens" && i + 1 < argc) {
      tokens_path = argv[++i];
    } else if (const size_t eq = a.find('='); eq != std::string::npos && a[0] != '-') {
      models.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    } else {
      std::fprintf(stderr,
                   "usage: %s --threads N --tokens FILE [--paired-sgemm] LABEL=PATH.gguf...\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<int32_t> tokens;
  {
    std::ifstream f(tokens_path);
    for (int32_t t; f >> t;) tokens.push_back(t);
    if (tokens.empty()) {
      std::fprintf(stderr, "no token ids in --tokens file '%s'\n", tokens_path.c_str());
      return 2;
    }
  }
  // One timed backend per precision that some model asks for.
  std::map<std::string, std::unique_ptr<TimedBackend>> backends;
  std::map<std::string, std::unique_ptr<focal::model::LanguageModel>> loaded;
  std::map<std::string, std::string> precision_of;  // label -> backends' key
  openblas_set_num_threads(threads > 0 ? threads : focal::UsableCores());
  for (auto [label, path] : models) {
    std::string precision = "fp32";
    if (path.size() > 5 && path.ends_with("@bf16")) {
      precision = "bf16";
      path.resize(path.size() - 5);
    }
    auto& be = backends[precision];
    if (be == nullptr) {
      be = std::make_unique<TimedBackend>(threads, precision == "bf16"
                                                       ? focal::kernels::CpuPrecision::kBf16
                                                       : focal::kernels::CpuPrecision::kF32);
      be->pair_sgemm = paired && precision == "fp32";  // sgemm reads F32 weights
    }
    auto m = focal::model::LanguageModel::Load(path, *be);
    if (!m.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(m.status().message()).c_str());
      return 1;
    }
    loaded[label] = std::move(*m);
    precision_of[label] = precision;
  }
  auto paired_seconds = [&] {
    double s = 0;
    for (const auto& [p, be] : backends) s += be->PairedSeconds();
    return s;
  };
  std::printf("ready\n");
  std::fflush(stdout);
  std::map<std::string, double> forward_seconds;  // per precision, since "profile"
  std::map<std::string, int64_t> passes;
  for (std::string line; std::getline(std::cin, line);) {
    if (line == "profile") {
      for (auto& [precision, be] : backends) {
        if (backends.size() > 1) std::printf("### %s\n\n", be->name().c_str());
        PrintProfile(*be, forward_seconds[precision], passes[precision]);
        be->ops.clear();
        be->gemms.clear();
        be->paired.clear();
      }
      forward_seconds.clear();
      passes.clear();
      std::printf("end\n");
      std::fflush(stdout);
      continue;
    }
    std::istringstream in(line);
    std::string label, mode;
    int64_t T = 0, G = 0;
    in >> label >> mode >> T;
    if (mode == "decode") in >> G;
    auto it = loaded.find(label);
    if (it == loaded.end() || (mode != "last" && mode != "all" && mode != "decode") || T < 1 ||
        G < 0 || T + G + 1 > static_cast<int64_t>(tokens.size()) + (mode == "decode" ? 0 : 1)) {
      std::fprintf(stderr, "bad command '%s' (LABEL last|all T, or LABEL decode T G; %zu ids)\n",
                   line.c_str(), tokens.size());
      return 2;
    }
    focal::model::Transformer& tf = it->second->transformer();
    auto cache = tf.NewCache(T + G);
    if (!cache.ok()) {
      std::fprintf(stderr, "%s\n", std::string(cache.status().message()).c_str());
      return 1;
    }
    // One forward pass over ids [begin, end) scoring `rows` (relative to
    // begin); returns its seconds (without paired sgemm calls) and adds the
    // log-probs to `sum`.
    double sum = 0;
    auto pass = [&](int64_t begin, int64_t end, bool all_rows) -> double {
      auto ids = absl::MakeConstSpan(tokens).subspan(begin, end - begin);
      std::vector<int64_t> rows;
      std::vector<int32_t> targets;
      for (int64_t r = all_rows ? begin : end - 1; r < end; ++r) {
        rows.push_back(r - begin);
        targets.push_back(r + 1 < static_cast<int64_t>(tokens.size()) ? tokens[r + 1] : 0);
      }
      focal::model::SeqInput seq{&*cache, ids, rows, targets};
      std::vector<std::vector<focal::model::TokenScore>> out;
      const double paired_before = paired_seconds();
      const auto t0 = Clock::now();
      const absl::Status st = tf.Forward(absl::MakeConstSpan(&seq, 1), out);
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count() -
                          (paired_seconds() - paired_before);
      if (!st.ok()) {
        std::fprintf(stderr, "forward failed: %s\n", std::string(st.message()).c_str());
        std::exit(1);
      }
      for (const auto& ts : out[0]) sum += ts.logprob;
      forward_seconds[precision_of[label]] += secs;
      ++passes[precision_of[label]];
      return secs;
    };
    const double s = pass(0, T, mode == "all");
    if (mode == "decode") {
      double d = 0;
      for (int64_t g = 0; g < G; ++g) d += pass(T + g, T + g + 1, false);
      std::printf("%s decode %lld %lld %.6f %.6f\n", label.c_str(), static_cast<long long>(T),
                  static_cast<long long>(G), s, d);
    } else {
      // The sum of log-probs, so a numerics change shows up in the log.
      std::printf("%s %s %lld %.6f %.9g\n", label.c_str(), mode.c_str(), static_cast<long long>(T),
                  s, sum);
    }
    std::fflush(stdout);
  }
  return 0;
}
