// SPDX-License-Identifier: Apache-2.0
// Every backend op, checked by construction (as ggml's test-backend-ops).
//
// kOpTable below lists each op of kernels/backend_ops.h once, with its cases
// (shapes, several per op, awkward ones on purpose) and its tolerance. For
// every backend CreateBackend can make besides the CPU (kDevices: today CUDA
// in FP32 and BF16 mode) each case runs on that backend and on the CPU
// backend with the same inputs, and the outputs are compared. The table must
// cover the op list and the op list must cover Backend's virtual methods, so
// an op cannot be added without its check. Kept in one file (~1,100 lines)
// for that reason: the table, its coverage checks and the comparison it drives
// belong together.
//
// Tolerances. FP32 mode: the CPU result within a few FP32 ulps, or a
// summation-order bound for products. BF16 mode: per value, the CPU result
// on the operands that mode rounds (matrix weights, MatMul inputs, attention
// q/k/v) under the same bound, and for the ops that compute in BF16 (MatMul,
// Attention) the flash-attention rule: the device's maximum error against
// the FP32 CPU result is at most twice the error of a low-precision CPU
// reference (the CPU op on BF16-rounded operands, its output rounded to
// BF16), plus a small floor. Integer outputs (argmax) are always exact.
//
// Without a device the cross-backend comparisons skip, saying why; the
// table's coverage and a CPU-vs-CPU comparison at 1 and 2 threads (which
// must be bit-identical) run everywhere.
#include "kernels/backend_ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/check.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/dtype.h"
#include "tests/kernels/backend_test_util.h"
#include "tests/testing/test_util.h"

namespace focal::kernels {

// Readable parameter values in test names and messages.
void PrintTo(BackendOp op, std::ostream* os) { *os << BackendOpName(op); }

namespace {

using backend_test::AttnOnBackend;
using backend_test::AttnProblem;
using backend_test::Get;
using backend_test::MakeProblem;
using backend_test::Put;
using backend_test::RoundBf16;
using backend_test::SeqShape;

// ---------------------------------------------------------------------------
// Backends under test.

// How a backend computes, as far as the tolerances are concerned.
enum class Precision {
  kFp32,  // FP32 throughout
  kBf16,  // matrices stored in BF16; MatMul and attention operands rounded
          // to BF16, FP32 accumulation (kernels/cuda/README.md)
};

struct DeviceUnderTest {
  const char* device;  // for CreateBackend
  Precision precision;
};

void PrintTo(const DeviceUnderTest& d, std::ostream* os) { *os << d.device; }

// Every backend CreateBackend can make besides the CPU, in each of its
// precision modes. A new backend adds its device strings here.
constexpr DeviceUnderTest kDevices[] = {
    {"cuda:0:fp32", Precision::kFp32},
    {"cuda:0:bf16", Precision::kBf16},
};

// ---------------------------------------------------------------------------
// What a case computes.

// Which values a case hands the backend.
enum class Operands {
  kAsGiven,
  // Rounded to BF16 where the BF16 mode rounds them: matrix weights
  // (rows > 1), MatMul inputs (times a matrix), attention q, k, v. The CPU on
  // these computes with the very operands the BF16 mode uses.
  kBf16,
};

// One output of a case, as doubles (float, double and int32 widen exactly).
struct Output {
  Output(std::string name, std::vector<double> values)
      : name(std::move(name)), values(std::move(values)) {}

