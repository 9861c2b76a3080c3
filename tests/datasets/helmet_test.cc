// SPDX-License-Identifier: Apache-2.0
// HELMET tasks as generated (datasets/helmet.h, helmet_kv_rag.cc) with two
// real tokenizers, sentencepiece (Llama 2, from ../shared) and byte-level
// BPE (SmolLM2's, from the default model): every prompt fits its length in
// the model's own tokens, the same seed gives the same prompts (checksums in
// tests/testdata/golden/helmet/prompts_<tokenizer>.txt; FOCAL_UPDATE_GOLDENS=1
// rewrites them), a model answering the gold scores 100 and one answering
// nothing 0; plus HELMET's output parsing and metrics on hand-made cases.
#include "datasets/helmet.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/asset_root.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/long_context.h"
#include "engine/long_context_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/gguf.h"
#include "model/tokenizer.h"
#include "model/tokenizer_loader.h"
#include "tasks/helmet_metrics.h"
#include "tasks/metric_registry.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

using ::testing::HasSubstr;

TEST(HelmetMetricsTest, ParseOutputAsHelmet) {
  using tasks::HelmetParseOutput;
  EXPECT_EQ(HelmetParseOutput("label: 3", "label:"), "3");
  EXPECT_EQ(HelmetParseOutput("label: 3\nlabel: 4", "label:"), "3");
  EXPECT_EQ(HelmetParseOutput("label: label: 4 \n", "label:"), "4");  // one repeat removed
  EXPECT_EQ(HelmetParseOutput("label:\n5", "label:"), "");            // the first line only
  EXPECT_EQ(HelmetParseOutput("LABEL: 7", "label:"), "7");            // case-insensitive
  EXPECT_EQ(HelmetParseOutput("no prefix\nhere", "label:"), "no prefix");
  EXPECT_EQ(HelmetParseOutput("Answer: Paris, France\nQuestion:", "Answer:"), "Paris, France");
}

TEST(HelmetMetricsTest, IclExactMatchNormalises) {
  using tasks::HelmetIclExactMatch;
  const std::vector<std::string> gold = {"3"};
  EXPECT_EQ(HelmetIclExactMatch(" 3", gold), 1);
  EXPECT_EQ(HelmetIclExactMatch(" 3\nText: next", gold), 1);
  EXPECT_EQ(HelmetIclExactMatch(" The 3.", gold), 1);  // article and punctuation dropped
  EXPECT_EQ(HelmetIclExactMatch(" 34", gold), 0);
  EXPECT_EQ(HelmetIclExactMatch("", gold), 0);
  EXPECT_EQ(HelmetIclExactMatch("\n3", gold), 0);  // HELMET reads the rest of the first line
  EXPECT_EQ(HelmetIclExactMatch(" card  ARRIVAL ", {"card arrival"}), 1);
}

TEST(HelmetMetricsTest, SubstringMatchScoresRawAndParsed) {
  using tasks::HelmetKvSubstringMatch;
  using tasks::HelmetRagSubstringMatch;
  const std::vector<std::string> uuid = {"fbc55ec3-4a90-497e-b9a7-7191445ee30b"};
  EXPECT_EQ(HelmetKvSubstringMatch(" fbc55ec3-4a90-497e-b9a7-7191445ee30b", uuid), 1);
  // Normalisation drops the hyphens on both sides.
  EXPECT_EQ(HelmetKvSubstringMatch(" fbc55ec34a90497eb9a77191445ee30b", uuid), 1);
  // The raw output is scored too: an answer on a later line counts.
  EXPECT_EQ(HelmetKvSubstringMatch(" I think\nfbc55ec3-4a90-497e-b9a7-7191445ee30b", uuid), 1);
  EXPECT_EQ(HelmetKvSubstringMatch(" fbc55ec3-4a90-497e-b9a7-7191445ee30c", uuid), 0);
  EXPECT_EQ(HelmetKvSubstringMatch("", uuid), 0);
  const std::vector<std::string> golds = {"Old Trafford", "Trafford"};
  EXPECT_EQ(HelmetRagSubstringMatch(" the old trafford stadium", golds), 1);
  EXPECT_EQ(HelmetRagSubstringMatch(" Manchester", golds), 0);
  EXPECT_EQ(HelmetRagSubstringMatch("", golds), 0);
}

