// SPDX-License-Identifier: Apache-2.0
// The diagnostics behind `compare`: attention entropy / needle mass (checked
// against the attention output itself) and logit agreement (checked against
// a hand-computed KL and against the scores the forward pass returns).
#include "engine/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include "base/asset_root.h"
#include "engine/scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::engine {
namespace {

using kernels::AttentionArgs;
using kernels::AttentionProbe;
using kernels::AttentionSeq;
using kernels::DType;

TEST(KlDivergenceTest, MatchesHandComputedValue) {
  // p = softmax(0, ln 2) = (1/3, 2/3); q uniform.
  const std::vector<float> p = {0.0f, static_cast<float>(std::log(2.0))};
  const std::vector<float> q = {5.0f, 5.0f};
  const double want = (1.0 / 3) * std::log((1.0 / 3) / 0.5) + (2.0 / 3) * std::log((2.0 / 3) / 0.5);
  EXPECT_NEAR(KlDivergence(p, q), want, 1e-7);
  EXPECT_EQ(KlDivergence(p, p), 0.0);
  EXPECT_GT(KlDivergence(q, p), 0.0);
}

// With one-hot values (v_j = e_j), attention's output row is the probability
// vector itself: the stats must agree with it.
TEST(AttentionStatsTest, AgreesWithTheAttentionOutput) {
  kernels::CpuBackend be(2);
  constexpr int H = 4, Hkv = 2, D = 16;
  constexpr int64_t past = 5, rows = 7, n = past + rows;  // n <= D
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1.5f);
  auto fill = [&](kernels::Tensor t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = nd(rng);
  };
  auto q = be.Allocate(DType::kF32, rows, H * D);
  auto k = be.Allocate(DType::kF32, n, Hkv * D);
  auto v = be.Allocate(DType::kF32, n, Hkv * D);
  auto out = be.Allocate(DType::kF32, rows, H * D);
  ASSERT_TRUE(q.ok() && k.ok() && v.ok() && out.ok());
  fill(q->tensor());
  fill(k->tensor());
  for (int64_t j = 0; j < n; ++j) {
    for (int g = 0; g < Hkv; ++g) v->tensor().as<float>()[j * Hkv * D + g * D + j] = 1.0f;
  }
  std::vector<float> scale(rows);
  for (int64_t i = 0; i < rows; ++i) scale[i] = 0.25f + 0.1f * static_cast<float>(i);
  const AttentionSeq seq{0, rows, past, k->tensor(), v->tensor()};
  AttentionArgs a;
  a.q = q->tensor();
  a.seqs = absl::MakeConstSpan(&seq, 1);
  a.scale = scale;
  a.num_heads = H;
  a.num_kv_heads = Hkv;
  a.head_dim = D;
  a.out = out->tensor();
  be.Attention(a);
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{1, 3}, {6, 7}};
  std::vector<AttentionProbe> probes = {{0, 0, ranges}, {0, 4, ranges}, {0, rows - 1, {}}};
  std::vector<float> ent(probes.size() * H), mass(probes.size() * H);
  be.AttentionStats(a, probes, absl::MakeSpan(ent), absl::MakeSpan(mass));
  for (size_t p = 0; p < probes.size(); ++p) {
    for (int h = 0; h < H; ++h) {
      const float* prob = out->tensor().as<float>() + probes[p].row * H * D + h * D;
      double want_h = 0, want_m = 0, total = 0;
      for (int64_t j = 0; j < past + probes[p].row + 1; ++j) {
        want_h -= prob[j] > 0 ? prob[j] * std::log(double{prob[j]}) : 0;
        total += prob[j];
        for (const auto& [b, e] : probes[p].key_ranges) want_m += j >= b && j < e ? prob[j] : 0;
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
      EXPECT_NEAR(ent[p * H + h], want_h, 2e-5) << p << " " << h;
      EXPECT_NEAR(mass[p * H + h], want_m, 2e-6) << p << " " << h;
    }
  }
}

