// SPDX-License-Identifier: Apache-2.0
// lm-eval's request encoding for BPE (tokenizer.json) checkpoints, against
// lm-eval 0.4.13's own HFLM run on them (tests/reference/lm_eval_bpe_reference.py,
// max_length 32): for the three `--add-bos` policies (lm-eval's add_bos_token
// None / True / False), _encode_pair's whitespace move, the empty-context
// prefix token (BOS, else EOS; a continuation that starts with it gives it up),
// no special tokens for a string that already starts with the prefix token's
// text, and left truncation; then the scores of what lm-eval fed its model.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/sha256.h"
#include "engine/scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::engine {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMaxLength = 32;  // lm-eval's max_length in the reference run

// PAIRS of lm_eval_bpe_reference.py, in order (the golden holds their hashes).
const std::pair<const char*, const char*> kPairs[] = {
    {"The robot watered the", " tomatoes"},
    {"Question: How many apples did Pim count?\nAnswer:", " 1234"},
    {"A trailing space ", "moves into the continuation"},
    {"Tab and newline\t\n", "next line"},
    {"", "An empty context is scored from the prefix token."},
    {"", "<|endoftext|> opens this continuation"},
    {"", "<|begin_of_text|>Hello there"},
    {"", "<s> Hello there"},
    {"<|begin_of_text|>A context that spells the Llama 3 BOS", " and goes on"},
    {"<|endoftext|>A context that spells GPT-2's end of text", " and goes on"},
    {"<s> A context that spells the sentencepiece BOS", " and goes on"},
    {"Every morning at 6:45 the small robot walked along the greenhouse, counting 1234 tomatoes, "
     "17 peppers and 9 very old cucumbers before it finally",
     " watered them all."},
};
constexpr size_t kNumPairs = sizeof(kPairs) / sizeof(kPairs[0]);

BosPolicy Policy(const JsonValue& add_bos) {
  if (add_bos.is_null()) return BosPolicy::kAuto;  // lm-eval's default
  return add_bos.bool_value() ? BosPolicy::kAlways : BosPolicy::kNever;
}

std::vector<JsonValue> GoldenRows() {
  return testing::ReadJsonLines(testing::GoldenPath("lm_eval_bpe/requests.jsonl"));
}