  std::string name;
  std::vector<double> values;
  bool integral = false;  // indices: always compared exactly
  // >= 0: must equal output [same_as] of the same run bit for bit, on every
  // backend (in place vs out of place, reuse of staged arguments).
  int same_as = -1;
  // Per value, the sum of |terms| it adds up (for Bound::sum_rel).
  std::vector<double> magnitude;
};
using Outputs = std::vector<Output>;

// Inputs the ops cannot do without: a failure ends the test binary, saying why.
Buffer OrDie(absl::StatusOr<Buffer> b) {
  if (!b.ok()) {
    std::fprintf(stderr, "backend_ops_test: %s\n", b.status().ToString().c_str());
    std::abort();
  }
  return std::move(*b);
}

template <typename T>
std::vector<double> Widen(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// The inputs of one case on one backend, kept alive until it is done: its
// buffers, and host copies of the weights (the CPU backend may keep a view
// of F32 weight memory instead of copying it).
class Run {
 public:
  Run(Backend& b, Operands operands) : b_(b), operands_(operands) {}

  Backend& backend() { return b_; }
  bool bf16_operands() const { return operands_ == Operands::kBf16; }

  // An activation of `dtype`; `operand`: rounded in the BF16-operands run
  // (a MatMul input times a matrix, attention q/k/v).
  Tensor Input(const std::vector<float>& v, int64_t rows, int64_t cols, bool operand = false,
               DType dtype = DType::kF32) {
    buffers_.push_back(Put(b_, operand && bf16_operands() ? RoundBf16(v) : v, rows, cols, dtype));
    return buffers_.back().tensor();
  }

  // A weight from F32 host data.
  Tensor Weight(const std::vector<float>& v, int64_t rows, int64_t cols) {
    FOCAL_CHECK(static_cast<int64_t>(v.size()) == rows * cols);
    return WeightFrom(v.data(), DType::kF32, rows, cols);
  }

  // A weight from host data of dtype `src` (F32 values, F16 or BF16 bits).
  Tensor WeightFrom(const void* host, DType src, int64_t rows, int64_t cols) {
    const size_t n = static_cast<size_t>(rows * cols);
    if (bf16_operands() && rows > 1 && src != DType::kBF16) {
      std::vector<float> f(n);
      for (size_t i = 0; i < n; ++i) {
        if (src == DType::kF32) {
          std::memcpy(&f[i], static_cast<const char*>(host) + 4 * i, 4);
        } else {
          uint16_t h;
          std::memcpy(&h, static_cast<const char*>(host) + 2 * i, 2);
          f[i] = F16ToF32(h);
        }
      }
      host_.emplace_back(n);
      const std::vector<float> rounded = RoundBf16(std::move(f));
      std::memcpy(host_.back().data(), rounded.data(), n * 4);
      src = DType::kF32;
    } else {
      host_.emplace_back((n * DTypeSize(src) + 3) / 4);
      std::memcpy(host_.back().data(), host, n * DTypeSize(src));
    }
    buffers_.push_back(OrDie(b_.UploadWeight(host_.back().data(), src, rows, cols)));
    return buffers_.back().tensor();
  }

  // A fresh tensor from Allocate.
  Tensor Zeros(DType dtype, int64_t rows, int64_t cols) {
    buffers_.push_back(OrDie(b_.Allocate(dtype, rows, cols)));
    return buffers_.back().tensor();
  }

  Output Read(std::string name, Tensor t) { return {std::move(name), Widen(Get(b_, t))}; }

 private:
  Backend& b_;
  const Operands operands_;
  std::deque<std::vector<uint32_t>> host_;  // stable addresses
  std::deque<Buffer> buffers_;
};

struct OpCase {
  std::string name;  // the shapes, for messages
  std::function<Outputs(Run&)> run;
};

// ---------------------------------------------------------------------------
// Tolerances.

// Per value: |got - want| <= rel * |want| + abs + sum_rel * magnitude. All
// zero: equal values (NaN equals NaN).
struct Bound {
  double rel = 0, abs = 0, sum_rel = 0;
};

struct Tolerance {
  Bound fp32;  // FP32 mode, against the CPU on the same inputs
  // BF16 mode, against the CPU on the same (rounded) operands; nullopt: no
  // per-value bound (attention rounds P inside the kernel).
  std::optional<Bound> bf16;
  // BF16 mode: the flash-attention rule against the FP32 CPU result, with
  // this floor; nullopt: not applied (the op does not compute in BF16).
  std::optional<double> bf16_rule_floor;
};

constexpr Tolerance Exact() { return {Bound{}, Bound{}, std::nullopt}; }
// Ops the BF16 mode computes in FP32: the same bound in both modes.
constexpr Tolerance InBothModes(Bound b) { return {b, b, std::nullopt}; }

// ---------------------------------------------------------------------------
// Cases. Each op's function returns its cases with their inputs (fixed seeds).

std::vector<float> Normal(std::mt19937& rng, int64_t n, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

template <typename T>
std::shared_ptr<const T> Share(T v) {
  return std::make_shared<const T>(std::move(v));
}

std::vector<OpCase> AllocateCases() {
  struct Shape {
    DType dtype;
    int64_t rows, cols;
  };
  std::vector<OpCase> cases;
  for (const Shape s :
       {Shape{DType::kF32, 3, 5}, Shape{DType::kBF16, 7, 3}, Shape{DType::kF32, 1, 1},
        Shape{DType::kF32, 0, 4}, Shape{DType::kBF16, 257, 129}, Shape{DType::kF32, 300, 515}}) {
    cases.push_back(
        {absl::StrCat(DTypeName(s.dtype), " (", s.rows, ", ", s.cols, ")"), [s](Run& r) -> Outputs {
           // Dirty memory of the same size first, released, so a
           // caching allocator hands it out again: still zeros.
           {
             const Buffer dirty = OrDie(r.backend().Allocate(s.dtype, s.rows, s.cols));
             const std::vector<uint8_t> ones(dirty.tensor().bytes(), 0xA5);
             r.backend().CopyFromHost(ones.data(), dirty.tensor());
           }
           return {r.Read("zeros", r.Zeros(s.dtype, s.rows, s.cols))};
         }});
  }
  return cases;
}

std::vector<OpCase> UploadWeightCases() {
  std::mt19937 rng(2);
  std::vector<OpCase> cases;
  auto add_f32 = [&](int64_t rows, int64_t cols) {
    auto w = Share(Normal(rng, rows * cols));
    cases.push_back({absl::StrCat("F32 (", rows, ", ", cols, ")"), [=](Run& r) -> Outputs {
                       return {r.Read("stored", r.Weight(*w, rows, cols))};
                     }});
  };
  add_f32(5, 7);
  add_f32(1, 7);  // a vector: FP32 in every mode
  add_f32(300, 77);
  auto add_half = [&](DType src, int64_t rows, int64_t cols) {
    std::vector<uint16_t> bits(static_cast<size_t>(rows * cols));
    for (uint16_t& b : bits) {
      if (src == DType::kBF16) {
        b = F32ToBf16(std::normal_distribution<float>(0.0f, 2.0f)(rng));
      } else {
        do {
          b = static_cast<uint16_t>(rng());
        } while (((b >> 10) & 0x1F) == 0x1F);  // finite: subnormals and 65504 included
      }
    }
    if (src == DType::kF16 && bits.size() > 2) {
      bits[0] = 0x0001;  // the smallest subnormal
      bits[1] = 0x7BFF;  // the largest finite
    }
    auto data = Share(std::move(bits));
    cases.push_back(
        {absl::StrCat(DTypeName(src), " (", rows, ", ", cols, ")"), [=](Run& r) -> Outputs {
           return {r.Read("stored", r.WeightFrom(data->data(), src, rows, cols))};
         }});
  };
  add_half(DType::kBF16, 5, 7);
  add_half(DType::kBF16, 1, 9);
  add_half(DType::kF16, 64, 33);
  add_half(DType::kF16, 1, 33);
  return cases;
}

std::vector<OpCase> CopyFromHostCases() {
  std::mt19937 rng(3);
  std::vector<OpCase> cases;
  {
    auto v = Share(Normal(rng, 4 * 5));
    cases.push_back({"F32 rows [3, 7) of (9, 5)", [=](Run& r) -> Outputs {
                       const Tensor t = r.Zeros(DType::kF32, 9, 5);
                       r.backend().CopyFromHost(v->data(), t.Rows(3, 4));
                       return {r.Read("tensor", t)};
                     }});
  }
  {
    auto v = Share(Normal(rng, 1000));
    cases.push_back({"F32 (1, 1000) whole", [=](Run& r) -> Outputs {
                       const Tensor t = r.Zeros(DType::kF32, 1, 1000);
                       r.backend().CopyFromHost(v->data(), t);
                       return {r.Read("tensor", t)};
                     }});
  }
  {
    std::vector<uint16_t> bits(2 * 3);
    for (uint16_t& b : bits) b = F32ToBf16(std::normal_distribution<float>()(rng));
    auto v = Share(std::move(bits));
    cases.push_back({"BF16 rows [1, 3) of (6, 3)", [=](Run& r) -> Outputs {
                       const Tensor t = r.Zeros(DType::kBF16, 6, 3);
                       r.backend().CopyFromHost(v->data(), t.Rows(1, 2));
                       return {r.Read("tensor", t)};
                     }});
  }
  return cases;
}

std::vector<OpCase> CopyToHostCases() {
  std::mt19937 rng(4);
  std::vector<OpCase> cases;
  {
    auto v = Share(Normal(rng, 9 * 5));
    cases.push_back({"F32 rows [2, 5) of (9, 5)", [=](Run& r) -> Outputs {
                       const Tensor t = r.Input(*v, 9, 5);
                       std::vector<float> host(3 * 5, -1.0f);
                       r.backend().CopyToHost(t.Rows(2, 3), host.data());
                       return {{"host", Widen(host)}};
                     }});
  }
  {
    auto v = Share(Normal(rng, 6 * 4));
    cases.push_back({"BF16 row 5 of (6, 4)", [=](Run& r) -> Outputs {
                       const Tensor t = r.Input(*v, 6, 4, false, DType::kBF16);
                       std::vector<uint16_t> host(4, 0xFFFF);
                       r.backend().CopyToHost(t.Rows(5, 1), host.data());
                       return {{"host bits", Widen(host)}};
                     }});
  }
  {
    auto v = Share(Normal(rng, 3 * 1));
    cases.push_back({"F32 (3, 0) and (3, 1)", [=](Run& r) -> Outputs {
                       std::vector<float> host(3, -1.0f);
                       r.backend().CopyToHost(r.Zeros(DType::kF32, 3, 0), host.data());
                       r.backend().CopyToHost(r.Input(*v, 3, 1), host.data());
                       return {{"host", Widen(host)}};
                     }});
  }
  return cases;
}

std::vector<OpCase> CopyRowsCases() {
  std::mt19937 rng(5);
  std::vector<OpCase> cases;
  {
    auto x = Share(Normal(rng, 40 * 19));
    cases.push_back({"(40, 19) overlapping, both directions", [=](Run& r) -> Outputs {
                       const Tensor t = r.Input(*x, 40, 19);
                       r.backend().CopyRows(t, 0, t, 3, 10);    // forward overlap
                       r.backend().CopyRows(t, 20, t, 15, 12);  // backward overlap
                       r.backend().CopyRows(t, 30, t, 30, 5);   // onto itself
                       r.backend().CopyRows(t, 1, t, 2, 0);     // nothing
                       return {r.Read("tensor", t)};
                     }});
  }
  {
    auto x = Share(Normal(rng, 13 * 7)), y = Share(Normal(rng, 9 * 7));
    cases.push_back({"(13, 7) into (9, 7)", [=](Run& r) -> Outputs {
                       const Tensor src = r.Input(*x, 13, 7), dst = r.Input(*y, 9, 7);
                       r.backend().CopyRows(src, 5, dst, 0, 8);
                       r.backend().CopyRows(src, 12, dst, 8, 1);
                       return {r.Read("dst", dst), r.Read("src", src)};
                     }});
  }
  {
    auto x = Share(Normal(rng, 33 * 24));
    cases.push_back({"BF16 (33, 24) overlapping", [=](Run& r) -> Outputs {
                       const Tensor t = r.Input(*x, 33, 24, false, DType::kBF16);
                       r.backend().CopyRows(t, 1, t, 0, 32);
                       return {r.Read("tensor", t)};
                     }});
  }
  {
    // The KV cache's path in BF16 attention: F32 rows rounded into BF16.
    auto x = Share(Normal(rng, 11 * 24));
    cases.push_back({"F32 (11, 24) into BF16 (9, 24)", [=](Run& r) -> Outputs {
                       const Tensor src = r.Input(*x, 11, 24);
                       const Tensor dst = r.Zeros(DType::kBF16, 9, 24);
                       r.backend().CopyRows(src, 2, dst, 1, 7);
                       r.backend().CopyRows(src, 10, dst, 8, 1);
                       return {r.Read("dst", dst), r.Read("src", src)};
                     }});
  }
  return cases;
}

std::vector<OpCase> EmbedCases() {
  std::mt19937 rng(6);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t v, c, t;
    bool bf16_table;  // checkpoint in BF16
  };
  for (const Shape s : {Shape{37, 67, 301, false}, Shape{5, 1, 1, false},
                        Shape{1000, 128, 64, true}, Shape{3, 4096, 7, false}}) {
    auto table = Share(Normal(rng, s.v * s.c));
    std::vector<int32_t> tok(static_cast<size_t>(s.t));
    for (int32_t& t : tok) t = static_cast<int32_t>(rng() % s.v);
    tok[0] = static_cast<int32_t>(s.v - 1);
    if (s.t > 1) tok[1] = 0;
    auto tokens = Share(std::move(tok));
    cases.push_back(
        {absl::StrCat("V=", s.v, " C=", s.c, " T=", s.t, s.bf16_table ? " BF16 table" : ""),
         [=](Run& r) -> Outputs {
           Tensor tt;
           if (s.bf16_table) {
             std::vector<uint16_t> bits(table->size());
             for (size_t i = 0; i < bits.size(); ++i) bits[i] = F32ToBf16((*table)[i]);
             tt = r.WeightFrom(bits.data(), DType::kBF16, s.v, s.c);
           } else {
             tt = r.Weight(*table, s.v, s.c);
           }
           const Tensor out = r.Zeros(DType::kF32, s.t, s.c);
           r.backend().Embed(tt, *tokens, out);
           return {r.Read("out", out)};
         }});
  }
  return cases;
}

std::vector<OpCase> RmsNormCases() {
  std::mt19937 rng(7);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t, c;
    float x_scale, eps;
  };
  for (const Shape s : {Shape{300, 515, 3.0f, 1e-5f}, Shape{1, 4096, 1.0f, 1e-5f},
                        Shape{257, 64, 0.01f, 1e-6f}, Shape{3, 7, 100.0f, 1e-5f}}) {
    auto x = Share(Normal(rng, s.t * s.c, s.x_scale)), w = Share(Normal(rng, s.c));
    cases.push_back({absl::StrCat("T=", s.t, " C=", s.c, " |x|~", s.x_scale, " eps=", s.eps),
                     [=](Run& r) -> Outputs {
                       const Tensor wt = r.Weight(*w, 1, s.c);
                       const Tensor xt = r.Input(*x, s.t, s.c);
                       const Tensor out = r.Zeros(DType::kF32, s.t, s.c);
                       r.backend().RmsNorm(xt, wt, s.eps, out);
                       r.backend().RmsNorm(xt, wt, s.eps, xt);  // in place
                       Output in_place = r.Read("in place", xt);
                       in_place.same_as = 0;
                       return {r.Read("out", out), std::move(in_place)};
                     }});
  }
  return cases;
}

std::vector<OpCase> MatMulCases() {
  std::mt19937 rng(8);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t, k, n;
  };
  std::vector<Shape> shapes;
  for (const Shape kn : {Shape{0, 200, 130}, Shape{0, 77, 33}}) {
    for (int64_t t : {1, 255, 256, 257, 700}) shapes.push_back({t, kn.k, kn.n});
  }
  shapes.push_back({65, 128, 300});  // across the CPU's row and column tiles
  shapes.push_back({300, 64, 1});    // a vector weight: an FP32 product in every mode
  shapes.push_back({3, 1, 5});       // K = 1
  for (const Shape s : shapes) {
    auto x = Share(Normal(rng, s.t * s.k)), w = Share(Normal(rng, s.n * s.k, 0.05f));
    // Sum of |x w| per output, from the inputs as given.
    std::vector<double> mag(static_cast<size_t>(s.t * s.n));
    for (int64_t t = 0; t < s.t; ++t) {
      for (int64_t n = 0; n < s.n; ++n) {
        double a = 0;
        for (int64_t k = 0; k < s.k; ++k)
          a += std::abs(double{(*x)[t * s.k + k]} * (*w)[n * s.k + k]);
        mag[t * s.n + n] = a;
      }
    }
    auto magnitude = Share(std::move(mag));
    cases.push_back({absl::StrCat("T=", s.t, " K=", s.k, " N=", s.n), [=](Run& r) -> Outputs {
                       const Tensor wt = r.Weight(*w, s.n, s.k);
                       // The input is rounded only where the weight is a
                       // (BF16) matrix.
                       const Tensor xt = r.Input(*x, s.t, s.k, /*operand=*/s.n > 1);
                       const Tensor out = r.Zeros(DType::kF32, s.t, s.n);
                       r.backend().MatMul(xt, wt, out);
                       Output o = r.Read("out", out);
                       o.magnitude = *magnitude;
                       return {std::move(o)};
                     }});
  }
  return cases;
}

std::vector<float> InvFreq(int head_dim, double base) {
  std::vector<float> f(static_cast<size_t>(head_dim / 2));
  for (int i = 0; i < head_dim / 2; ++i) {
    f[i] = static_cast<float>(1.0 / std::pow(base, 2.0 * i / head_dim));
  }
  return f;
}

std::vector<OpCase> RopeCases() {
  std::mt19937 rng(9);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t;
    int h, d;
    double base;
    int64_t max_pos;
  };
  for (const Shape s : {Shape{133, 3, 16, 500000.0, 200000}, Shape{133, 3, 64, 500000.0, 200000},
                        Shape{133, 3, 128, 500000.0, 200000}, Shape{5, 32, 128, 10000.0, 131072},
                        Shape{1, 2, 80, 10000.0, 1}, Shape{70, 1, 2, 10000.0, 4096}}) {
    std::vector<int64_t> p(static_cast<size_t>(s.t));
    for (int64_t& e : p) e = static_cast<int64_t>(rng() % s.max_pos);
    p[0] = 0;
    auto pos = Share(std::move(p));
    auto x = Share(Normal(rng, s.t * s.h * s.d));
    auto inv_freq = Share(InvFreq(s.d, s.base));
    cases.push_back(
        {absl::StrCat("T=", s.t, " H=", s.h, " D=", s.d, " base=", s.base), [=](Run& r) -> Outputs {
           const int64_t cols = int64_t{s.h} * s.d;
           const Tensor a = r.Input(*x, s.t, cols), b = r.Input(*x, s.t, cols),
                        c = r.Input(*x, s.t, cols);
           r.backend().Rope(a, s.h, s.d, *pos, *inv_freq);
           // The same positions again (a backend may reuse their staged copy).
           r.backend().Rope(b, s.h, s.d, *pos, *inv_freq);
           // Then other positions: nothing stale may be reused.
           std::vector<int64_t> shifted = *pos;
           for (int64_t& e : shifted) e += 1;
           r.backend().Rope(c, s.h, s.d, shifted, *inv_freq);
           Output again = r.Read("same positions again", b);
           again.same_as = 0;
           return {r.Read("out", a), std::move(again), r.Read("positions + 1", c)};
         }});
  }
  return cases;
}