// Uniform attention: entropy log n and mass = share of keys in the ranges,
// also across the 4096-key blocks the host copy works in.
TEST(AttentionStatsTest, UniformAttentionHasMaximalEntropy) {
  kernels::CpuBackend be(1);
  constexpr int D = 8;
  for (const int64_t n : {int64_t{10}, int64_t{5000}}) {
    auto q = be.Allocate(DType::kF32, 1, D);  // zeros: every score equal
    auto k = be.Allocate(DType::kF32, n, D);
    auto v = be.Allocate(DType::kF32, n, D);
    auto out = be.Allocate(DType::kF32, 1, D);
    ASSERT_TRUE(q.ok() && k.ok() && v.ok() && out.ok());
    for (int64_t i = 0; i < k->tensor().numel(); ++i) k->tensor().as<float>()[i] = 0.3f * i;
    const AttentionSeq seq{0, 1, n - 1, k->tensor(), v->tensor()};
    const float scale = 1.0f;
    AttentionArgs a{
        q->tensor(),  absl::MakeConstSpan(&seq, 1), absl::MakeConstSpan(&scale, 1), 1, 1, D,
        out->tensor()};
    const std::vector<std::pair<int64_t, int64_t>> r = {{2, 5}, {4090, 4100}};
    const AttentionProbe p{0, 0, r};
    float ent = 0, mass = 0;
    be.AttentionStats(a, absl::MakeConstSpan(&p, 1), absl::MakeSpan(&ent, 1),
                      absl::MakeSpan(&mass, 1));
    EXPECT_NEAR(ent, std::log(static_cast<double>(n)), 1e-5) << n;
    EXPECT_NEAR(mass, (n > 4100 ? 13.0 : 3.0) / static_cast<double>(n), 1e-6) << n;
  }
}

class BundledModelTest : public ::testing::Test {
 public:
  kernels::CpuBackend backend_{2};

  std::unique_ptr<model::LanguageModel> Load(std::optional<double> t) {
    model::LoadOptions o;
    o.focal_temperature = t;
    auto m = model::LanguageModel::Load(testing::Stories260KDir(), backend_, o);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  }

  // A few prompts of real text, probed at their last token.
  std::vector<ProbeInput> Prompts(const model::Tokenizer& tok) {
    std::vector<ProbeInput> out;
    for (const char* text :
         {"Once upon a time, there was a little girl named Lily. She liked to play in the park.",
          "Tom had a big red ball. He threw it to his dog and the dog ran after it",
          "The sun was warm and the birds were singing in the tall green trees"}) {
      ProbeInput p;
      p.tokens = *tok.Encode(text, true);
      p.row = static_cast<int64_t>(p.tokens.size()) - 1;
      p.key_ranges = {{1, 4}};
      out.push_back(std::move(p));
    }
    return out;
  }
};

// The paper's thesis, measured: a constant t = 0.4 sharpens attention at
// every layer of the bundled model; t = 1 changes nothing.
TEST_F(BundledModelTest, FocalAttentionIsSharperAtEveryLayer) {
  auto base = Load(std::nullopt);
  auto sharp = Load(0.4);
  auto same = Load(1.0);
  ASSERT_TRUE(base && sharp && same);
  const std::vector<ProbeInput> prompts = Prompts(*base->tokenizer());
  auto b = MeasureAttention(base->transformer(), prompts, 16);
  auto s = MeasureAttention(sharp->transformer(), prompts, 16);
  auto o = MeasureAttention(same->transformer(), prompts, 7);  // other chunking, same result
  ASSERT_TRUE(b.ok() && s.ok() && o.ok()) << b.status() << s.status() << o.status();
  ASSERT_EQ(b->samples, 3);
  const int L = b->num_layers, H = b->num_heads;
  ASSERT_EQ(b->entropy.size(), static_cast<size_t>(L * H));
  ASSERT_EQ(b->mass.size(), static_cast<size_t>(L * H));
  for (int l = 0; l < L; ++l) {
    double eb = 0, es = 0;
    for (int h = 0; h < H; ++h) {
      eb += b->entropy[l * H + h];
      es += s->entropy[l * H + h];
      EXPECT_NEAR(o->entropy[l * H + h], b->entropy[l * H + h], 1e-5) << l << " " << h;
      EXPECT_NEAR(o->mass[l * H + h], b->mass[l * H + h], 1e-6) << l << " " << h;
    }
    EXPECT_LT(es, eb) << "layer " << l;
  }
}

