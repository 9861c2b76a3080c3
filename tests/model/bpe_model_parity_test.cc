// SPDX-License-Identifier: Apache-2.0
// HF-format checkpoints that carry a tokenizer.json (no tokenizer.model)
// against HF transformers, end to end: LanguageModel::Load picks the BPE
// tokenizer, our ids for the project's texts equal AutoTokenizer's (with and
// without special tokens, the BOS convention read from tokenizer_config.json
// or the post-processor), and the log-probabilities of those ids are within
// 1e-4 of AutoModelForCausalLM's (float32, eager) with the same argmax;
// greedy decoding gives HF generate's ids.
// Goldens: tests/reference/make_bpe_model_reference.py.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "engine/generator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

constexpr double kTolerance = 1e-4;

// The texts of make_bpe_model_reference.py (TEXTS), in order; the golden
// keeps their SHA-256 so the two lists cannot drift apart unnoticed.
const char* const kTexts[] = {
    "A small robot named Pim watered the tomatoes at 6:45 every morning.",
    "  Two leading spaces, a tab\there,\nand a blank line\n\nbefore the end.  ",
    "Prices: 1234 apples cost $56.78 (about 9%)! Don't we'll THEY'RE",
    "na\u00efve caf\u00e9 \u6771\u4eac \U0001F600 \u00dcn\u00efc\u00f6d\u00e9",
    "<|begin_of_text|>Spelt specials: <|endoftext|>, <s> and </s> inside.",
};
constexpr size_t kNumTexts = sizeof(kTexts) / sizeof(kTexts[0]);

struct GoldenText {
  std::string sha256;
  std::vector<int32_t> plain;  // encode(add_special_tokens=False)
  std::vector<int32_t> ids;    // encode(): what was scored
};

struct Golden {
  int32_t bos = -1, eos = -1, prefix = -1;  // HF's ids; -1 = none
  std::vector<GoldenText> texts;
  std::vector<testing::GoldenSequence> seqs;  // the log-probs, via ReadGoldenLogprobs
};

std::vector<int32_t> ReadIds(std::istringstream& ls) {
  std::vector<int32_t> ids;
  int32_t v;
  while (ls >> v) ids.push_back(v);
  return ids;
}

Golden ReadGolden(const std::string& path) {
  Golden g;
  std::istringstream in(testing::ReadFileOrDie(path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "special_ids") {
      ls >> g.bos >> g.eos >> g.prefix;
    } else if (kind == "sequence") {
      g.texts.emplace_back();
    } else if (kind == "text_sha256") {
      ls >> g.texts.back().sha256;
    } else if (kind == "ids_plain") {
      g.texts.back().plain = ReadIds(ls);
    } else if (kind == "tokens") {
      g.texts.back().ids = ReadIds(ls);
    }
  }
  g.seqs = testing::ReadGoldenLogprobs(path);
  return g;
}

class BpeModelParityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    golden_ =
        ReadGolden(testing::SourcePath("tests/testdata/golden/forward/" + GetParam() + ".txt"));
    ASSERT_EQ(golden_.texts.size(), kNumTexts);
    ASSERT_EQ(golden_.seqs.size(), kNumTexts);
    auto m =
        LanguageModel::Load(testing::SourcePath("tests/testdata/models/" + GetParam()), backend_);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = *std::move(m);
    ASSERT_NE(model_->tokenizer(), nullptr);
  }
  kernels::CpuBackend backend_{2};
  std::unique_ptr<LanguageModel> model_;
  Golden golden_;
};

TEST_P(BpeModelParityTest, TokenizerIdsAndBosPolicyMatchHf) {
  const Tokenizer& tok = *model_->tokenizer();
  EXPECT_EQ(tok.name(), "bpe");  // no tokenizer.model here: tokenizer.json was picked
  EXPECT_THAT(tok.path(), ::testing::EndsWith("/tokenizer.json"));
  EXPECT_EQ(tok.bos_id(), golden_.bos);
  EXPECT_EQ(tok.eos_id(), golden_.eos);
  bool hf_adds_bos = false;
  for (size_t i = 0; i < kNumTexts; ++i) {
    const GoldenText& g = golden_.texts[i];
    SCOPED_TRACE(kTexts[i]);
    ASSERT_EQ(Sha256Hex(kTexts[i]), g.sha256) << "text " << i << " differs from the script's";
    // HF's add_special_tokens=True adds BOS and nothing else, or nothing.
    const bool with_bos = g.ids.size() == g.plain.size() + 1;
    ASSERT_TRUE(with_bos || g.ids == g.plain);
    if (with_bos) {
      EXPECT_EQ(g.ids.front(), golden_.bos);
      EXPECT_TRUE(std::equal(g.plain.begin(), g.plain.end(), g.ids.begin() + 1));
    }
    if (i == 0) hf_adds_bos = with_bos;
    EXPECT_EQ(with_bos, hf_adds_bos) << "HF's BOS convention is per tokenizer, not per text";
    auto plain = tok.Encode(kTexts[i], /*add_bos=*/false);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(*plain, g.plain);
    auto ids = tok.Encode(kTexts[i], tok.adds_bos());
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, g.ids);
  }
  EXPECT_EQ(tok.adds_bos(), hf_adds_bos);
}

