// SPDX-License-Identifier: Apache-2.0
// The invariants of docs/focal-attention.md on the CPU backend:
// t = 1 equals base bit for bit; a pinned learned tau equals base; one-shot
// scoring equals token-by-token decoding through the KV cache; a sequence's
// scores do not depend on its batch (bit for bit, any order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "model/safetensors_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

std::string ModelDir(const std::string& name) {
  return testing::SourcePath("tests/testdata/models/" + name);
}

class InvariantsTest : public ::testing::Test {
 public:
  kernels::CpuBackend backend_{2};

  std::unique_ptr<LanguageModel> Load(const std::string& dir,
                                      std::optional<double> t = std::nullopt) {
    LoadOptions o;
    o.require_tokenizer = false;
    o.focal_temperature = t;
    auto m = LanguageModel::Load(dir, backend_, o);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  }

  static std::vector<std::vector<int32_t>> Sequences(int vocab) {
    std::mt19937 rng(7);
    std::vector<std::vector<int32_t>> seqs;
    for (int len : {1, 2, 9, 40, 70, 131}) {
      std::vector<int32_t> s = {1};
      while (static_cast<int>(s.size()) < len) s.push_back(3 + rng() % (vocab - 3));
      seqs.push_back(s);
    }
    return seqs;
  }

  // Scores of every next token in each sequence, all sequences packed in
  // `order` into one forward call.
  std::vector<std::vector<TokenScore>> ScoreBatch(LanguageModel& m,
                                                  const std::vector<std::vector<int32_t>>& seqs,
                                                  const std::vector<size_t>& order) {
    Transformer& tf = m.transformer();
    std::vector<KvCache> caches;
    std::vector<std::vector<int64_t>> rows(seqs.size());
    std::vector<std::vector<int32_t>> tg(seqs.size());
    std::vector<SeqInput> batch;
    for (size_t s : order) {
      caches.push_back(*tf.NewCache(1));
      for (size_t i = 0; i < seqs[s].size(); ++i) {
        rows[s].push_back(static_cast<int64_t>(i));
        tg[s].push_back(i + 1 < seqs[s].size() ? seqs[s][i + 1] : 5);
      }
    }
    for (size_t k = 0; k < order.size(); ++k) {
      const size_t s = order[k];
      batch.push_back({&caches[k], seqs[s], rows[s], tg[s]});
    }
    std::vector<std::vector<TokenScore>> out, by_seq(seqs.size());
    absl::Status st = tf.Forward(batch, out);
    EXPECT_TRUE(st.ok()) << st;
    for (size_t k = 0; k < order.size(); ++k) by_seq[order[k]] = out[k];
    return by_seq;
  }

  std::vector<std::vector<TokenScore>> ScoreAll(LanguageModel& m,
                                                const std::vector<std::vector<int32_t>>& seqs) {
    std::vector<size_t> order(seqs.size());
    std::iota(order.begin(), order.end(), 0);
    return ScoreBatch(m, seqs, order);
  }
};

void ExpectBitIdentical(const std::vector<std::vector<TokenScore>>& a,
                        const std::vector<std::vector<TokenScore>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t s = 0; s < a.size(); ++s) {
    ASSERT_EQ(a[s].size(), b[s].size());
    for (size_t i = 0; i < a[s].size(); ++i) {
      ASSERT_EQ(std::memcmp(&a[s][i].logprob, &b[s][i].logprob, sizeof(double)), 0)
          << what << " seq " << s << " row " << i << ": " << a[s][i].logprob << " vs "
          << b[s][i].logprob;
      ASSERT_EQ(a[s][i].argmax, b[s][i].argmax) << what;
    }
  }
}

TEST_F(InvariantsTest, TemperatureOneEqualsBaseBitForBit) {
  auto base = Load(ModelDir("gqa_untied"));
  auto t1 = Load(ModelDir("gqa_untied"), 1.0);
  auto t04 = Load(ModelDir("gqa_untied"), 0.4);
  ASSERT_TRUE(base && t1 && t04);
  auto seqs = Sequences(320);
  auto b = ScoreAll(*base, seqs);
  ExpectBitIdentical(b, ScoreAll(*t1, seqs), "t=1 vs base");
  // And the override really changes the model.
  auto f = ScoreAll(*t04, seqs);
  EXPECT_GT(std::abs(f[3][10].logprob - b[3][10].logprob), 1e-3);
}