struct AttnCase {
  int h, hkv, d;
  std::vector<SeqShape> seqs;
  enum Scales { kPerRow, kBase, kConstantFocal } scales;
};

// Packed sequences: single rows, partial and whole 64-row blocks, past keys.
const std::vector<SeqShape> kPacked = {{1, 0},   {63, 0},  {64, 0}, {65, 37}, {130, 128},
                                       {200, 0}, {1, 300}, {17, 5}, {129, 64}};

std::vector<AttnCase> AttentionShapes() {
  using S = AttnCase;
  return {
      {4, 2, 64, kPacked, S::kPerRow},   // GQA 2, tensor-core head dim
      {8, 2, 128, kPacked, S::kPerRow},  // GQA 4, tensor-core head dim
      {4, 1, 16, kPacked, S::kPerRow},   // one KV head
      {6, 3, 24, kPacked, S::kPerRow},
      {2, 2, 80, kPacked, S::kPerRow},  // no grouping, head dim of no kernel of its own
      {3, 1, 17, {{40, 0}, {9, 70}, {1, 2}}, S::kPerRow},              // odd head dim
      {8, 2, 128, {{1, 1000}, {1, 0}, {1, 63}, {1, 64}}, S::kPerRow},  // decode steps
      {4, 4, 64, {{257, 0}}, S::kBase},                                // 1/sqrt(D)
      {32, 8, 128, {{70, 200}, {3, 1}}, S::kConstantFocal},            // 1/(t sqrt(D)), t = 0.7
  };
}