// HELMET's ruler_recall: sum(a.lower() in output.lower()) / len(answers) on
// the answer prefix plus the raw output, no post-processing.
TEST(HelmetMetricsTest, RulerRecallIsTheFractionInPrefixPlusOutput) {
  using tasks::HelmetRulerRecall;
  const std::vector<std::string> four = {"1111111", "2222222", "3333333", "4444444"};
  EXPECT_EQ(HelmetRulerRecall("... text are 1111111, 3333333 and 9999999", four), 0.5);
  EXPECT_EQ(HelmetRulerRecall("are: 4444444 3333333 2222222 1111111", four), 1.0);
  EXPECT_EQ(HelmetRulerRecall("is ABCDEF01-aa", {"abcdef01-AA"}), 1.0);
  // The prefix counts: a gold inside it is found (HELMET prepends it).
  EXPECT_EQ(HelmetRulerRecall("The special magic number for 77 mentioned is", {"77"}), 1.0);
  // No post-processing: a control character between the digits splits them.
  EXPECT_EQ(HelmetRulerRecall("is 12\x01"
                              "34",
                              {"1234"}),
            0.0);
  EXPECT_EQ(HelmetRulerRecall("is 1234", {}), 0.0);
  // Python's lower() beyond ASCII.
  EXPECT_EQ(HelmetRulerRecall("is \xc3\x89T\xc3\x89", {"\xc3\xa9t\xc3\xa9"}), 1.0);
}

struct Tok {
  std::string name;
  std::unique_ptr<model::Tokenizer> tok;
};

// Llama 2 (sentencepiece) from ../shared, SmolLM2 (BPE) from the default model.
std::vector<Tok>& Tokenizers() {
  static auto* toks = [] {
    auto* v = new std::vector<Tok>();
    const std::string llama = testing::SharedPath("models/llama2-tokenizer");
    if (auto t = model::LoadTokenizer(llama); t.ok()) v->push_back({"llama2", *std::move(t)});
    if (auto g = model::GgufFile::Open(testing::DefaultModelGguf()); g.ok()) {
      if (auto t = model::LoadTokenizer(**g); t.ok()) v->push_back({"smollm2", *std::move(t)});
    }
    return v;
  }();
  return *toks;
}

GeneratorOptions Options(const model::Tokenizer& tok, int64_t samples) {
  GeneratorOptions o = engine::TokenizerGeneratorOptions(tok, tok.adds_bos());
  o.num_samples = samples;
  return o;
}

struct TaskCase {
  const char* task;
  const char* generator;
  const char* dataset;  // helmet_icl
  const char* metric;
};
constexpr TaskCase kTasks[] = {
    {"helmet_icl_trec_coarse", "helmet_icl", "trec_coarse", "helmet_icl_exact_match"},
    {"helmet_icl_trec_fine", "helmet_icl", "trec_fine", "helmet_icl_exact_match"},
    {"helmet_icl_banking77", "helmet_icl", "banking77", "helmet_icl_exact_match"},
    {"helmet_icl_clinc150", "helmet_icl", "clinc150", "helmet_icl_exact_match"},
    {"helmet_icl_nlu", "helmet_icl", "nlu", "helmet_icl_exact_match"},
    {"helmet_json_kv", "helmet_json_kv", "", "helmet_kv_substring_match"},
    {"helmet_rag_nq", "helmet_rag_nq", "", "helmet_rag_substring_match"},
    {"helmet_rag_hotpotqa", "helmet_rag_hotpotqa", "", "helmet_rag_substring_match"},
};

absl::StatusOr<std::vector<GenerationSample>> Make(const TaskCase& c, int64_t length,
                                                   const GeneratorOptions& o) {
  GeneratorRequest req;
  req.task = c.task;
  req.length = length;
  req.settings = o;
  if (std::string(c.generator) == "helmet_icl") {
    req.options["dataset"] = c.dataset;
    FOCAL_ASSIGN_OR_RETURN(auto files, HelmetIclFiles(c.dataset));
    for (const auto& [role, rel] : files) req.files[role] = testing::SharedPath("data/" + rel);
  }
  if (std::string(c.generator) == "helmet_rag_nq") {
    req.gold_depth = 0.5;
    req.files["nq"] = testing::SharedPath("data/helmet/lost-in-the-middle/nq-open-oracle.jsonl.gz");
  }
  if (std::string(c.generator) == "helmet_rag_hotpotqa") {  // the fetched HotpotQA dev
    req.gold_depth = 0.5;
    req.files["hotpotqa"] = DataCacheDir() + "/ruler/hotpotqa.json";
  }
  return FindGenerator(c.generator)->make(req);
}

