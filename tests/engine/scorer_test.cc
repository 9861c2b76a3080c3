// SPDX-License-Identifier: Apache-2.0
// The shared scorer on the bundled model: lm-eval's tokenization, agreement
// with a plain full-sequence forward pass, invariance to batch size and
// order, and resuming from the cache.
#include "engine/scorer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/bpe_tokenizer.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::engine {
namespace {

class ScorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = model::LanguageModel::Load(testing::Stories260KDir(), backend_);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::move(*m);
  }
  const model::Tokenizer& tok() { return *model_->tokenizer(); }
  TokenizedRequest Tok(const std::string& ctx, const std::string& cont, int64_t max_len = 512) {
    auto r = TokenizeRequest(tok(), true, max_len, {ctx, cont});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : TokenizedRequest{};
  }
  std::vector<TokenizedRequest> Requests() {
    std::vector<TokenizedRequest> rs;
    const char* ctx[] = {"Once upon a time, there was a", "The dog ran to the",
                         "Lily and Tom went to the park. They saw a", ""};
    const char* conts[] = {" little girl", " park", " big tree.", " ball", " tree"};
    for (const char* c : ctx) {
      for (const char* k : conts) rs.push_back(Tok(c, k));
    }
    rs.push_back(rs[3]);  // an exact duplicate
    return rs;
  }
  // The request's score from one plain forward pass over its whole input.
  tasks::LoglikelihoodResult FullForward(const TokenizedRequest& r) {
    model::Transformer& tf = model_->transformer();
    auto c = tf.NewCache(r.input.size());
    if (!c.ok()) {
      ADD_FAILURE() << c.status();
      return {};
    }
    std::vector<int64_t> rows;
    for (size_t k = r.input.size() - r.continuation.size(); k < r.input.size(); ++k) {
      rows.push_back(static_cast<int64_t>(k));
    }
    model::SeqInput in{&*c, r.input, rows, r.continuation};
    std::vector<std::vector<model::TokenScore>> out;
    if (absl::Status s = tf.Forward(absl::MakeConstSpan(&in, 1), out); !s.ok()) {
      ADD_FAILURE() << s;
      return {};
    }
    tasks::LoglikelihoodResult res{0.0, true};
    for (size_t k = 0; k < rows.size(); ++k) {
      res.ll += out[0][k].logprob;
      res.is_greedy = res.is_greedy && out[0][k].argmax == r.continuation[k];
    }
    return res;
  }
  kernels::CpuBackend backend_{2};
  std::unique_ptr<model::LanguageModel> model_;
};

TEST_F(ScorerTest, EncodePairMovesTrailingSpaceAndSplitsJointEncoding) {
  TokenizedRequest a = Tok("The dog ran to the ", "park");
  TokenizedRequest b = Tok("The dog ran to the", " park");
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.continuation, b.continuation);
  auto whole = tok().Encode("The dog ran to the park", true);
  auto ctx = tok().Encode("The dog ran to the", true);
  ASSERT_TRUE(whole.ok() && ctx.ok());
  EXPECT_EQ(b.continuation, std::vector<int32_t>(whole->begin() + ctx->size(), whole->end()));
  std::vector<int32_t> expect_input(whole->begin(), whole->end() - 1);
  EXPECT_EQ(b.input, expect_input);
  // Empty context: [BOS] then the continuation encoded alone.
  TokenizedRequest e = Tok("", " park");
  EXPECT_EQ(e.input.front(), 1);
  auto cont = tok().Encode(" park", false);
  EXPECT_EQ(e.continuation, *cont);
}

