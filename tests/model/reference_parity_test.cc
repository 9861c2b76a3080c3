// SPDX-License-Identifier: Apache-2.0
// Log-probabilities against HF transformers (float32, eager attention), from
// goldens written by tests/reference/make_reference.py. All sequences of a
// golden (lengths 1, 6, 23, 57) go through ONE packed forward call.
#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

constexpr double kTolerance = 1e-4;

// Scores every golden sequence in one packed batch and compares.
void ExpectMatchesGolden(const std::string& model_dir, const std::string& golden) {
  kernels::CpuBackend backend(2);
  LoadOptions opts;
  opts.require_tokenizer = false;
  auto m = LanguageModel::Load(model_dir, backend, opts);
  ASSERT_TRUE(m.ok()) << m.status();
  auto seqs = testing::ReadGoldenLogprobs(golden);
  ASSERT_FALSE(seqs.empty()) << golden;
  Transformer& tf = (*m)->transformer();
  std::vector<KvCache> caches;
  std::vector<std::vector<int64_t>> rows(seqs.size());
  std::vector<std::vector<int32_t>> targets(seqs.size());
  std::vector<SeqInput> batch;
  for (size_t s = 0; s < seqs.size(); ++s) {
    auto c = tf.NewCache(static_cast<int64_t>(seqs[s].tokens.size()));
    ASSERT_TRUE(c.ok());
    caches.push_back(std::move(*c));
    for (size_t i = 1; i < seqs[s].tokens.size(); ++i) {
      rows[s].push_back(static_cast<int64_t>(i) - 1);
      targets[s].push_back(seqs[s].tokens[i]);
    }
    // The distribution after the last token: its argmax is in the golden too.
    rows[s].push_back(static_cast<int64_t>(seqs[s].tokens.size()) - 1);
    targets[s].push_back(0);
  }
  for (size_t s = 0; s < seqs.size(); ++s) {
    batch.push_back({&caches[s], seqs[s].tokens, rows[s], targets[s]});
  }
  std::vector<std::vector<TokenScore>> out;
  FOCAL_ASSERT_OK(tf.Forward(batch, out));
  double max_diff = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto& g = seqs[s];
    ASSERT_EQ(out[s].size(), g.logprob.size() + 1);
    for (size_t i = 0; i < g.logprob.size(); ++i) {
      const double d = std::abs(out[s][i].logprob - g.logprob[i]);
      max_diff = std::max(max_diff, d);
      EXPECT_LE(d, kTolerance) << golden << " seq " << s << " pos " << i + 1 << ": ours "
                               << out[s][i].logprob << " HF " << g.logprob[i];
      EXPECT_EQ(out[s][i].argmax, g.argmax[i]) << golden << " seq " << s << " pos " << i + 1;
    }
    EXPECT_EQ(out[s].back().argmax, g.final_argmax) << golden << " seq " << s << " final";
  }
  std::printf("[ parity ] %s: max |ours - HF| = %.3g\n", golden.c_str(), max_diff);
}

class ReferenceParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceParityTest, MatchesHfTransformers) {
  ExpectMatchesGolden(testing::SourcePath("tests/testdata/models/" + GetParam()),
                      testing::SourcePath("tests/testdata/golden/forward/" + GetParam() + ".txt"));
}

INSTANTIATE_TEST_SUITE_P(Models, ReferenceParityTest,
                         ::testing::Values("gqa_untied", "tied_theta_llama3",
                                           "bf16_headdim_sharded", "f16_linear_rope", "mistral",
                                           "headdim64_bf16", "headdim128_bf16", "focal_const",
                                           "focal_const_per_layer", "focal_learned_token",
                                           "focal_learned_mean"));

TEST(ReferenceParityTest, BundledStories260K) {
  ExpectMatchesGolden(testing::Stories260KDir(),
                      testing::SourcePath("tests/testdata/golden/forward/stories260K.txt"));
}

}  // namespace
}  // namespace focal::model