AttnProblem MakeAttnProblem(std::mt19937& rng, const AttnCase& c) {
  AttnProblem p = MakeProblem(rng, c.h, c.hkv, c.d, c.seqs);
  const float base = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
  if (c.scales == AttnCase::kBase) std::fill(p.scale.begin(), p.scale.end(), base);
  if (c.scales == AttnCase::kConstantFocal) {
    std::fill(p.scale.begin(), p.scale.end(), static_cast<float>(base / 0.7));
  }
  return p;
}

std::string AttnName(const AttnCase& c) {
  std::string seqs;
  for (const SeqShape& s : c.seqs)
    absl::StrAppend(&seqs, seqs.empty() ? "" : ",", s.rows, "+", s.past);
  const char* scales[] = {"per-row scales", "base scale", "constant focal"};
  return absl::StrCat("H=", c.h, " Hkv=", c.hkv, " D=", c.d, " seqs(rows+past)=", seqs, " ",
                      scales[c.scales]);
}

std::vector<OpCase> AttentionCases() {
  std::mt19937 rng(10);
  std::vector<OpCase> cases;
  for (const AttnCase& c : AttentionShapes()) {
    auto p = Share(MakeAttnProblem(rng, c));
    cases.push_back({AttnName(c), [=](Run& r) -> Outputs {
                       AttnOnBackend on;
                       backend_test::Upload(r.backend(), *p, DType::kF32, r.bf16_operands(), &on);
                       r.backend().Attention(on.args);
                       return {r.Read("out", on.out.tensor())};
                     }});
  }
  return cases;
}