TEST(LmEvalBpeTest, RequestsAndScoresMatchLmEval) {
  std::vector<JsonValue> rows = GoldenRows();
  ASSERT_GE(rows.size(), 2u);
  ASSERT_EQ(rows[0].Find("max_length")->integer(), kMaxLength);
  ASSERT_EQ(rows[0].Find("pairs")->integer(), static_cast<int64_t>(kNumPairs));
  rows.erase(rows.begin());
  ASSERT_EQ(rows.size(), 3 * 3 * kNumPairs);  // 3 models x 3 policies

  kernels::CpuBackend backend(2);
  std::map<std::string, std::unique_ptr<model::LanguageModel>> models;
  // Per model: the requests lm-eval scored and the golden rows they came from.
  std::map<std::string, std::vector<TokenizedRequest>> scored;
  std::map<std::string, std::vector<const JsonValue*>> scored_rows;
  int errors = 0;
  for (const JsonValue& row : rows) {
    const std::string name = row.Find("model")->string_value();
    const size_t i = static_cast<size_t>(row.Find("pair")->integer());
    ASSERT_LT(i, kNumPairs);
    const auto& [context, continuation] = kPairs[i];
    ASSERT_EQ(Sha256Hex(absl::StrCat(context, std::string(1, '\0'), continuation)),
              row.Find("pair_sha256")->string_value())
        << "pair " << i << " differs from the script's";
    if (!models.count(name)) {
      auto m =
          model::LanguageModel::Load(testing::SourcePath("tests/testdata/models/" + name), backend);
      ASSERT_TRUE(m.ok()) << m.status();
      models[name] = *std::move(m);
    }
    const model::Tokenizer& tok = *models[name]->tokenizer();
    const BosPolicy policy = Policy(*row.Find("add_bos"));
    SCOPED_TRACE(absl::StrCat(name, " policy ", static_cast<int>(policy), " pair ", i));
    const bool add_bos = ResolveAddBos(policy, tok);
    auto tr = TokenizeRequest(tok, add_bos, kMaxLength, {context, continuation});
    if (const JsonValue* err = row.Find("error")) {
      ADD_FAILURE() << "lm-eval refused it (" << err->string_value() << "); we gave "
                    << (tr.ok() ? "ids" : tr.status().ToString());
      continue;
    }
    const std::vector<int32_t> input = testing::JsonInts(*row.Find("input"));
    const std::vector<int32_t> cont = testing::JsonInts(*row.Find("continuation_enc"));
    if (policy == BosPolicy::kAlways && tok.bos_id() < 0 && *context != '\0' &&
        !absl::StartsWith(context, tok.IdToPiece(tok.eos_id()))) {
      // Deliberate difference: lm-eval's add_bos_token=True silently adds
      // nothing to a tokenizer without BOS; we refuse `--add-bos always`.
      EXPECT_THAT(tr, testing::StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("BOS")));
      ++errors;
      continue;
    }
    ASSERT_TRUE(tr.ok()) << tr.status();
    EXPECT_EQ(tr->continuation, cont);
    EXPECT_EQ(tr->input, input);
    // Left truncation: lm-eval keeps (ctx + cont)[-(L + 1):][:-1].
    const size_t whole = row.Find("context_enc")->array().size() + cont.size();
    EXPECT_EQ(tr->truncated, whole > static_cast<size_t>(kMaxLength) + 1);
    scored[name].push_back(*tr);
    scored_rows[name].push_back(&row);
  }
  EXPECT_GT(errors, 0);  // the gpt2 `always` rows

  double max_diff = 0;
  int n = 0;
  for (auto& [name, reqs] : scored) {
    auto cache = ResultCache::Open("");
    ASSERT_TRUE(cache.ok());
    auto res = ScoreRequests(models[name]->transformer(), reqs, *cache, {}, nullptr);
    ASSERT_TRUE(res.ok()) << res.status();
    for (size_t k = 0; k < reqs.size(); ++k, ++n) {
      const JsonValue& row = *scored_rows[name][k];
      const double ll = row.Find("ll")->number();
      max_diff = std::max(max_diff, std::abs((*res)[k].ll - ll));
      EXPECT_NEAR((*res)[k].ll, ll, 1e-4) << name << " pair " << row.Find("pair")->integer();
      EXPECT_EQ((*res)[k].is_greedy, row.Find("is_greedy")->bool_value())
          << name << " pair " << row.Find("pair")->integer();
    }
  }
  std::printf("[ parity ] %d lm-eval requests on BPE models: max |ours - lm-eval| = %.3g\n", n,
              max_diff);
}

// The `auto` policy follows the tokenizer's own convention: BOS for the
// Llama 3 template and add_bos_token, nothing for the GPT-2 style one.
TEST(LmEvalBpeTest, AutoPolicyIsTheTokenizersConvention) {
  kernels::CpuBackend backend(1);
  for (const auto& [name, adds] :
       {std::pair<std::string, bool>{"bpe_llama3", true}, {"bpe_gpt2", false}, {"bpe_spm", true}}) {
    model::LoadOptions o;
    o.validate_only = true;
    auto m = model::LanguageModel::Load(testing::SourcePath("tests/testdata/models/" + name),
                                        backend, o);
    ASSERT_TRUE(m.ok()) << m.status();
    const model::Tokenizer& tok = *(*m)->tokenizer();
    EXPECT_EQ(ResolveAddBos(BosPolicy::kAuto, tok), adds) << name;
    EXPECT_TRUE(ResolveAddBos(BosPolicy::kAlways, tok)) << name;
    EXPECT_FALSE(ResolveAddBos(BosPolicy::kNever, tok)) << name;
  }
}

}  // namespace
}  // namespace focal::engine