// lm-eval's context.rstrip() is Python's: Unicode spaces (no-break,
// ideographic, U+2028) move to the continuation like ASCII ones; other
// trailing characters stay. A byte-level BPE keeps every byte, so a space
// left on the context would leave the continuation's ids without it.
TEST(ScorerRstripTest, TrailingUnicodeSpacesMoveLikePythonRstrip) {
  auto tok = model::BpeTokenizer::Load(
      testing::SourcePath("tests/testdata/tokenizer/gpt2/tokenizer.json"));
  ASSERT_TRUE(tok.ok()) << tok.status();
  const std::string base = "The dog ran to the";
  for (const char* space : {"\u00a0", "\u3000", "\u2028", " \u00a0\t"}) {
    SCOPED_TRACE(space);
    auto a = TokenizeRequest(**tok, false, 512, {base + space, "park"});
    auto plain = TokenizeRequest(**tok, false, 512, {base, std::string(space) + "park"});
    ASSERT_TRUE(a.ok() && plain.ok());
    EXPECT_EQ(a->input, plain->input);
    EXPECT_EQ(a->continuation, plain->continuation);
  }
  for (const char* kept : {"\u00e9", "\u200b"}) {  // zero-width space is not isspace()
    SCOPED_TRACE(kept);
    auto a = TokenizeRequest(**tok, false, 512, {base + kept, " park"});
    auto ctx = (*tok)->Encode(base + kept, false);
    ASSERT_TRUE(a.ok() && ctx.ok());
    EXPECT_EQ(std::vector<int32_t>(a->input.begin(), a->input.begin() + ctx->size()), *ctx);
  }
}

TEST_F(ScorerTest, LeftTruncationLikeLmEval) {
  TokenizedRequest full = Tok("one two three four five six seven eight", " nine");
  TokenizedRequest cut = Tok("one two three four five six seven eight", " nine", 6);
  EXPECT_FALSE(full.truncated);
  EXPECT_TRUE(cut.truncated);
  ASSERT_EQ(cut.input.size(), 6u);
  // The last 6 tokens of (context + continuation)[:-1].
  EXPECT_TRUE(std::equal(cut.input.begin(), cut.input.end(), full.input.end() - 6));
  // A continuation longer than the window: its last max_length tokens are
  // scored, from a window that holds only continuation tokens.
  auto huge = TokenizeRequest(tok(), true, 3, {"a", " very long continuation here"});
  ASSERT_TRUE(huge.ok());
  EXPECT_TRUE(huge->continuation_truncated);
  EXPECT_EQ(huge->continuation.size(), 3u);
  EXPECT_EQ(huge->input.size(), 3u);
  TokenizedRequest ref = Tok("a", " very long continuation here");
  EXPECT_TRUE(
      std::equal(huge->continuation.begin(), huge->continuation.end(), ref.continuation.end() - 3));
}

// One request per (context, continuation), as lm-eval builds them: the
// input is the context and the continuation but its last token. Counts the
// context tokens and the continuation tokens fed after them.
std::vector<TokenizedRequest> EveryContextWithEveryContinuation(
    const std::vector<std::vector<int32_t>>& contexts,
    const std::vector<std::vector<int32_t>>& conts, int64_t* context_tokens, int64_t* fed) {
  std::vector<TokenizedRequest> reqs;
  for (const auto& c : contexts) {
    *context_tokens += static_cast<int64_t>(c.size());
    for (const auto& k : conts) {
      TokenizedRequest r;
      r.input = c;
      r.input.insert(r.input.end(), k.begin(), k.end() - 1);
      r.continuation = k;
      reqs.push_back(r);
      *fed += static_cast<int64_t>(k.size()) - 1;
    }
  }
  return reqs;
}

TEST_F(ScorerTest, MatchesOneFullForwardPerRequest) {
  auto reqs = Requests();
  auto cache = ResultCache::Open("");
  ASSERT_TRUE(cache.ok());
  ScoreStats stats;
  auto got = ScoreRequests(model_->transformer(), reqs, *cache, {}, &stats);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(stats.unique, static_cast<int64_t>(reqs.size()) - 1);  // the duplicate is free
  for (size_t i = 0; i < reqs.size(); ++i) {
    const tasks::LoglikelihoodResult want = FullForward(reqs[i]);
    EXPECT_NEAR((*got)[i].ll, want.ll, 1e-5) << i;
    EXPECT_EQ((*got)[i].is_greedy, want.is_greedy) << i;
  }
}