std::vector<OpCase> AttentionStatsCases() {
  std::mt19937 rng(11);
  std::vector<OpCase> cases;
  const std::vector<AttnCase> shapes = AttentionShapes();
  for (const size_t i : {size_t{0}, size_t{1}, size_t{5}, size_t{6}}) {
    const AttnCase& c = shapes[i];
    auto p = Share(MakeAttnProblem(rng, c));
    // Probes: each sequence's first and last row; key ranges at the start,
    // the middle, past the visible keys (clipped) and empty.
    struct ProbeData {
      std::vector<AttentionProbe> probes;
      std::deque<std::vector<std::pair<int64_t, int64_t>>> ranges;
    };
    auto pd = std::make_shared<ProbeData>();
    for (size_t s = 0; s < p->seqs.size(); ++s) {
      const AttentionSeq& seq = p->seqs[s];
      for (int64_t row : {int64_t{0}, seq.rows - 1}) {
        const int64_t n = seq.past + row + 1;
        pd->ranges.push_back({{0, 1}, {n / 3, n / 2 + 1}, {n - 2, n + 5}, {4, 4}});
        pd->probes.push_back({static_cast<int>(s), row, pd->ranges.back()});
      }
    }
    cases.push_back(
        {AttnName(c) + absl::StrCat(", ", pd->probes.size(), " probes"), [=](Run& r) -> Outputs {
           // The statistics read the tensors as stored (F32 here):
           // nothing is rounded.
           AttnOnBackend on;
           backend_test::Upload(r.backend(), *p, DType::kF32, false, &on);
           r.backend().Attention(on.args);
           const size_t n = pd->probes.size() * static_cast<size_t>(p->H);
           std::vector<float> entropy(n, -1.0f), mass(n, -1.0f);
           r.backend().AttentionStats(on.args, pd->probes, absl::MakeSpan(entropy),
                                      absl::MakeSpan(mass));
           return {{"entropy", Widen(entropy)}, {"mass", Widen(mass)}};
         }});
  }
  return cases;
}

std::vector<OpCase> SwiGluCases() {
  std::mt19937 rng(12);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t, f;
    float gate_scale;
  };
  for (const Shape s : {Shape{1000, 37, 4.0f}, Shape{3, 5, 1.0f}, Shape{17, 1000, 30.0f}}) {
    auto g = Share(Normal(rng, s.t * s.f, s.gate_scale)), u = Share(Normal(rng, s.t * s.f));
    cases.push_back(
        {absl::StrCat("T=", s.t, " F=", s.f, " |gate|~", s.gate_scale), [=](Run& r) -> Outputs {
           const Tensor gt = r.Input(*g, s.t, s.f), ut = r.Input(*u, s.t, s.f);
           const Tensor out = r.Zeros(DType::kF32, s.t, s.f);
           r.backend().SwiGlu(gt, ut, out);
           const Tensor g2 = r.Input(*g, s.t, s.f);
           r.backend().SwiGlu(g2, ut, g2);  // in place, as the Transformer
           Output in_place = r.Read("in place", g2);
           in_place.same_as = 0;
           return {r.Read("out", out), std::move(in_place)};
         }});
  }
  return cases;
}

std::vector<OpCase> AddCases() {
  std::mt19937 rng(13);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t, c;
  };
  for (const Shape s : {Shape{1000, 37}, Shape{1, 1}, Shape{300, 515}}) {
    auto x = Share(Normal(rng, s.t * s.c, 1e-3f)), y = Share(Normal(rng, s.t * s.c, 10.0f));
    cases.push_back({absl::StrCat("T=", s.t, " C=", s.c), [=](Run& r) -> Outputs {
                       const Tensor xt = r.Input(*x, s.t, s.c), yt = r.Input(*y, s.t, s.c);
                       r.backend().Add(xt, yt);
                       return {r.Read("inout", yt)};
                     }});
  }
  return cases;
}