TEST_F(InvariantsTest, PinnedLearnedTauEqualsBase) {
  // gqa_untied plus focal_tau w = 0, b = sqrt(head_dim) = 4, wide bounds.
  std::string dir = testing::CopyDirToTemp(ModelDir("gqa_untied"), "pinned");
  auto store = TensorStore::OpenDir(dir);
  ASSERT_TRUE(store.ok());
  std::map<std::string, F32Tensor> t;
  for (const auto& [name, info] : store->tensors()) {
    F32Tensor x{info.shape, std::vector<float>(info.bytes / 4)};
    std::memcpy(x.data.data(), info.data, info.bytes);
    t[name] = std::move(x);
  }
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".self_attn.focal_tau.";
    t[p + "weight"] = {{64}, std::vector<float>(64, 0.0f)};
    t[p + "bias"] = {{1}, {4.0f}};
  }
  FOCAL_ASSERT_OK(WriteSafetensors(dir + "/model.safetensors", t));
  std::string cfg = testing::ReadFileOrDie(dir + "/config.json");
  for (const char* red : {"token", "sequence_mean"}) {
    testing::WriteStringToFile(
        dir + "/config.json",
        absl::StrReplaceAll(
            cfg, {{"\"torch_dtype\"", std::string("\"focal_attention\": {\"mode\": \"learned\", "
                                                  "\"tau_min\": 0.01, \"tau_max\": 1000, "
                                                  "\"reduction\": \"") +
                                          red + "\"}, \"torch_dtype\""}}));
    auto learned = Load(dir);
    auto base = Load(ModelDir("gqa_untied"));
    ASSERT_TRUE(learned && base);
    auto seqs = Sequences(320);
    ExpectBitIdentical(ScoreAll(*base, seqs), ScoreAll(*learned, seqs), red);
  }
}

// One call for the whole sequence vs feeding it one token at a time through
// the cache. Same math, different BLAS shapes: equal to rounding.
void ExpectOneShotEqualsIncremental(InvariantsTest* t, LanguageModel& m) {
  auto seqs = InvariantsTest::Sequences(static_cast<int>(m.config().vocab_size));
  Transformer& tf = m.transformer();
  for (const auto& seq : seqs) {
    KvCache one = *tf.NewCache(1);
    std::vector<int64_t> rows(seq.size());
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<int32_t> tg(seq.size(), 5);
    for (size_t i = 0; i + 1 < seq.size(); ++i) tg[i] = seq[i + 1];
    SeqInput in{&one, seq, rows, tg};
    std::vector<std::vector<TokenScore>> full;
    FOCAL_ASSERT_OK(tf.Forward(absl::MakeConstSpan(&in, 1), full));
    KvCache inc = *tf.NewCache(1);  // grows as it goes: exercises Reserve
    for (size_t i = 0; i < seq.size(); ++i) {
      const int64_t r0 = 0;
      SeqInput step{&inc, absl::MakeConstSpan(&seq[i], 1), absl::MakeConstSpan(&r0, 1),
                    absl::MakeConstSpan(&tg[i], 1)};
      std::vector<std::vector<TokenScore>> o;
      FOCAL_ASSERT_OK(tf.Forward(absl::MakeConstSpan(&step, 1), o));
      EXPECT_NEAR(o[0][0].logprob, full[0][i].logprob, 1e-5) << "len " << seq.size() << " i " << i;
    }
    EXPECT_EQ(inc.length(), static_cast<int64_t>(seq.size()));
  }
  (void)t;
}

TEST_F(InvariantsTest, OneShotEqualsTokenByToken) {
  for (const char* name :
       {"gqa_untied", "focal_const_per_layer", "focal_learned_token", "tied_theta_llama3"}) {
    SCOPED_TRACE(name);
    auto m = Load(ModelDir(name));
    ASSERT_TRUE(m);
    ExpectOneShotEqualsIncremental(this, *m);
  }
}

