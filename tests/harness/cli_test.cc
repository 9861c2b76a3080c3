// SPDX-License-Identifier: Apache-2.0
// End-to-end: the focal-eval binary as a user runs it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "base/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Result = testing::CommandResult;

Result RunCli(const std::string& args) { return testing::RunOnStories260K(FOCAL_EVAL_BIN, args); }

std::string Model(const std::string& name) {
  return testing::SourcePath("tests/testdata/models/" + name);
}

TEST(CliTest, HelpAndUsageErrors) {
  Result h = RunCli("--help");
  EXPECT_EQ(h.code, 0);
  for (const char* c : {"inspect", "generate", "score", "convert-llama2c"}) {
    EXPECT_THAT(h.out, HasSubstr(c));
  }
  for (const char* c : {"inspect", "generate", "score", "convert-llama2c"}) {
    Result sub = RunCli(std::string(c) + " --help");
    EXPECT_EQ(sub.code, 0) << c;
  }
  EXPECT_THAT(RunCli("score --help").out, HasSubstr("--focal-temperature"));
  EXPECT_EQ(RunCli("").code, 2);
  EXPECT_EQ(RunCli("frobnicate").code, 2);
  EXPECT_EQ(RunCli("score").code, 2);  // --text is required
  EXPECT_EQ(RunCli("convert-llama2c onlyone").code, 2);
}

// Without --model every command uses SmolLM2-135M-Instruct from the cache
// scripts/fetch_default_model.sh fills; without it they say how to get it.
TEST(CliTest, DefaultModelIsSmolLm2) {
  const std::string unpinned = "env -u FOCAL_DEFAULT_MODEL " + std::string(FOCAL_EVAL_BIN);
  Result missing = testing::RunCommand("FOCAL_CACHE_DIR=/nonexistent " + unpinned, "inspect");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/models/smollm2-135m-instruct/"
                                     "SmolLM2-135M-Instruct.Q4_1.gguf"));
  EXPECT_THAT(missing.err, HasSubstr("scripts/fetch_default_model.sh"));
  EXPECT_EQ(
      testing::RunCommand("FOCAL_CACHE_DIR=/nonexistent " + unpinned, "run --tasks piqa --limit 1")
          .code,
      1);

  FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "scripts/fetch_default_model.sh");
  const std::string bin =
      "FOCAL_DEFAULT_MODEL='" + testing::DefaultModelGguf() + "' " + FOCAL_EVAL_BIN;
  Result inspect = testing::RunCommand(bin, "inspect");
  ASSERT_EQ(inspect.code, 0) << inspect.err;
  EXPECT_THAT(inspect.out,
              HasSubstr("SmolLM2-135M-Instruct.Q4_1.gguf (GGUF v3, architecture llama"));
  EXPECT_THAT(inspect.out, HasSubstr("layers:       30"));
  // SmolLM2's tokenizer adds no BOS (as HF's), so `score` starts at the text's
  // first token: the HF golden's sequence 0 after its explicit BOS. (The
  // log-probs themselves are smollm2_test's.)
  Result score = testing::RunCommand(
      bin, "score --text 'The lighthouse keeper counted the ships that passed each night.'");
  ASSERT_EQ(score.code, 0) << score.err;
  auto golden = testing::ReadGoldenLogprobs(
      testing::SourcePath("tests/testdata/golden/forward/smollm2_q4_1.txt"));
  ASSERT_FALSE(golden.empty());
  std::istringstream in(score.out);
  std::string line;
  size_t i = 0;
  while (std::getline(in, line)) {
    auto v = ParseJson(line, "stdout");
    ASSERT_TRUE(v.ok()) << line;
    ASSERT_LT(i + 2, golden[0].tokens.size());
    EXPECT_EQ(v->Find("token_id")->integer(), golden[0].tokens[i + 2]);
    ++i;
  }
  EXPECT_EQ(i + 2, golden[0].tokens.size());
  Result gen = testing::RunCommand(bin, "generate --prompt 'The harbor' --max-new-tokens 4");
  ASSERT_EQ(gen.code, 0) << gen.err;
  EXPECT_THAT(gen.out, HasSubstr("The harbor"));
  Result run = testing::RunCommand(bin, "run --tasks piqa --limit 2 --no-progress");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("SmolLM2-135M-Instruct.Q4_1.gguf base | piqa"));
}

TEST(CliTest, ScoreMatchesHfGolden) {
  Result r = RunCli("score --text 'Once upon a time, there was a little girl named Lily.'");
  ASSERT_EQ(r.code, 0) << r.err;
  auto golden = testing::ReadGoldenLogprobs(
      testing::SourcePath("tests/testdata/golden/forward/stories260K.txt"));
  ASSERT_FALSE(golden.empty());
  std::istringstream in(r.out);
  std::string line;
  size_t i = 0;
  while (std::getline(in, line)) {
    auto v = ParseJson(line, "stdout");
    ASSERT_TRUE(v.ok()) << line;
    ASSERT_LT(i, golden[0].logprob.size());
    EXPECT_EQ(v->Find("position")->integer(), static_cast<int64_t>(i + 1));
    EXPECT_EQ(v->Find("token_id")->integer(), golden[0].tokens[i + 1]);
    EXPECT_NEAR(v->Find("logprob")->number(), golden[0].logprob[i], 1e-4);
    ++i;
  }
  EXPECT_EQ(i, golden[0].logprob.size());
}

