// SPDX-License-Identifier: Apache-2.0
// The bundled stories260K (converted from llama2.c): greedy decoding and
// tokenization against HF transformers' goldens, and the story llama2.c's
// documentation gives.
#include <sstream>

#include "base/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

class Stories260KTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = LanguageModel::Load(testing::Stories260KDir(), backend_);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::move(*m);
  }
  kernels::CpuBackend backend_{2};
  std::unique_ptr<LanguageModel> model_;
};

TEST_F(Stories260KTest, GreedyFromBosMatchesHfFor200Tokens) {
  std::istringstream in(testing::ReadFileOrDie(
      testing::SourcePath("tests/testdata/golden/forward/stories260K_greedy.txt")));
  std::vector<int32_t> want;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ids ", 0) != 0) continue;
    std::istringstream ls(line.substr(4));
    int32_t id;
    while (ls >> id) want.push_back(id);
  }
  ASSERT_EQ(want.size(), 200u);
  const int32_t bos = model_->tokenizer()->bos_id();
  auto got = model_->transformer().Generate(absl::MakeConstSpan(&bos, 1), 200, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want);
  auto text = model_->tokenizer()->Decode(*got);
  ASSERT_TRUE(text.ok());
  // The story llama2.c documents for this model (doc/stories260K.md).
  EXPECT_THAT(*text, ::testing::StartsWith(
                         "Once upon a time, there was a little girl named Lily. She loved to play "
                         "outside in the park. One day, she saw a big, red ball. She wanted to "
                         "play with it, but it was too high."));
}

TEST_F(Stories260KTest, TokenizerMatchesHfLlamaTokenizer) {
  std::istringstream in(testing::ReadFileOrDie(
      testing::SourcePath("tests/testdata/golden/forward/stories260K_tokenize.txt")));
  std::string line, text;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.rfind("text ", 0) == 0) {
      auto v = ParseJson(line.substr(5), "golden");
      ASSERT_TRUE(v.ok());
      text = v->string_value();
    } else if (line.rfind("ids ", 0) == 0 || line == "ids") {
      std::vector<int32_t> want;
      std::istringstream ls(line.size() > 4 ? line.substr(4) : "");
      int32_t id;
      while (ls >> id) want.push_back(id);
      auto got = model_->tokenizer()->Encode(text, /*add_bos=*/true);
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(*got, want) << "text: " << text;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5);
}

TEST_F(Stories260KTest, StopsAtStopTokenAndAtContextEnd) {
  EXPECT_EQ(model_->StopIds(), std::vector<int64_t>{2});
  const int32_t bos = 1;
  auto full = model_->transformer().Generate(absl::MakeConstSpan(&bos, 1), 30, {});
  ASSERT_TRUE(full.ok());
  // Stop at the first occurrence of the token generated 20th.
  const int64_t stop = (*full)[19];
  auto it = std::find(full->begin(), full->end(), stop);
  auto stopped = model_->transformer().Generate(absl::MakeConstSpan(&bos, 1), 30,
                                                absl::MakeConstSpan(&stop, 1));
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(*stopped, std::vector<int32_t>(full->begin(), it + 1));
  // Without stop ids it ends when the 512-position context is full.
  auto longest = model_->transformer().Generate(absl::MakeConstSpan(&bos, 1), 10000, {});
  ASSERT_TRUE(longest.ok());
  EXPECT_EQ(longest->size(), 512u);
}

}  // namespace
}  // namespace focal::model