// Each distinct context runs once, its last row scoring the first token of
// every continuation that shares it; a continuation then feeds only its
// tokens but the last. One-token continuations feed nothing.
TEST_F(ScorerTest, EachContextRunsOnceAndContinuationsFeedAllButTheirLastToken) {
  const std::vector<std::vector<int32_t>> contexts = {{1, 40, 41, 42}, {1, 50}, {1, 40, 41}};
  const std::vector<std::vector<int32_t>> conts = {{60}, {61, 62, 63}, {64, 65}};
  int64_t context_tokens = 0, fed = 0;
  const std::vector<TokenizedRequest> reqs =
      EveryContextWithEveryContinuation(contexts, conts, &context_tokens, &fed);
  const int64_t expected = context_tokens + fed;
  for (int64_t budget : {int64_t{1}, int64_t{4096}}) {
    auto cache = ResultCache::Open("");
    ASSERT_TRUE(cache.ok());
    ScorerOptions o;
    o.batch_tokens = budget;
    ScoreStats stats;
    auto got = ScoreRequests(model_->transformer(), reqs, *cache, o, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(stats.tokens_processed, expected) << "budget " << budget;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const tasks::LoglikelihoodResult want = FullForward(reqs[i]);
      EXPECT_NEAR((*got)[i].ll, want.ll, 1e-5) << "budget " << budget << " request " << i;
      EXPECT_EQ((*got)[i].is_greedy, want.is_greedy) << "budget " << budget << " request " << i;
    }
  }
}

// Contexts that begin with the same min_stem_tokens or more tokens compute
// that stem once per batch, then each context from a copy of its cache. The
// scores are bit-identical to scoring without stems, and match a plain
// forward pass.
TEST_F(ScorerTest, ContextsThatBeginAlikeComputeTheirStemOnce) {
  std::vector<int32_t> passage = {1};
  for (int32_t t = 0; t < 24; ++t) passage.push_back(100 + t);
  // Three questions on the passage (contexts 30, 28 and 27 tokens), one
  // context sharing 20 of its tokens, one sharing only 10, one unrelated.
  std::vector<std::vector<int32_t>> contexts;
  for (const std::vector<int32_t>& tail :
       {std::vector<int32_t>{200, 201, 202, 203, 204}, std::vector<int32_t>{210, 211, 212},
        std::vector<int32_t>{220, 221}}) {
    contexts.push_back(passage);
    contexts.back().insert(contexts.back().end(), tail.begin(), tail.end());
  }
  contexts.push_back(std::vector<int32_t>(passage.begin(), passage.begin() + 20));
  contexts.back().push_back(230);
  contexts.push_back(std::vector<int32_t>(passage.begin(), passage.begin() + 10));
  contexts.back().insert(contexts.back().end(), {240, 241, 242, 243, 244, 245, 246, 247});
  contexts.push_back({1, 250, 251});
  const std::vector<std::vector<int32_t>> conts = {{60}, {61, 62, 63}};
  int64_t context_tokens = 0, fed = 0;
  const std::vector<TokenizedRequest> reqs =
      EveryContextWithEveryContinuation(contexts, conts, &context_tokens, &fed);
  auto score = [&](int64_t budget, int64_t min_stem, ScoreStats* stats) {
    auto cache = ResultCache::Open("");
    EXPECT_TRUE(cache.ok());
    ScorerOptions o;
    o.batch_tokens = budget;
    o.min_stem_tokens = min_stem;
    auto got = ScoreRequests(model_->transformer(), reqs, *cache, o, stats);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<tasks::LoglikelihoodResult>{};
  };
  ScoreStats plain_stats;
  const auto plain = score(4096, 0, &plain_stats);
  EXPECT_EQ(plain_stats.tokens_processed, context_tokens + fed);
  // The four contexts that share 20 or more tokens compute those 20 once:
  // 3 x 20 fewer tokens. (With the 10-token one too, the cluster would
  // save 4 x 10 < 3 x 20: it stays out.)
  ScoreStats stats;
  const auto shared = score(4096, 16, &stats);
  EXPECT_EQ(stats.tokens_processed, context_tokens + fed - 3 * 20);
  // At a 10-token stem threshold the rule is the same: 10 more tokens
  // shared by a fifth context would not pay for shrinking the stem.
  ScoreStats ten_stats;
  const auto ten = score(4096, 10, &ten_stats);
  EXPECT_EQ(ten_stats.tokens_processed, context_tokens + fed - 3 * 20);
  // One group per batch: every batch computes its stem again.
  ScoreStats tiny_stats;
  const auto tiny = score(1, 16, &tiny_stats);
  EXPECT_EQ(tiny_stats.tokens_processed, context_tokens + fed);
  ASSERT_EQ(plain.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    for (const auto* other : {&shared, &ten, &tiny}) {
      ASSERT_EQ(std::memcmp(&(*other)[i].ll, &plain[i].ll, sizeof(double)), 0) << "request " << i;
      ASSERT_EQ((*other)[i].is_greedy, plain[i].is_greedy) << "request " << i;
    }
    const tasks::LoglikelihoodResult want = FullForward(reqs[i]);
    EXPECT_NEAR(plain[i].ll, want.ll, 1e-5) << "request " << i;
  }
}