TEST_F(InvariantsTest, BatchInvarianceBitForBit) {
  for (const char* name :
       {"gqa_untied", "focal_learned_token", "focal_learned_mean", "bf16_headdim_sharded"}) {
    SCOPED_TRACE(name);
    auto m = Load(ModelDir(name));
    ASSERT_TRUE(m);
    auto seqs = Sequences(320);
    auto batched = ScoreAll(*m, seqs);
    for (size_t s = 0; s < seqs.size(); ++s) {
      auto alone = ScoreBatch(*m, seqs, {s});
      std::vector<std::vector<TokenScore>> a = {alone[s]}, b = {batched[s]};
      ExpectBitIdentical(a, b, std::string(name) + " alone vs batched, seq " + std::to_string(s));
    }
    std::vector<size_t> order(seqs.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(3);
    for (int round = 0; round < 3; ++round) {
      std::shuffle(order.begin(), order.end(), rng);
      ExpectBitIdentical(batched, ScoreBatch(*m, seqs, order), std::string(name) + " shuffled");
    }
  }
}

TEST_F(InvariantsTest, SequenceMeanUsesEveryTokenSoFar) {
  // sequence_mean decoding: the tau of a new chunk is the mean over the whole
  // prefix, so feeding [a b] then [c] equals one call on [a b c] only at the
  // last row; the cache must carry the running sum.
  auto m = Load(ModelDir("focal_learned_mean"));
  ASSERT_TRUE(m);
  Transformer& tf = m->transformer();
  std::vector<int32_t> seq = {1, 50, 60, 70, 80};
  KvCache one = *tf.NewCache(8);
  const int64_t last = 4;
  const int32_t tgt = 9;
  SeqInput in{&one, seq, absl::MakeConstSpan(&last, 1), absl::MakeConstSpan(&tgt, 1)};
  std::vector<std::vector<TokenScore>> a, b;
  FOCAL_ASSERT_OK(tf.Forward(absl::MakeConstSpan(&in, 1), a));
  EXPECT_EQ(one.tau_count()[0], 5);
  KvCache two = *tf.NewCache(8);
  const int64_t none = 0;
  SeqInput p1{&two, absl::MakeConstSpan(seq).subspan(0, 4), {}, {}};
  FOCAL_ASSERT_OK(tf.Forward(absl::MakeConstSpan(&p1, 1), b));
  SeqInput p2{&two, absl::MakeConstSpan(seq).subspan(4, 1), absl::MakeConstSpan(&none, 1),
              absl::MakeConstSpan(&tgt, 1)};
  FOCAL_ASSERT_OK(tf.Forward(absl::MakeConstSpan(&p2, 1), b));
  EXPECT_EQ(two.tau_count()[1], 5);
  // Layer 0 sees the embeddings, so its per-token tau inputs are the same in
  // both runs and the running sum must match; deeper layers legitimately
  // differ (their inputs depend on earlier chunks' tau).
  EXPECT_NEAR(two.tau_sum()[0], one.tau_sum()[0], 1e-9);
  // The last row differs (earlier rows of chunk 1 used a 4-token mean) but
  // stays close; it must not be identical to a chunk-local mean.
  EXPECT_NE(a[0][0].logprob, b[0][0].logprob);
}

TEST_F(InvariantsTest, RefusesSequencesPastMaxPosition) {
  auto m = Load(ModelDir("gqa_untied"));
  ASSERT_TRUE(m);
  std::vector<int32_t> seq(257, 5);
  KvCache c = *m->transformer().NewCache(1);
  SeqInput in{&c, seq, {}, {}};
  std::vector<std::vector<TokenScore>> out;
  EXPECT_THAT(m->transformer().Forward(absl::MakeConstSpan(&in, 1), out),
              testing::StatusIs(absl::StatusCode::kOutOfRange,
                                ::testing::HasSubstr("max_position_embeddings (256)")));
  EXPECT_EQ(c.length(), 0);
}

}  // namespace
}  // namespace focal::model