std::vector<OpCase> RowDotCases() {
  std::mt19937 rng(14);
  std::vector<OpCase> cases;
  struct Shape {
    int64_t t, c;
    float bias;
  };
  for (const Shape s :
       {Shape{50, 333, 0.25f}, Shape{1, 1, -3.0f}, Shape{700, 64, 0.0f}, Shape{3, 4096, 1.5f}}) {
    auto x = Share(Normal(rng, s.t * s.c)), w = Share(Normal(rng, s.c));
    cases.push_back({absl::StrCat("T=", s.t, " C=", s.c, " bias=", s.bias), [=](Run& r) -> Outputs {
                       const Tensor xt = r.Input(*x, s.t, s.c), wt = r.Weight(*w, 1, s.c);
                       std::vector<float> out(static_cast<size_t>(s.t), -1.0f);
                       r.backend().RowDot(xt, wt, s.bias, absl::MakeSpan(out));
                       return {{"out", Widen(out)}};
                     }});
  }
  return cases;
}

std::vector<OpCase> GatherRowsCases() {
  std::mt19937 rng(15);
  std::vector<OpCase> cases;
  auto add = [&](int64_t t, int64_t c, std::vector<int64_t> rows) {
    auto x = Share(Normal(rng, t * c));
    auto idx = Share(std::move(rows));
    cases.push_back(
        {absl::StrCat("(", t, ", ", c, "), ", idx->size(), " rows"), [=](Run& r) -> Outputs {
           const Tensor xt = r.Input(*x, t, c);
           const Tensor out = r.Zeros(DType::kF32, static_cast<int64_t>(idx->size()), c);
           r.backend().GatherRows(xt, *idx, out);
           return {r.Read("out", out)};
         }});
  };
  add(40, 19, {39, 0, 7, 7});
  std::vector<int64_t> many(300);
  for (int64_t& e : many) e = static_cast<int64_t>(rng() % 1000);
  add(1000, 64, many);
  add(5, 1, {4});
  add(3, 7, {});
  return cases;
}

std::vector<OpCase> LogSoftmaxGatherCases() {
  std::mt19937 rng(16);
  std::vector<OpCase> cases;
  auto add = [&](std::string name, int64_t rows, int64_t vocab, std::vector<float> logits) {
    std::vector<int32_t> tg(static_cast<size_t>(rows));
    for (int32_t& t : tg) t = static_cast<int32_t>(rng() % vocab);
    auto l = Share(std::move(logits));
    auto targets = Share(std::move(tg));
    cases.push_back({std::move(name), [=](Run& r) -> Outputs {
                       const Tensor lt = r.Input(*l, rows, vocab);
                       std::vector<double> logprob(static_cast<size_t>(rows), 1.0);
                       std::vector<int32_t> argmax(static_cast<size_t>(rows), -7);
                       r.backend().LogSoftmaxGather(lt, *targets, absl::MakeSpan(logprob),
                                                    absl::MakeSpan(argmax));
                       Output am{"argmax", Widen(argmax)};
                       am.integral = true;
                       return {{"logprob", logprob}, std::move(am)};
                     }});
  };
  {
    const int64_t R = 37, V = 32001;
    std::vector<float> logits = Normal(rng, R * V, 3.0f);
    for (int64_t r = 0; r < R; ++r) {
      float* row = logits.data() + r * V;
      const float mx = *std::max_element(row, row + V);
      if (r % 3 == 0) row[5] = row[V - 2] = mx + 1.0f;  // a tie: the first index wins
    }
    std::fill(logits.begin() + 7 * V, logits.begin() + 8 * V,
              0.5f);  // all equal
    add("R=37 V=32001, ties and an all-equal row", R, V, std::move(logits));
  }
  add("R=1 V=1", 1, 1, {0.25f});
  add("R=5 V=128256 |x|~10", 5, 128256, Normal(rng, 5 * 128256, 10.0f));
  add("R=3 V=7 |x|~1e4", 3, 7, Normal(rng, 3 * 7, 1e4f));
  return cases;
}

// ---------------------------------------------------------------------------
// The table: every op of FOCAL_BACKEND_OPS once.

struct OpEntry {
  BackendOp op;
  std::vector<OpCase> (*cases)();
  Tolerance tolerance;
};

// Summation order: both sides add the same products in FP32, in different
// orders (4e-5 of the sum of |terms| covers K up to a few thousand).
constexpr Bound kSumOrder{.rel = 0, .abs = 1e-7, .sum_rel = 4e-5};

const OpEntry kOpTable[] = {
    // Zero fill; transfers and copies move bits.
    {BackendOp::kAllocate, AllocateCases, Exact()},
    // In BF16 mode matrices are stored rounded: equal to the CPU's upload of
    // the rounded values; vectors stay exact.
    {BackendOp::kUploadWeight, UploadWeightCases, Exact()},
    {BackendOp::kCopyFromHost, CopyFromHostCases, Exact()},
    {BackendOp::kCopyToHost, CopyToHostCases, Exact()},
    {BackendOp::kCopyRows, CopyRowsCases, Exact()},
    // Rows of the (possibly BF16-stored) table, widened exactly.
    {BackendOp::kEmbed, EmbedCases, Exact()},
    // Only the double sum of squares' order differs: an ulp or two.
    {BackendOp::kRmsNorm, RmsNormCases, InBothModes({.rel = 3e-7, .abs = 1e-30})},
    // The summation-order bound against the CPU on the same operands, in both
    // modes; in BF16 mode also the rule with floor 1e-6.
    {BackendOp::kMatMul, MatMulCases, {kSumOrder, kSumOrder, 1e-6}},
    // cos/sin in double rounded to FP32 on both sides.
    {BackendOp::kRope, RopeCases, InBothModes({.rel = 1e-6, .abs = 1e-6})},
    // FP32: 2e-5 absolute. BF16: the rule with floor 1e-4 only (P is rounded
    // to BF16 inside the kernel, so no per-value bound).
    {BackendOp::kAttention, AttentionCases, {{.abs = 2e-5}, std::nullopt, 1e-4}},
    // Both sides compute in double from the same tensors, rounding the
    // result to FP32 (the default host implementation is exact).
    {BackendOp::kAttentionStats, AttentionStatsCases, InBothModes({.rel = 1e-6, .abs = 1e-7})},
    // expf's last ulps.
    {BackendOp::kSwiGlu, SwiGluCases, InBothModes({.rel = 1e-6, .abs = 1e-30})},
    // One FP32 add per value, correctly rounded on both sides.
    {BackendOp::kAdd, AddCases, Exact()},
    // Double accumulation on both sides, rounded to FP32.
    {BackendOp::kRowDot, RowDotCases, InBothModes({.rel = 1e-6, .abs = 1e-7})},
    {BackendOp::kGatherRows, GatherRowsCases, Exact()},
    // Double sums of exp(x - max); the argmax (first maximum) is exact.
    {BackendOp::kLogSoftmaxGather, LogSoftmaxGatherCases, InBothModes({.rel = 0, .abs = 1e-9})},
};