TEST_F(ScorerTest, InvariantToBatchSizeAndOrder) {
  auto reqs = Requests();
  auto score = [&](std::vector<TokenizedRequest> rs, int64_t budget) {
    auto cache = ResultCache::Open("");
    ScorerOptions o;
    o.batch_tokens = budget;
    auto r = ScoreRequests(model_->transformer(), rs, *cache, o, nullptr);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  auto base = score(reqs, 4096);
  for (int64_t budget : {1, 7, 40, 1000000}) {
    auto other = score(reqs, budget);
    for (size_t i = 0; i < reqs.size(); ++i) {
      ASSERT_EQ(other[i].ll, base[i].ll) << "budget " << budget << " request " << i;
      ASSERT_EQ(other[i].is_greedy, base[i].is_greedy);
    }
  }
  std::vector<size_t> perm(reqs.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(5));
  std::vector<TokenizedRequest> shuffled;
  for (size_t p : perm) shuffled.push_back(reqs[p]);
  auto sh = score(shuffled, 50);
  for (size_t i = 0; i < perm.size(); ++i) ASSERT_EQ(sh[i].ll, base[perm[i]].ll);
}

TEST_F(ScorerTest, ResumesFromCacheFile) {
  const std::string path = testing::MakeTempDir("cache") + "/c.jsonl";
  auto reqs = Requests();
  std::vector<tasks::LoglikelihoodResult> first;
  {
    auto cache = ResultCache::Open(path);
    ASSERT_TRUE(cache.ok());
    ScoreStats st;
    auto r = ScoreRequests(model_->transformer(), reqs, *cache, {}, &st);
    ASSERT_TRUE(r.ok());
    first = *r;
    EXPECT_EQ(st.cached, 0);
  }
  // Simulate a crash mid-write: a torn last line is ignored.
  std::string text = testing::ReadFileOrDie(path);
  testing::WriteStringToFile(path, text + "{\"k\":\"abc\",\"ll\":-1.");
  auto cache = ResultCache::Open(path);
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(cache->size(), reqs.size() - 1);
  ScoreStats st;
  auto again = ScoreRequests(model_->transformer(), reqs, *cache, {}, &st);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(st.cached, static_cast<int64_t>(reqs.size()));
  EXPECT_EQ(st.tokens_processed, 0);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ((*again)[i].ll, first[i].ll);
}

// A CPU device that starts failing (as a lost GPU would) after `n` more
// Sync() calls.
class FailingCpuBackend : public kernels::CpuBackend {
 public:
  // `failed` is notified when the failure happens.
  explicit FailingCpuBackend(absl::Notification* failed) : CpuBackend(1), failed_(failed) {}
  void FailAfter(int n) { left_ = n; }
  absl::Status Sync() override {
    if (left_.fetch_sub(1) <= 0) {
      if (!failed_->HasBeenNotified()) failed_->Notify();
      return absl::UnavailableError("device lost");
    }
    return CpuBackend::Sync();
  }

 private:
  absl::Notification* failed_;
  std::atomic<int> left_{1 << 30};
};

// A CPU device that, once armed, finishes nothing until the other replica has
// failed: otherwise a fast good replica may take every chunk before the
// failing one gets its third, and the failure never happens.
class GatedCpuBackend : public kernels::CpuBackend {
 public:
  explicit GatedCpuBackend(absl::Notification* other_failed)
      : CpuBackend(1), other_failed_(other_failed) {}
  void Arm() { armed_ = true; }
  absl::Status Sync() override {
    if (armed_ && !other_failed_->WaitForNotificationWithTimeout(absl::Seconds(60))) {
      return absl::DeadlineExceededError("the other replica never failed");
    }
    return CpuBackend::Sync();
  }

 private:
  absl::Notification* other_failed_;
  std::atomic<bool> armed_{false};
};

// Replicas of one model share the chunks: the same scores as one device. A
// replica that fails stops the run naming it, and what finished is cached.
TEST_F(ScorerTest, ReplicasScoreAsOneAndAFailingOneStopsTheRun) {
  const std::vector<TokenizedRequest> reqs = Requests();
  ScorerOptions o;
  o.batch_tokens = 7;  // many chunks
  auto cache = ResultCache::Open("");
  auto one = ScoreRequests(model_->transformer(), reqs, *cache, o, nullptr);
  ASSERT_TRUE(one.ok()) << one.status();

  kernels::CpuBackend second_device(1);
  auto second = model::LanguageModel::Load(testing::Stories260KDir(), second_device);
  ASSERT_TRUE(second.ok()) << second.status();
  model::Transformer* const both[] = {&model_->transformer(), &(*second)->transformer()};
  cache = ResultCache::Open("");
  ScoreStats st;
  auto two = ScoreRequests(both, reqs, *cache, o, &st);
  ASSERT_TRUE(two.ok()) << two.status();
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ((*two)[i].ll, (*one)[i].ll) << i;
    EXPECT_EQ((*two)[i].is_greedy, (*one)[i].is_greedy) << i;
  }
  EXPECT_EQ(st.unique, static_cast<int64_t>(reqs.size()) - 1);  // one duplicate

  absl::Notification failed;
  GatedCpuBackend gated(&failed);
  auto good = model::LanguageModel::Load(testing::Stories260KDir(), gated);
  ASSERT_TRUE(good.ok()) << good.status();
  FailingCpuBackend failing(&failed);
  auto lost = model::LanguageModel::Load(testing::Stories260KDir(), failing);
  ASSERT_TRUE(lost.ok()) << lost.status();
  gated.Arm();
  failing.FailAfter(2);
  model::Transformer* const with_lost[] = {&(*good)->transformer(), &(*lost)->transformer()};
  const std::string path = testing::MakeTempDir("replica_cache") + "/c.jsonl";
  {
    auto log = ResultCache::Open(path);
    auto r = ScoreRequests(with_lost, reqs, *log, o, nullptr);
    EXPECT_THAT(r.status(),
                testing::StatusIs(absl::StatusCode::kUnavailable,
                                  ::testing::AllOf(::testing::HasSubstr("replica 1 (cpu)"),
                                                   ::testing::HasSubstr("device lost"))));
  }
  // The chunks finished before the failure are in the log; a rerun on the
  // good device takes them from it and gives the same scores.
  auto log = ResultCache::Open(path);
  ASSERT_TRUE(log.ok());
  const int64_t kept = static_cast<int64_t>(log->size());
  EXPECT_GT(kept, 0);
  ScoreStats rerun;
  auto again = ScoreRequests(model_->transformer(), reqs, *log, o, &rerun);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_GE(rerun.cached, kept);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ((*again)[i].ll, (*one)[i].ll) << i;
}