TEST(CliTest, ScoreNoBosScoresFromTheSecondToken) {
  Result bos = RunCli("score --text 'The cat sat.'");
  Result nobos = RunCli("score --no-bos --text 'The cat sat.'");
  ASSERT_EQ(bos.code, 0);
  ASSERT_EQ(nobos.code, 0) << nobos.err;
  auto count = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  EXPECT_EQ(count(bos.out), count(nobos.out) + 1);
  EXPECT_EQ(RunCli("score --no-bos --text 'a'").code, 1);  // one token: nothing to score
}

TEST(CliTest, GenerateBundledModel) {
  Result r = RunCli("generate --max-new-tokens 40");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              ::testing::StartsWith("Once upon a time, there was a little girl named Lily."));
  Result p = RunCli("generate --prompt 'The dog' --max-new-tokens 10 --focal-temperature 0.4");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, ::testing::StartsWith("The dog"));
}

// A checkpoint with a tokenizer.json (no tokenizer.model): `score` and
// `generate` against HF transformers (tests/reference/make_bpe_model_reference.py).
// bpe_llama3 adds BOS (its post-processor's template); bpe_gpt2 has none, so
// nothing is prepended and an empty prompt starts from EOS.
std::vector<int32_t> GoldenIds(const std::string& file, const std::string& kind, int index) {
  std::istringstream in(testing::ReadFileOrDie(testing::GoldenPath("forward/" + file)));
  std::string line;
  for (int seen = 0; std::getline(in, line);) {
    if (line.rfind(kind + " ", 0) != 0 || seen++ != index) continue;
    std::istringstream ls(line.substr(kind.size()));
    std::vector<int32_t> ids;
    for (int32_t v; ls >> v;) ids.push_back(v);
    return ids;
  }
  ADD_FAILURE() << file << " has no " << kind << " line " << index;
  return {};
}

TEST(CliTest, ScoreBpeModelsMatchHf) {
  for (const std::string name : {"bpe_llama3", "bpe_gpt2"}) {
    SCOPED_TRACE(name);
    // The golden's text 0 (tests/model/bpe_model_parity_test.cc checks its hash).
    Result r =
        RunCli("score --model " + Model(name) +
               " --text 'A small robot named Pim watered the tomatoes at 6:45 every morning.'");
    ASSERT_EQ(r.code, 0) << r.err;
    auto golden = testing::ReadGoldenLogprobs(testing::GoldenPath("forward/" + name + ".txt"));
    ASSERT_FALSE(golden.empty());
    std::istringstream in(r.out);
    std::string line;
    size_t i = 0;
    while (std::getline(in, line)) {
      auto v = ParseJson(line, "stdout");
      ASSERT_TRUE(v.ok()) << line;
      ASSERT_LT(i, golden[0].logprob.size());
      EXPECT_EQ(v->Find("token_id")->integer(), golden[0].tokens[i + 1]);
      EXPECT_NEAR(v->Find("logprob")->number(), golden[0].logprob[i], 1e-4);
      ++i;
    }
    EXPECT_EQ(i, golden[0].logprob.size());
  }
  // --no-bos drops the BOS of bpe_llama3: one scored token fewer.
  Result bos = RunCli("score --model " + Model("bpe_llama3") + " --text 'A small robot'");
  Result nobos =
      RunCli("score --model " + Model("bpe_llama3") + " --no-bos --text 'A small robot'");
  ASSERT_EQ(bos.code, 0) << bos.err;
  ASSERT_EQ(nobos.code, 0) << nobos.err;
  auto count = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  EXPECT_EQ(count(bos.out), count(nobos.out) + 1);
}

TEST(CliTest, GenerateBpeModelsMatchHfGreedy) {
  for (const std::string name : {"bpe_llama3", "bpe_gpt2"}) {
    auto tok = model::LoadTokenizer(Model(name));
    ASSERT_TRUE(tok.ok()) << tok.status();
    for (int p = 0; p < 2; ++p) {  // the golden's prompts: "A small robot", then ""
      SCOPED_TRACE(name + " prompt " + std::to_string(p));
      std::vector<int32_t> ids = GoldenIds(name + "_greedy.txt", "prompt", p);
      const std::vector<int32_t> greedy = GoldenIds(name + "_greedy.txt", "greedy", p);
      ASSERT_EQ(greedy.size(), 12u);
      ids.insert(ids.end(), greedy.begin(), greedy.end());
      auto expected = (*tok)->Decode(ids);
      ASSERT_TRUE(expected.ok()) << expected.status();
      Result r = RunCli("generate --model " + Model(name) + " --max-new-tokens 12" +
                        (p == 0 ? " --prompt 'A small robot'" : ""));
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_EQ(r.out, *expected + "\n");
    }
  }
}