const OpEntry* FindEntry(BackendOp op) {
  for (const OpEntry& e : kOpTable) {
    if (e.op == op) return &e;
  }
  return nullptr;
}

std::vector<BackendOp> AllOps() {
  std::vector<BackendOp> ops;
  for (size_t i = 0; i < kNumBackendOps; ++i) ops.push_back(static_cast<BackendOp>(i));
  return ops;
}

// ---------------------------------------------------------------------------
// Running and comparing.

std::string Describe(double v) {
  std::ostringstream os;
  os << std::setprecision(9) << v;
  return os.str();
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

void ExpectSelfConsistent(const Outputs& outs, const std::string& who) {
  for (const Output& o : outs) {
    if (o.same_as < 0) continue;
    ASSERT_LT(static_cast<size_t>(o.same_as), outs.size());
    const Output& ref = outs[o.same_as];
    ASSERT_EQ(o.values.size(), ref.values.size()) << who << ": " << o.name;
    for (size_t i = 0; i < o.values.size(); ++i) {
      if (!SameBits(o.values[i], ref.values[i])) {
        ADD_FAILURE() << who << ": '" << o.name << "' differs from '" << ref.name << "' at [" << i
                      << "]: " << Describe(o.values[i]) << " vs " << Describe(ref.values[i]);
        break;
      }
    }
  }
}

// Runs `c` on `b` and checks its own invariants and the backend's errors.
Outputs RunCase(Backend& b, const OpCase& c, Operands operands) {
  Outputs outs;
  {
    Run run(b, operands);
    outs = c.run(run);
    const absl::Status s = b.Sync();  // before the inputs are released
    EXPECT_TRUE(s.ok()) << b.name() << ": " << s;
  }
  ExpectSelfConsistent(outs, b.name());
  return outs;
}

void ExpectBitIdentical(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) {
    ASSERT_EQ(got[j].values.size(), want[j].values.size()) << what << " " << got[j].name;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got[j].values.size(); ++i) {
      if (!SameBits(got[j].values[i], want[j].values[i]) && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << what << " '" << got[j].name << "': " << bad << " of "
                       << got[j].values.size() << " values differ, first at [" << first
                       << "]: " << Describe(got[j].values[first]) << " vs "
                       << Describe(want[j].values[first]);
  }
}

// got vs want under `bound`, value by value.
void ExpectWithin(const Output& got, const Output& want, const Bound& bound,
                  const std::string& what) {
  ASSERT_EQ(got.values.size(), want.values.size()) << what << " '" << got.name << "'";
  const bool use_mag = bound.sum_rel > 0;
  if (use_mag) {
    ASSERT_EQ(want.magnitude.size(), want.values.size()) << what;
  }
  size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (size_t i = 0; i < got.values.size(); ++i) {
    const double g = got.values[i], w = want.values[i];
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    const double allowed = got.integral ? 0.0
                                        : bound.rel * std::abs(w) + bound.abs +
                                              (use_mag ? bound.sum_rel * want.magnitude[i] : 0.0);
    const double err = std::abs(g - w);
    if (err <= allowed) continue;  // false for NaN
    const double ratio = allowed > 0 ? err / allowed : INFINITY;
    if (bad++ == 0 || !(ratio <= worst_ratio)) {
      worst = i;
      worst_ratio = ratio;
    }
  }
  if (bad == 0) return;
  const double g = got.values[worst], w = want.values[worst];
  ADD_FAILURE() << what << " '" << got.name << "': " << bad << " of " << got.values.size()
                << " values out of bounds; worst at [" << worst << "]: got " << Describe(g)
                << ", want " << Describe(w) << ", error " << Describe(std::abs(g - w))
                << ", allowed "
                << Describe(bound.rel * std::abs(w) + bound.abs +
                            (use_mag ? bound.sum_rel * want.magnitude[worst] : 0.0));
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::abs(a[i] - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates
  }
  return m;
}

// The flash-attention rule (see the file comment).
void ExpectBf16Rule(const Output& got, const Output& ref, const Output& same_operands, double floor,
                    const std::string& what) {
  std::vector<double> lowp = same_operands.values;
  for (double& v : lowp) v = RoundBf16(static_cast<float>(v));
  const double e_dev = MaxAbsDiff(got.values, ref.values), e_low = MaxAbsDiff(lowp, ref.values);
  EXPECT_LE(e_dev, 2 * e_low + floor)
      << what << " '" << got.name << "': device error " << e_dev << " vs BF16 reference error "
      << e_low << " (floor " << floor << ")";
}

// ---------------------------------------------------------------------------
// Coverage of the table and of the op list.

TEST(BackendOpsTableTest, EveryOpHasOneEntryWithSeveralCases) {
  std::set<BackendOp> seen;
  for (const OpEntry& e : kOpTable) {
    EXPECT_TRUE(seen.insert(e.op).second) << BackendOpName(e.op) << " has two table entries";
  }
  for (const BackendOp op : AllOps()) {
    const OpEntry* e = FindEntry(op);
    if (e == nullptr) {
      ADD_FAILURE() << "op " << BackendOpName(op)
                    << " (kernels/backend_ops.h) has no entry in kOpTable: add "
                       "its cases and "
                       "tolerance to tests/kernels/backend_ops_test.cc";
      continue;
    }
    EXPECT_GE(e->cases().size(), 3u) << BackendOpName(op) << ": too few cases";
  }
}

// Backend's virtual methods, from kernels/backend.h.
std::vector<std::string> VirtualMethodsOfBackend(const std::string& header) {
  std::string text;
  std::istringstream in(header);
  for (std::string line; std::getline(in, line);) {
    text += line.substr(0, line.find("//")) + "\n";  // comments out
  }
  const size_t begin = text.find("class Backend {");
  const size_t end = text.find("\n};", begin);
  FOCAL_CHECK(begin != std::string::npos && end != std::string::npos);
  const std::string body = text.substr(begin, end - begin);
  std::vector<std::string> names;
  for (size_t at = body.find("virtual"); at != std::string::npos;
       at = body.find("virtual", at + 1)) {
    const size_t paren = body.find('(', at);
    if (paren == std::string::npos) break;
    size_t e = paren;
    while (e > at && body[e - 1] == ' ') --e;
    size_t b = e;
    while (b > at && (std::isalnum(static_cast<unsigned char>(body[b - 1])) || body[b - 1] == '_' ||
                      body[b - 1] == '~')) {
      --b;
    }
    const std::string name = body.substr(b, e - b);
    if (!name.empty() && name[0] != '~') names.push_back(name);
  }
  return names;
}

TEST(BackendOpsTableTest, EveryVirtualMethodOfBackendIsListed) {
  const char* root = std::getenv("FOCAL_TEST_SOURCE_DIR");
  const std::string path = (root != nullptr && *root != '\0')
                               ? std::string(root) + "/kernels/backend.h"
                               : focal::testing::SourcePath("kernels/backend.h");
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "no source tree here (" << path << "); set FOCAL_TEST_SOURCE_DIR";
  }
  const std::vector<std::string> methods =
      VirtualMethodsOfBackend(focal::testing::ReadFileOrDie(path));
  ASSERT_GE(methods.size(), kNumBackendOps) << "cannot read Backend's methods from " << path;
  std::set<std::string> listed;
  for (absl::string_view n : kBackendOpNames) listed.insert(std::string(n));
  for (absl::string_view n : kBackendServiceNames) listed.insert(std::string(n));
  for (const std::string& m : methods) {
    EXPECT_TRUE(listed.count(m)) << "Backend::" << m
                                 << " is in neither FOCAL_BACKEND_OPS nor "
                                    "FOCAL_BACKEND_SERVICES (kernels/backend_ops.h)";
  }
  const std::set<std::string> declared(methods.begin(), methods.end());
  for (const std::string& n : listed) {
    EXPECT_TRUE(declared.count(n)) << n << " is listed in kernels/backend_ops.h but Backend "
                                   << "declares no such virtual method";
  }
}