TEST(HelmetTasksTest, PromptsFitAreStableAndScoreGoldAsFull) {
  FOCAL_REQUIRE_FILE(testing::SharedPath("data/helmet/trec/TREC_10.label"),
                     "../shared beside the source tree");
  FOCAL_REQUIRE_FILE(testing::SharedPath("models/llama2-tokenizer/tokenizer.model"),
                     "../shared beside the source tree");
  FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "scripts/fetch_default_model.sh");
  FOCAL_REQUIRE_FILE(DataCacheDir() + "/ruler/hotpotqa.json", "scripts/fetch_data.sh");
  ASSERT_EQ(Tokenizers().size(), 2u) << "a tokenizer did not load";
  const int64_t kLengths[] = {4096, 8192};
  for (const Tok& t : Tokenizers()) {
    std::string checksums;  // the golden: task length index prompt_tokens sha256
    const GeneratorOptions o = Options(*t.tok, 3);
    for (const TaskCase& c : kTasks) {
      for (int64_t length : kLengths) {
        SCOPED_TRACE(absl::StrCat(t.name, " ", c.task, " at ", length));
        auto a = Make(c, length, o);
        ASSERT_TRUE(a.ok()) << a.status();
        auto b = Make(c, length, o);
        ASSERT_TRUE(b.ok()) << b.status();
        ASSERT_EQ(a->size(), 3u);
        const tasks::MetricDef& metric = *tasks::FindMetric(c.metric);
        for (size_t i = 0; i < a->size(); ++i) {
          const GenerationSample& s = (*a)[i];
          EXPECT_EQ(s.input, (*b)[i].input) << "sample " << i << " is not deterministic";
          auto n = o.count_tokens(s.input);
          ASSERT_TRUE(n.ok());
          EXPECT_LE(*n + s.max_new_tokens, length) << "sample " << i;
          EXPECT_EQ(s.meta.at("prompt_tokens"), absl::StrCat(*n));
          ASSERT_FALSE(s.outputs.empty());
          // A model that answers the gold scores 1, one that answers nothing 0.
          EXPECT_EQ(metric.generation(" " + s.outputs[0], s.outputs), 1.0) << "sample " << i;
          EXPECT_EQ(metric.generation("", s.outputs), 0.0) << "sample " << i;
          absl::StrAppend(&checksums, c.task, " ", length, " ", i, " ", *n, " ", Sha256Hex(s.input),
                          "\n");
        }
      }
    }
    const std::string golden =
        testing::SourcePath("tests/testdata/golden/helmet/prompts_" + t.name + ".txt");
    if (std::getenv("FOCAL_UPDATE_GOLDENS") != nullptr) {
      testing::WriteStringToFile(golden, checksums);
    }
    EXPECT_EQ(checksums, testing::ReadFileOrDie(golden)) << t.name << ": prompts changed";
  }
}

TEST(HelmetTasksTest, MissingDataIsAClearError) {
  GeneratorOptions o;
  o.count_tokens = [](absl::string_view t) -> absl::StatusOr<int64_t> {
    return static_cast<int64_t>(t.size());
  };
  GeneratorRequest req;
  req.task = "helmet_icl_trec_coarse";
  req.length = 4096;
  req.settings = o;
  req.options["dataset"] = "trec_coarse";
  auto s = FindGenerator("helmet_icl")->make(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("--data-dir"));
  req.task = "helmet_rag_nq";
  s = FindGenerator("helmet_rag_nq")->make(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("nq-open-oracle.jsonl.gz"));
}

TEST(HelmetTasksTest, TooFewNqQuestionsIsAClearError) {
  const std::string dir = testing::MakeTempDir("helmet_nq");
  std::string jsonl;
  for (int i = 0; i < 10; ++i) {
    jsonl += "{\"question\": \"q" + std::to_string(i) +
             "\", \"answers\": [\"a\"], "
             "\"ctxs\": [{\"title\": \"t\", \"text\": \"x\", \"isgold\": true}]}\n";
  }
  testing::WriteStringToFile(dir + "/nq.jsonl", jsonl);
  GeneratorOptions o;
  o.count_tokens = [](absl::string_view t) -> absl::StatusOr<int64_t> {
    return static_cast<int64_t>(t.size());
  };
  GeneratorRequest req;
  req.task = "helmet_rag_nq";
  req.length = 4096;
  req.settings = o;
  req.files["nq"] = dir + "/nq.jsonl";
  auto s = FindGenerator("helmet_rag_nq")->make(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("nq.jsonl: 10 questions"));
  testing::WriteStringToFile(dir + "/bad.jsonl", "{\"question\": \"q\", \"answers\": []}\n");
  req.files["nq"] = dir + "/bad.jsonl";
  s = FindGenerator("helmet_rag_nq")->make(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("bad.jsonl:1"));
}

TEST(HelmetTasksTest, PrefixOfTokensIsAPrefix) {
  const auto decode = [](absl::Span<const int32_t> ids) -> absl::StatusOr<std::string> {
    std::string s;
    for (int32_t id : ids) s += static_cast<char>(id);  // one byte per "token"
    return " " + s;  // a decoder that adds a leading space, as sentencepiece may
  };
  const std::string text = "abcdef";
  const std::vector<int32_t> ids(text.begin(), text.end());
  EXPECT_EQ(*PrefixOfTokens(text, ids, 2, decode), "ab");
  EXPECT_EQ(*PrefixOfTokens(text, ids, -2, decode), "abcd");
  EXPECT_EQ(*PrefixOfTokens(text, ids, 0, decode), "");
  EXPECT_EQ(*PrefixOfTokens(text, ids, 9, decode), "abcdef");
}

}  // namespace
}  // namespace focal::datasets