TEST(CliTest, InspectShowsVariant) {
  Result base = RunCli("inspect");
  ASSERT_EQ(base.code, 0) << base.err;
  EXPECT_THAT(base.out, HasSubstr("attention:    base"));
  EXPECT_THAT(base.out, HasSubstr("parameters:   260032"));
  EXPECT_THAT(base.out, HasSubstr("model.safetensors"));
  EXPECT_THAT(RunCli("inspect --focal-temperature 0.4").out,
              HasSubstr("attention:    focal(t=0.4, retrofit)"));
  EXPECT_THAT(RunCli("inspect " + Model("focal_learned_token")).out,
              HasSubstr("attention:    focal(learned, token)"));
  EXPECT_THAT(RunCli("inspect " + Model("focal_const")).out,
              HasSubstr("attention:    focal(t=0.4)"));
  Result sharded = RunCli("inspect " + Model("bf16_headdim_sharded"));
  EXPECT_THAT(sharded.out, HasSubstr("dtype:        BF16"));
  EXPECT_THAT(sharded.out, HasSubstr("tokenizer:    none"));
}

TEST(CliTest, InspectGguf) {
  const std::string path =
      testing::SharedPath("models/tiny-random-llama-2-gguf/llama-2-tiny-random.gguf");
  FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  Result r = RunCli("inspect " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(GGUF v3, architecture llama, 12 tensors)"));
  EXPECT_THAT(r.out, HasSubstr("tensor types: F16 x9, F32 x3"));
  EXPECT_THAT(r.out, HasSubstr("layers:       1"));
  EXPECT_THAT(r.out, HasSubstr("heads:        2 query, 2 kv, head_dim 4"));
  EXPECT_THAT(r.out, HasSubstr("vocab:        32000\n"));
  EXPECT_THAT(r.out, HasSubstr("tokenizer:    bpe, 32000 pieces, bos 1, eos 2\n"));
  // The weights' hash is the GGUF file's.
  const size_t at = r.out.find("weights_sha256: ");
  ASSERT_NE(at, std::string::npos);
  const std::string sha = r.out.substr(at + 16, 64);
  EXPECT_THAT(r.out, HasSubstr("  " + sha + "  llama-2-tiny-random.gguf\n"));
  // Its embedded Llama 2 vocabulary tokenizes as transformers does
  // ([1, 15043, 3186, 29991], the first text of
  // golden/forward/gguf_tiny_random_llama2.txt, whose log-probs gguf_test checks).
  Result score = RunCli("score --model " + path + " --text 'Hello world!'");
  ASSERT_EQ(score.code, 0) << score.err;
  EXPECT_THAT(score.out,
              HasSubstr("{\"position\": 1, \"token_id\": 15043, \"logprob\": -10.33775"));
  EXPECT_THAT(score.out, HasSubstr("{\"position\": 2, \"token_id\": 3186, "));
  EXPECT_THAT(score.out, HasSubstr("{\"position\": 3, \"token_id\": 29991, "));
  EXPECT_THAT(score.out, Not(HasSubstr("\"position\": 4")));
}

TEST(CliTest, ClearErrorsAndNonZeroExit) {
  Result missing = RunCli("score --model /no/such/model --text hi");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/no/such/model"));
  Result notok = RunCli("score --model " + Model("gqa_untied") + " --text hi");
  EXPECT_EQ(notok.code, 1);
  EXPECT_THAT(notok.err, HasSubstr("tokenizer.model"));
  Result badt = RunCli("generate --focal-temperature -1");
  EXPECT_EQ(badt.code, 1);
  EXPECT_THAT(badt.err, HasSubstr("--focal-temperature must be"));
  Result dev = RunCli("inspect --device tpu");
  EXPECT_EQ(dev.code, 1);
  EXPECT_THAT(dev.err, HasSubstr("unknown --device 'tpu'"));
  Result cuda = RunCli("inspect --device cuda");
  EXPECT_EQ(cuda.code, 1);
  EXPECT_THAT(cuda.err, HasSubstr("cuda"));
  std::string long_prompt;
  for (int i = 0; i < 700; ++i) long_prompt += "cat ";
  Result too_long = RunCli("generate --prompt '" + long_prompt + "'");
  EXPECT_EQ(too_long.code, 1);
  EXPECT_THAT(too_long.err, HasSubstr("exceeds max_position_embeddings (512)"));
  Result score_long = RunCli("score --text '" + long_prompt + "'");
  EXPECT_EQ(score_long.code, 1);
  EXPECT_THAT(score_long.err, HasSubstr("max_position_embeddings (512)"));
  Result conv = RunCli("convert-llama2c /no/m.bin /no/t.model " + testing::MakeTempDir("o"));
  EXPECT_EQ(conv.code, 1);
  EXPECT_THAT(conv.err, HasSubstr("/no/m.bin"));
}

}  // namespace
}  // namespace focal