TEST_P(BpeModelParityTest, LogprobsOfOurIdsMatchHf) {
  const Tokenizer& tok = *model_->tokenizer();
  Transformer& tf = model_->transformer();
  // All texts in one packed forward call, as our tokenizer encodes them.
  std::vector<std::vector<int32_t>> ids(kNumTexts);
  std::vector<KvCache> caches;
  std::vector<std::vector<int64_t>> rows(kNumTexts);
  std::vector<std::vector<int32_t>> targets(kNumTexts);
  for (size_t s = 0; s < kNumTexts; ++s) {
    auto e = tok.Encode(kTexts[s], tok.adds_bos());
    ASSERT_TRUE(e.ok()) << e.status();
    ids[s] = *std::move(e);
    ASSERT_EQ(ids[s], golden_.seqs[s].tokens) << "text " << s;
    auto c = tf.NewCache(static_cast<int64_t>(ids[s].size()));
    ASSERT_TRUE(c.ok()) << c.status();
    caches.push_back(std::move(*c));
    for (size_t i = 1; i <= ids[s].size(); ++i) {
      rows[s].push_back(static_cast<int64_t>(i) - 1);
      targets[s].push_back(i < ids[s].size() ? ids[s][i] : 0);  // last row: argmax only
    }
  }
  std::vector<SeqInput> batch;
  for (size_t s = 0; s < kNumTexts; ++s) batch.push_back({&caches[s], ids[s], rows[s], targets[s]});
  std::vector<std::vector<TokenScore>> out;
  FOCAL_ASSERT_OK(tf.Forward(batch, out));
  double max_diff = 0;
  size_t n = 0;
  for (size_t s = 0; s < kNumTexts; ++s) {
    const testing::GoldenSequence& g = golden_.seqs[s];
    ASSERT_EQ(out[s].size(), g.logprob.size() + 1);
    for (size_t i = 0; i < g.logprob.size(); ++i, ++n) {
      const double d = std::abs(out[s][i].logprob - g.logprob[i]);
      max_diff = std::max(max_diff, d);
      EXPECT_LE(d, kTolerance) << "text " << s << " pos " << i + 1 << ": ours " << out[s][i].logprob
                               << " HF " << g.logprob[i];
      EXPECT_EQ(out[s][i].argmax, g.argmax[i]) << "text " << s << " pos " << i + 1;
    }
    EXPECT_EQ(out[s].back().argmax, g.final_argmax) << "text " << s << " final";
  }
  std::printf("[ parity ] %s: %zu log-probs, max |ours - HF| = %.3g\n", GetParam().c_str(), n,
              max_diff);
}

// HF generate's greedy ids (12 new tokens, no EOS reached) from the golden's
// prompt ids: "A small robot" as HF encodes it, and an empty prompt, which
// is [BOS] or, without BOS, [EOS].
TEST_P(BpeModelParityTest, GreedyMatchesHf) {
  const Tokenizer& tok = *model_->tokenizer();
  std::istringstream in(testing::ReadFileOrDie(
      testing::SourcePath("tests/testdata/golden/forward/" + GetParam() + "_greedy.txt")));
  const char* const prompts[] = {"A small robot", ""};
  std::vector<engine::GenerationRequest> reqs;
  std::vector<std::vector<int32_t>> want;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "text_sha256") {
      std::string sha;
      ls >> sha;
      ASSERT_LT(reqs.size(), 2u);
      const char* prompt = prompts[reqs.size()];
      ASSERT_EQ(Sha256Hex(prompt), sha) << "prompt " << reqs.size();
      auto ids = tok.Encode(prompt, tok.adds_bos());
      ASSERT_TRUE(ids.ok()) << ids.status();
      if (ids->empty()) ids->push_back(tok.bos_id() >= 0 ? tok.bos_id() : tok.eos_id());
      reqs.push_back({*std::move(ids), 12, {}});
    } else if (kind == "prompt") {
      EXPECT_EQ(reqs.back().prompt, ReadIds(ls)) << "prompt " << reqs.size() - 1;
    } else if (kind == "greedy") {
      want.push_back(ReadIds(ls));
    }
  }
  ASSERT_EQ(reqs.size(), 2u);
  ASSERT_EQ(want.size(), 2u);
  engine::GenerationOptions opts;  // no stop ids: HF generated with eos_token_id=None
  auto res = engine::GenerateGreedy(model_->transformer(), tok, reqs, opts);
  ASSERT_TRUE(res.ok()) << res.status();
  for (size_t p = 0; p < 2; ++p) EXPECT_EQ((*res)[p].tokens, want[p]) << "prompt " << p;
}

INSTANTIATE_TEST_SUITE_P(Models, BpeModelParityTest,
                         ::testing::Values("bpe_llama3", "bpe_gpt2", "bpe_spm"));

}  // namespace
}  // namespace focal::model