// ---------------------------------------------------------------------------
// The CPU backend against itself: the thread count must not change a bit.

class CpuThreadsTest : public ::testing::TestWithParam<BackendOp> {};

TEST_P(CpuThreadsTest, OneAndTwoThreadsAreBitIdentical) {
  const OpEntry* entry = FindEntry(GetParam());
  ASSERT_NE(entry, nullptr) << "no table entry for " << BackendOpName(GetParam());
  absl::StatusOr<std::unique_ptr<Backend>> one = CreateBackend("cpu", 1);
  absl::StatusOr<std::unique_ptr<Backend>> two = CreateBackend("cpu", 2);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(two.ok()) << two.status();
  for (const OpCase& c : entry->cases()) {
    SCOPED_TRACE(c.name);
    ExpectBitIdentical(RunCase(**two, c, Operands::kAsGiven), RunCase(**one, c, Operands::kAsGiven),
                       "cpu 2 threads vs 1 thread: " + c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, CpuThreadsTest, ::testing::ValuesIn(AllOps()),
                         [](const ::testing::TestParamInfo<BackendOp>& info) {
                           return std::string(BackendOpName(info.param));
                         });

// ---------------------------------------------------------------------------
// Every other backend against the CPU.

class CrossBackendTest : public ::testing::TestWithParam<std::tuple<DeviceUnderTest, BackendOp>> {};

TEST_P(CrossBackendTest, MatchesCpu) {
  const auto& [dev, op] = GetParam();
  const OpEntry* entry = FindEntry(op);
  ASSERT_NE(entry, nullptr) << "no table entry for " << BackendOpName(op);
  absl::StatusOr<std::unique_ptr<Backend>> made = CreateBackend(dev.device);
  if (!made.ok()) {
    if (absl::IsFailedPrecondition(made.status())) {
      GTEST_SKIP() << "no " << dev.device
                   << " backend to compare with the CPU here: " << made.status().message();
    }
    FAIL() << made.status();
  }
  Backend& device = **made;
  absl::StatusOr<std::unique_ptr<Backend>> cpu = CreateBackend("cpu", 2);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const Tolerance& tol = entry->tolerance;
  const bool bf16 = dev.precision == Precision::kBf16;
  for (const OpCase& c : entry->cases()) {
    SCOPED_TRACE(c.name);
    const std::string what = absl::StrCat(device.name(), " vs cpu, ", c.name);
    const Outputs ref = RunCase(**cpu, c, Operands::kAsGiven);
    const Outputs got = RunCase(device, c, Operands::kAsGiven);
    ASSERT_EQ(got.size(), ref.size()) << what;
    if (!bf16) {
      for (size_t j = 0; j < got.size(); ++j) ExpectWithin(got[j], ref[j], tol.fp32, what);
      continue;
    }
    // The CPU on the operands the BF16 mode computes with.
    const Outputs same = RunCase(**cpu, c, Operands::kBf16);
    ASSERT_EQ(same.size(), ref.size()) << what;
    for (size_t j = 0; j < got.size(); ++j) {
      if (got[j].integral) {
        ExpectWithin(got[j], same[j], Bound{}, what);
        continue;
      }
      if (tol.bf16.has_value()) {
        ExpectWithin(got[j], same[j], *tol.bf16, what + " (CPU on BF16-rounded operands)");
      }
      if (tol.bf16_rule_floor.has_value()) {
        ExpectBf16Rule(got[j], ref[j], same[j], *tol.bf16_rule_floor, what);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Devices, CrossBackendTest,
    ::testing::Combine(::testing::ValuesIn(kDevices), ::testing::ValuesIn(AllOps())),
    [](const ::testing::TestParamInfo<std::tuple<DeviceUnderTest, BackendOp>>& info) {
      return absl::StrCat(absl::StrReplaceAll(std::get<0>(info.param).device, {{":", "_"}}), "_",
                          BackendOpName(std::get<1>(info.param)));
    });

}  // namespace
}  // namespace focal::kernels