TEST_F(BundledModelTest, LogitAgreement) {
  auto base = Load(std::nullopt);
  auto base2 = Load(std::nullopt);
  auto sharp = Load(0.4);
  ASSERT_TRUE(base && base2 && sharp);
  const model::Tokenizer& tok = *base->tokenizer();
  std::vector<TokenizedRequest> reqs;
  int64_t tokens = 0;
  for (const auto& [ctx, cont] : std::vector<std::pair<std::string, std::string>>{
           {"Once upon a time, there was", " a little girl"},
           {"Tom had a big red ball.", " He threw it"},
           {"Once upon a time, there was", " a little girl"},  // a repeat: counted once
           {"The dog", " ran"},
           {"Once upon a time, there was", " a big dog"}}) {  // shares request 0's context
    tasks::LoglikelihoodRequest r;
    r.context = ctx;
    r.continuation = cont;
    auto tr = TokenizeRequest(tok, true, 512, r);
    ASSERT_TRUE(tr.ok());
    if (reqs.size() != 2) tokens += tr->continuation.size();  // request 2 repeats request 0
    reqs.push_back(*tr);
  }
  auto self = MeasureAgreement(base->transformer(), base2->transformer(), reqs, 16);
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_EQ(self->tokens, tokens);
  EXPECT_EQ(self->mean_kl, 0.0);
  EXPECT_EQ(self->max_kl, 0.0);
  EXPECT_EQ(self->same_argmax, 1.0);
  auto diff = MeasureAgreement(base->transformer(), sharp->transformer(), reqs, 4096);
  ASSERT_TRUE(diff.ok()) << diff.status();
  // Independently: every distinct request in one shot through both models,
  // KL from the logits at its scored rows (no shared prefixes, no packing).
  std::vector<double> kls;
  for (size_t i : {0, 1, 3, 4}) {
    const TokenizedRequest& r = reqs[i];
    std::vector<model::ForwardExtras> ex(2);
    std::vector<std::vector<model::TokenScore>> out;
    std::vector<int64_t> rows;
    for (size_t j = r.input.size() - r.continuation.size(); j < r.input.size(); ++j) {
      rows.push_back(static_cast<int64_t>(j));
    }
    for (int m = 0; m < 2; ++m) {
      model::Transformer& tf = (m == 0 ? base : sharp)->transformer();
      auto cache = tf.NewCache(static_cast<int64_t>(r.input.size()));
      ASSERT_TRUE(cache.ok());
      model::SeqInput in{&*cache, r.input, rows, r.continuation};
      ex[m].want_logits = true;
      ASSERT_TRUE(tf.Forward(absl::MakeConstSpan(&in, 1), out, &ex[m]).ok());
    }
    const int64_t V = base->config().vocab_size;
    for (size_t j = 0; j < rows.size(); ++j) {
      kls.push_back(KlDivergence(absl::MakeConstSpan(ex[0].logits).subspan(j * V, V),
                                 absl::MakeConstSpan(ex[1].logits).subspan(j * V, V)));
    }
  }
  ASSERT_EQ(static_cast<int64_t>(kls.size()), diff->tokens);
  double mean = 0;
  for (double k : kls) mean += k / static_cast<double>(kls.size());
  EXPECT_NEAR(diff->mean_kl, mean, 1e-6 * std::max(1.0, mean));
  EXPECT_NEAR(diff->max_kl, *std::max_element(kls.begin(), kls.end()), 1e-5);
  EXPECT_EQ(diff->tokens, tokens);
  EXPECT_GT(diff->mean_kl, 0.0);
  EXPECT_LE(diff->median_kl, diff->p99_kl);
  EXPECT_LE(diff->p99_kl, diff->max_kl);
  EXPECT_GE(diff->same_argmax, 0.0);
  EXPECT_LE(diff->same_argmax, 1.0);
}

// The logits handed out for agreement are the ones the scores come from.
TEST_F(BundledModelTest, ExtraLogitsMatchTheScores) {
  auto m = Load(0.4);
  ASSERT_TRUE(m);
  model::Transformer& tf = m->transformer();
  const std::vector<int32_t> seq = *m->tokenizer()->Encode("Lily went to the park", true);
  std::vector<int64_t> rows(seq.size() - 1);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int32_t> targets(seq.begin() + 1, seq.end());
  auto cache = tf.NewCache(static_cast<int64_t>(seq.size()));
  ASSERT_TRUE(cache.ok());
  model::SeqInput in{&*cache, seq, rows, targets};
  model::ForwardExtras ex;
  ex.want_logits = true;
  std::vector<std::vector<model::TokenScore>> out;
  ASSERT_TRUE(tf.Forward(absl::MakeConstSpan(&in, 1), out, &ex).ok());
  const int64_t V = tf.config().vocab_size;
  ASSERT_EQ(ex.logits.size(), rows.size() * V);
  for (size_t r = 0; r < rows.size(); ++r) {
    const float* row = ex.logits.data() + r * V;
    double mx = row[0];
    int64_t best = 0;
    for (int64_t j = 1; j < V; ++j) {
      if (row[j] > mx) mx = row[best = j];
    }
    double z = 0;
    for (int64_t j = 0; j < V; ++j) z += std::exp(row[j] - mx);
    EXPECT_NEAR(row[targets[r]] - mx - std::log(z), out[0][r].logprob, 1e-9);
    EXPECT_EQ(best, out[0][r].argmax);
  }
}