// A context of whitespace only, without BOS, leaves no token before the
// continuation: a clear error, never another request's score.
TEST_F(ScorerTest, NothingBeforeTheContinuationIsAnError) {
  auto bare = TokenizeRequest(tok(), /*add_bos=*/false, 512, {"  ", "tree"});
  EXPECT_THAT(bare.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                               ::testing::HasSubstr("only whitespace")));
  EXPECT_TRUE(TokenizeRequest(tok(), /*add_bos=*/true, 512, {"  ", "tree"}).ok());
  TokenizedRequest bad;
  bad.input = {5};
  bad.continuation = {5, 6, 7};
  auto cache = ResultCache::Open("");
  ASSERT_TRUE(cache.ok());
  const std::vector<TokenizedRequest> reqs = {Tok("The dog ran to the", " park"), bad};
  auto got = ScoreRequests(model_->transformer(), reqs, *cache, ScorerOptions{}, nullptr);
  EXPECT_THAT(got.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                              ::testing::HasSubstr("request 1: 3 continuation")));
}

// Learned sequence_mean: one tau mean over the whole sequence read, so the
// scorer may neither share a context prefix nor split the work. Requests
// reading the same golden sequence (HF transformers, one forward over all of
// it) with continuations starting at k1 < k2 share their last term; their
// difference must be HF's log-probabilities of tokens k1 .. k2-1.
TEST(ScorerSequenceMeanTest, MatchesHfWholeSequenceWhateverTheSplit) {
  kernels::CpuBackend backend(2);
  model::LoadOptions lo;
  lo.require_tokenizer = false;
  auto m = model::LanguageModel::Load(
      testing::SourcePath("tests/testdata/models/focal_learned_mean"), backend, lo);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ((*m)->config().focal.reduction, model::FocalConfig::Reduction::kSequenceMean);
  const auto seqs = testing::ReadGoldenLogprobs(
      testing::SourcePath("tests/testdata/golden/forward/focal_learned_mean.txt"));
  std::vector<TokenizedRequest> reqs;
  std::vector<std::pair<size_t, int64_t>> which;  // (sequence, k)
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto& g = seqs[s];
    const int64_t n = static_cast<int64_t>(g.tokens.size());
    if (n < 6) continue;
    for (int64_t k : {int64_t{1}, int64_t{2}, n / 2, n - 1}) {
      TokenizedRequest r;
      r.input = g.tokens;  // context + continuation minus its last token
      r.continuation.assign(g.tokens.begin() + k, g.tokens.end());
      r.continuation.push_back(g.final_argmax);
      reqs.push_back(std::move(r));
      which.emplace_back(s, k);
    }
  }
  ASSERT_GE(reqs.size(), 8u);
  for (int64_t batch_tokens : {int64_t{1}, int64_t{4096}}) {
    auto cache = ResultCache::Open("");
    ASSERT_TRUE(cache.ok());
    ScorerOptions o;
    o.batch_tokens = batch_tokens;
    int batches = 0;
    o.progress = [&](int64_t, int64_t, int64_t) { ++batches; };
    auto got = ScoreRequests((*m)->transformer(), reqs, *cache, o, nullptr);
    ASSERT_TRUE(got.ok()) << got.status();
    // The budget still cuts the work into batches, each logged as it ends: at
    // one token, one request per batch; at 4096, fewer batches than requests.
    if (batch_tokens == 1) {
      EXPECT_EQ(batches, static_cast<int>(reqs.size()));
    } else {
      EXPECT_LT(batches, static_cast<int>(reqs.size()));
    }
    for (size_t i = 0; i + 1 < reqs.size(); ++i) {
      if (which[i].first != which[i + 1].first) continue;
      const auto& g = seqs[which[i].first];
      double want = 0;
      bool greedy = true;
      for (int64_t t = which[i].second; t < which[i + 1].second; ++t) {
        want += g.logprob[t - 1];
        greedy = greedy && g.argmax[t - 1] == g.tokens[t];
      }
      const double diff = (*got)[i].ll - (*got)[i + 1].ll;
      EXPECT_NEAR(diff, want, 1e-4 * static_cast<double>(which[i + 1].second - which[i].second))
          << "sequence " << which[i].first << " tokens " << which[i].second << ".."
          << which[i + 1].second;
      EXPECT_EQ((*got)[i].is_greedy, greedy && (*got)[i + 1].is_greedy);
    }
  }
}

}  // namespace
}  // namespace focal::engine