// Parity with HF transformers (tests/reference/make_diagnostics_reference.py):
// per-position KL(base || t=0.4) and, at the last position, every layer's and
// head's attention entropy and mass on keys [2, 6), for three sentences.
TEST_F(BundledModelTest, MatchesHfTransformers) {
  auto base = Load(std::nullopt);
  auto sharp = Load(0.4);
  ASSERT_TRUE(base && sharp);
  std::ifstream in(testing::SourcePath("tests/testdata/golden/diagnostics/stories260K_t0.4.txt"));
  ASSERT_TRUE(in.good());
  struct Seq {
    std::vector<int32_t> tokens;
    std::map<int64_t, double> kl;
    std::map<std::tuple<std::string, int, int>, double> entropy, mass;
  };
  std::vector<Seq> seqs;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "seq") {
      seqs.emplace_back();
      for (int32_t t; ls >> t;) seqs.back().tokens.push_back(t);
    } else if (kind == "kl") {
      int64_t row;
      double v;
      ls >> row >> v;
      seqs.back().kl[row] = v;
    } else if (kind == "entropy" || kind == "mass") {
      std::string model;
      int l, h;
      double v;
      ls >> model >> l >> h >> v;
      (kind == "entropy" ? seqs.back().entropy : seqs.back().mass)[{model, l, h}] = v;
    }
  }
  ASSERT_EQ(seqs.size(), 3u);
  const int64_t V = base->config().vocab_size;
  const int L = static_cast<int>(base->config().num_layers);
  const int H = static_cast<int>(base->config().num_heads);
  for (const Seq& s : seqs) {
    const int64_t n = static_cast<int64_t>(s.tokens.size());
    ASSERT_EQ(static_cast<int64_t>(s.kl.size()), n);
    std::vector<int64_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<int32_t> targets(n, 0);
    std::vector<model::ForwardExtras> ex(2);
    for (int m = 0; m < 2; ++m) {
      model::Transformer& tf = (m == 0 ? base : sharp)->transformer();
      auto cache = tf.NewCache(n);
      ASSERT_TRUE(cache.ok());
      model::SeqInput seq{&*cache, s.tokens, rows, targets};
      std::vector<std::vector<model::TokenScore>> out;
      ex[m].want_logits = true;
      ASSERT_TRUE(tf.Forward(absl::MakeConstSpan(&seq, 1), out, &ex[m]).ok());
    }
    for (int64_t r = 0; r < n; ++r) {
      const double kl = KlDivergence(absl::MakeConstSpan(ex[0].logits).subspan(r * V, V),
                                     absl::MakeConstSpan(ex[1].logits).subspan(r * V, V));
      EXPECT_NEAR(kl, s.kl.at(r), 1e-5 + 1e-4 * s.kl.at(r)) << "row " << r;
    }
    const ProbeInput probe{s.tokens, n - 1, {{2, 6}}};
    for (const char* name : {"base", "focal"}) {
      auto& m = std::string(name) == "base" ? base : sharp;
      auto a = MeasureAttention(m->transformer(), {probe}, 16);
      ASSERT_TRUE(a.ok()) << a.status();
      for (int l = 0; l < L; ++l) {
        for (int h = 0; h < H; ++h) {
          EXPECT_NEAR(a->entropy[l * H + h], s.entropy.at({name, l, h}), 1e-4)
              << name << " layer " << l << " head " << h;
          EXPECT_NEAR(a->mass[l * H + h], s.mass.at({name, l, h}), 1e-5)
              << name << " layer " << l << " head " << h;
        }
      }
    }
  }
}

TEST_F(BundledModelTest, ProbeOutsideThePromptIsAnError) {
  auto m = Load(std::nullopt);
  ASSERT_TRUE(m);
  ProbeInput p;
  p.tokens = {1, 5, 6};
  p.row = 3;
  auto s = MeasureAttention(m->transformer(), {p}, 16);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace focal::engine
