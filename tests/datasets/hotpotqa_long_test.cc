// SPDX-License-Identifier: Apache-2.0
// hotpotqa_long on the bundled HotpotQA-format sample (14 records written for
// the project, 6 paragraphs each), counted with the stories260K tokenizer: the rendered prompt
// (golden file), the length fit, the gold depth, determinism, pool repetition and every error path.
//
// Regenerate the golden file with FOCAL_UPDATE_GOLDENS=1 and review the diff.
// meta_1024_depth0.5.txt has the gold, the meta and the SHA-256 of the exact
// model input of one sample (1024 tokens, depth 0.5); the prompt's layout is
// checked in the test itself.
#include "datasets/hotpotqa_long.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/tokenizer.h"
#include "tasks/metrics.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

using ::focal::testing::MakeTempDir;
using ::focal::testing::MatchesGolden;
using ::focal::testing::ReadFileOrDie;
using ::focal::testing::SourcePath;
using ::focal::testing::StatusIs;
using ::focal::testing::Stories260KDir;
using ::focal::testing::WriteStringToFile;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kSample[] = "datasets/samples/hotpotqa_sample.jsonl";
constexpr char kFirstId[] = "focal_hotpot_01";
// Each record of the sample has 4 non-gold paragraphs of its own.
constexpr int64_t kOwnDistractors = 4;
// The sample's 77 distinct paragraphs hold ~9K stories260K tokens: at 8K and up the
// distractors repeat (meta distractors_repeated), below they do not.
constexpr int64_t kFirstRepeatedLength = 8192;
constexpr char kGoldenDir[] = "hotpotqa_long/";  // under tests/testdata/golden

// Two usable records with short paragraphs and one record that lacks a gold
// paragraph, for the pool and skip tests.
constexpr char kTinyPool[] =
    R"({"_id": "q1", "question": "Who wrote Alpha?", "answer": "Ann", "type": "bridge", )"
    R"("supporting_facts": [["Alpha", 0], ["Ann", 0]], "context": [["Alpha", ["Alpha is a )"
    R"(book by Ann."]], ["Beta", ["Beta is a river."]], ["Ann", ["Ann is a writer."]]]})"
    "\n"
    R"({"_id": "q2", "question": "Where is Gamma?", "answer": "Delta", )"
    R"("supporting_facts": [["Gamma", 0]], "context": [["Gamma", ["Gamma is in Delta."]], )"
    R"(["Epsilon", ["Epsilon is a letter.", " It is the fifth."]]]})"
    "\n"
    R"({"_id": "q3", "question": "Unanswerable?", "answer": "x", )"
    R"("supporting_facts": [["Missing", 0]], "context": [["Zeta", ["Zeta is last."]]]})"
    "\n";

class HotpotQaLongTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tok = model::SentencePieceTokenizer::Load(Stories260KDir() + "/tokenizer.model");
    ASSERT_TRUE(tok.ok()) << tok.status();
    tokenizer_ = tok->release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }

  static int64_t Count(absl::string_view text) {
    auto ids = tokenizer_->Encode(text, /*add_bos=*/true);
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? static_cast<int64_t>(ids->size()) : -1;
  }

  static GeneratorOptions Options(int64_t num_samples, const std::string& path = "") {
    GeneratorOptions o;
    o.count_tokens = [](absl::string_view text) -> absl::StatusOr<int64_t> {
      FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer_->Encode(text, true));
      return static_cast<int64_t>(ids.size());
    };
    o.num_samples = num_samples;
    o.hotpotqa = path.empty() ? SourcePath(kSample) : path;
    return o;
  }

  static std::string TempFile(const std::string& contents) {
    const std::string path = MakeTempDir("hotpotqa_long") + "/data.jsonl";
    WriteStringToFile(path, contents);
    return path;
  }

  static model::Tokenizer* tokenizer_;
};

model::Tokenizer* HotpotQaLongTest::tokenizer_ = nullptr;

int64_t MetaInt(const GenerationSample& s, const std::string& key) {
  auto it = s.meta.find(key);
  int64_t v = std::numeric_limits<int64_t>::min();
  if (it == s.meta.end() || !absl::SimpleAtoi(it->second, &v)) {
    ADD_FAILURE() << "meta " << key << " missing or not an integer";
  }
  return v;
}

std::vector<int64_t> GoldPassages(const GenerationSample& s) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(s.meta.at("gold_passages"), ',')) {
    int64_t v = 0;
    EXPECT_TRUE(absl::SimpleAtoi(part, &v)) << part;
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> GoldTitles(const GenerationSample& s) {
  std::vector<std::string> out;
  auto json = ParseJson(s.meta.at("gold_titles"), "gold_titles");
  EXPECT_TRUE(json.ok()) << json.status();
  if (!json.ok() || !json->is_array()) return out;
  for (const JsonValue& v : json->array()) out.push_back(v.string_value());
  return out;
}

std::string MetaText(const GenerationSample& s) {
  std::string out;
  for (const auto& [k, v] : s.meta) absl::StrAppend(&out, k, ": ", v, "\n");
  return out;
}

TEST_F(HotpotQaLongTest, SweepDepths) {
  EXPECT_EQ(HotpotQaSweepDepths(), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
}

TEST_F(HotpotQaLongTest, LongBenchPromptLayout) {
  EXPECT_EQ(RenderHotpotQaPassage(3, "Title", "First. Second."),
            "Passage 3:\nTitle\nFirst. Second.");
  EXPECT_EQ(RenderHotpotQaPrompt("Passage 1:\nT\nx\nPassage 2:\nU\ny", "Who?"),
            "Answer the question based on the given passages. Only give me the answer and do "
            "not output any other words.\n\nThe following are given passages.\n"
            "Passage 1:\nT\nx\nPassage 2:\nU\ny\n\n"
            "Answer the question based on the given passages. Only give me the answer and do "
            "not output any other words.\n\nQuestion: Who?\nAnswer:");
}

TEST_F(HotpotQaLongTest, GoldenPrompt) {
  auto samples = MakeHotpotQaLongSamples(1024, 0.5, Options(1));
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  const GenerationSample& s = (*samples)[0];
  EXPECT_EQ(s.task, "hotpotqa_long");
  EXPECT_EQ(s.length, 1024);
  EXPECT_EQ(s.index, 0);
  EXPECT_EQ(s.max_new_tokens, 32);
  EXPECT_EQ(s.stop, std::vector<std::string>{"\n"});
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(s.input, "Answer the question based on the given passages."));
  // Record 0's question, read from the sample.
  const std::string sample = ReadFileOrDie(SourcePath(kSample));
  auto first = ParseJson(sample.substr(0, sample.find('\n')), kSample);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(first->Find("question"), nullptr);
  EXPECT_TRUE(absl::EndsWith(
      s.input,
      absl::StrCat("\n\nQuestion: ", first->Find("question")->string_value(), "\nAnswer:")));
  EXPECT_TRUE(MatchesGolden(absl::StrCat("input_sha256: ", Sha256Hex(s.input),
                                         "\noutputs: ", s.outputs[0], "\n", MetaText(s)),
                            absl::StrCat(kGoldenDir, "meta_1024_depth0.5.txt")));
}

// The whole HotpotQA dev set as fetched (scripts/fetch_data.sh: RULER's
// hotpotqa.json, one JSON array), what runs read by default: SHA-256s and
// counts of the first samples at 4096 tokens, gold in the middle.
TEST_F(HotpotQaLongTest, FetchedDataChecksums) {
  const std::string path = DataCacheDir() + "/ruler/hotpotqa.json";
  FOCAL_REQUIRE_FILE(path, "bash scripts/fetch_data.sh");
  auto samples = MakeHotpotQaLongSamples(4096, 0.5, Options(2, path));
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::string text =
      "# SHA-256 of the input and of the gold of hotpotqa_long samples 0-1 at 4096 tokens,\n"
      "# gold depth 0.5, on the fetched HotpotQA dev set (stories260K tokenizer), with their\n"
      "# meta. Regenerate with FOCAL_UPDATE_GOLDENS=1 hotpotqa_long_test.\n";
  for (const GenerationSample& s : *samples) {
    absl::StrAppend(&text, s.index, " ", Sha256Hex(s.input), " ", Sha256Hex(s.outputs[0]), "\n");
    // The data's own text (titles, ids) only as hashes.
    for (const auto& [k, v] : s.meta) {
      const bool text_of_the_data = k == "gold_titles" || k == "id";
      absl::StrAppend(&text, k, text_of_the_data ? "_sha256" : "", ": ",
                      text_of_the_data ? Sha256Hex(v) : v, "\n");
    }
  }
  EXPECT_TRUE(MatchesGolden(text, absl::StrCat(kGoldenDir, "checksums_fetched.txt")));
}

// Every length and depth: the input fits with the 32 generated tokens, one
// more passage would not, and the gold block starts within one passage of
// depth * (number of distractors), with its titles at the numbered passages.
TEST_F(HotpotQaLongTest, FitsLengthAndPlacesGold) {
  int64_t max_slack = 0, sum_slack = 0, count = 0;
  for (int64_t length : {1024, 2048, 4096, 8192, 16384}) {
    for (double depth : {0.0, 0.5, 1.0}) {
      SCOPED_TRACE(absl::StrCat("length ", length, " depth ", depth));
      auto samples = MakeHotpotQaLongSamples(length, depth, Options(2));
      ASSERT_TRUE(samples.ok()) << samples.status();
      ASSERT_EQ(samples->size(), 2u);
      for (const GenerationSample& s : *samples) {
        const int64_t tokens = Count(s.input);
        EXPECT_LE(tokens + 32, length);
        EXPECT_EQ(MetaInt(s, "input_tokens"), tokens);
        EXPECT_EQ(MetaInt(s, "slack_tokens"), length - 32 - tokens);
        EXPECT_LT(length - 32 - tokens, MetaInt(s, "smallest_unused_passage_tokens"));
        max_slack = std::max(max_slack, length - 32 - tokens);
        sum_slack += length - 32 - tokens;
        ++count;

        const int64_t passages = MetaInt(s, "num_passages");
        const int64_t distractors = MetaInt(s, "num_distractors");
        const std::vector<int64_t> gold = GoldPassages(s);
        const std::vector<std::string> titles = GoldTitles(s);
        ASSERT_EQ(gold.size(), titles.size());
        ASSERT_FALSE(gold.empty());
        EXPECT_EQ(passages, distractors + static_cast<int64_t>(gold.size()));
        for (size_t g = 0; g < gold.size(); ++g) {
          EXPECT_EQ(gold[g],
                    gold[0] + static_cast<int64_t>(g));  // adjacent, in order
          EXPECT_THAT(s.input,
                      HasSubstr(absl::StrCat("Passage ", gold[g], ":\n", titles[g], "\n")));
        }
        EXPECT_THAT(s.input, HasSubstr(absl::StrCat("\nPassage ", passages, ":\n")));
        EXPECT_THAT(s.input,
                    ::testing::Not(HasSubstr(absl::StrCat("Passage ", passages + 1, ":\n"))));
        const double target = depth * static_cast<double>(distractors);
        EXPECT_LE(std::abs(static_cast<double>(gold[0] - 1) - target), 1.0);
        if (depth == 0.0) {
          EXPECT_EQ(gold.front(), 1);
        }
        if (depth == 1.0) {
          EXPECT_EQ(gold.back(), passages);
        }
        // A repeated distractor shows up twice (title and text); without
        // repetition no passage does.
        std::map<std::string, int> seen;
        bool twice = false;
        for (int64_t p = 1; p <= passages; ++p) {
          const std::string head = absl::StrCat("Passage ", p, ":\n");
          const size_t at = s.input.find(head) + head.size();
          const size_t end = p < passages
                                 ? s.input.find(absl::StrCat("\nPassage ", p + 1, ":\n"), at)
                                 : s.input.find("\n\nAnswer the question", at);
          twice |= ++seen[s.input.substr(at, end - at)] > 1;
        }
        const bool repeated = length >= kFirstRepeatedLength;
        EXPECT_EQ(s.meta.at("distractors_repeated"), repeated ? "true" : "false");
        EXPECT_EQ(twice, repeated);
        if (length == 16384) {
          EXPECT_EQ(s.meta.at("used_other_questions"), "true");
        }
      }
    }
  }
  std::cerr << "hotpotqa_long fit: " << count << " samples, mean slack "
            << static_cast<double>(sum_slack) / static_cast<double>(count) << " tokens, max "
            << max_slack << "\n";
}

// Fill order: the record's own non-gold paragraphs, then other records'.
// The longest fitting prefix of that order is taken (so it is all own
// paragraphs up to kOwnDistractors); the first-fit scan may then add shorter
// later ones.
TEST_F(HotpotQaLongTest, OwnParagraphsFillFirst) {
  for (int64_t length : {1024, 2048, 4096, 16384}) {
    SCOPED_TRACE(absl::StrCat("length ", length));
    auto samples = MakeHotpotQaLongSamples(length, 0.5, Options(1));
    ASSERT_TRUE(samples.ok()) << samples.status();
    const GenerationSample& s = (*samples)[0];
    EXPECT_EQ(s.meta.at("id"), kFirstId);
    const int64_t prefix = MetaInt(s, "prefix_distractors");
    const int64_t own = MetaInt(s, "own_distractors");
    EXPECT_GE(own, std::min<int64_t>(prefix, kOwnDistractors));
    EXPECT_LE(own, kOwnDistractors);
    EXPECT_EQ(own + MetaInt(s, "other_distractors"), MetaInt(s, "num_distractors"));
    EXPECT_EQ(s.meta.at("used_other_questions"),
              MetaInt(s, "other_distractors") > 0 ? "true" : "false");
    if (length == 16384) {
      EXPECT_EQ(own, kOwnDistractors);
      EXPECT_GT(prefix, kOwnDistractors);
    }
  }
}

TEST_F(HotpotQaLongTest, Deterministic) {
  auto a = MakeHotpotQaLongSamples(4096, 0.25, Options(3));
  auto b = MakeHotpotQaLongSamples(4096, 0.25, Options(3));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].input, (*b)[i].input);
    EXPECT_EQ((*a)[i].meta, (*b)[i].meta);
  }
  GeneratorOptions other = Options(3);
  other.seed = 7;
  auto c = MakeHotpotQaLongSamples(4096, 0.25, other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*a)[0].input, (*c)[0].input);
  EXPECT_EQ((*a)[0].meta.at("id"),
            (*c)[0].meta.at("id"));  // same questions, in file order
}

TEST_F(HotpotQaLongTest, RepeatsOtherParagraphsWhenThePoolRunsOut) {
  auto samples = MakeHotpotQaLongSamples(1024, 0.5, Options(5, TempFile(kTinyPool)));
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);  // q3 lacks its gold paragraph
  for (const GenerationSample& s : *samples) {
    EXPECT_EQ(s.meta.at("distractors_repeated"), "true");
    EXPECT_EQ(s.meta.at("used_other_questions"), "true");
    EXPECT_EQ(s.meta.at("questions_usable"), "2");
    EXPECT_EQ(s.meta.at("questions_skipped_missing_gold"), "1");
    EXPECT_LE(Count(s.input) + 32, 1024);
    EXPECT_LT(MetaInt(s, "slack_tokens"), MetaInt(s, "smallest_unused_passage_tokens"));
  }
  const GenerationSample& q1 = (*samples)[0];
  EXPECT_EQ(q1.meta.at("id"), "q1");
  EXPECT_EQ(q1.meta.at("type"), "bridge");
  EXPECT_EQ(q1.outputs, std::vector<std::string>{"Ann"});
  EXPECT_EQ(q1.meta.at("gold_titles"), R"(["Alpha", "Ann"])");
  // q1's pool: its own "Beta", then q2's two and q3's one paragraph.
  EXPECT_EQ(q1.meta.at("pool_paragraphs"), "4");
  EXPECT_THAT(q1.input, HasSubstr("\nEpsilon\nEpsilon is a letter. It is the fifth.\n"));
}

TEST_F(HotpotQaLongTest, SingleRecordCannotFill) {
  const std::string path =
      TempFile(std::string(kTinyPool).substr(0, std::string(kTinyPool).find('\n') + 1));
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, path)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("cannot fill 1024 tokens"), HasSubstr("q1"))));
}

TEST_F(HotpotQaLongTest, BadArguments) {
  for (double depth : {-0.1, 1.5, std::nan("")}) {
    EXPECT_THAT(MakeHotpotQaLongSamples(1024, depth, Options(1)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gold depth")));
  }
  EXPECT_THAT(MakeHotpotQaLongSamples(0, 0.5, Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("length 0")));
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("num_samples")));
  GeneratorOptions no_counter = Options(1);
  no_counter.count_tokens = nullptr;
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, no_counter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token counter")));
}

TEST_F(HotpotQaLongTest, LengthTooSmallNamesTheQuestion) {
  // The first record's two gold passages and question alone take 509 tokens.
  EXPECT_THAT(MakeHotpotQaLongSamples(512, 0.5, Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("length 512 is too small"),
                             HasSubstr(absl::StrCat("question ", kFirstId)),
                             HasSubstr("take 509 tokens, plus 32 to generate"))));
}

TEST_F(HotpotQaLongTest, BadData) {
  const std::string missing = MakeTempDir("hotpotqa_long") + "/nope.jsonl";
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, missing)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(missing)));

  const std::string first_line =
      std::string(kTinyPool).substr(0, std::string(kTinyPool).find('\n') + 1);
  const std::string malformed = TempFile(first_line + "{\"_id\": \"q2\", \n");
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, malformed)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(malformed + ":2:")));

  const std::string no_question =
      TempFile(R"({"_id": "q", "answer": "a", "supporting_facts": [], "context": []})"
               "\n");
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, no_question)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(no_question + ":1: missing field 'question'")));

  const std::string bad_context =
      TempFile(R"({"_id": "q", "question": "?", "answer": "a", "supporting_facts": [["T", 0]], )"
               R"("context": [["T", ["ok"]], ["U", "not a list"]]})"
               "\n");
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, bad_context)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(bad_context + ":1: field 'context[1]'")));

  const std::string bad_fact =
      TempFile(R"({"_id": "q", "question": "?", "answer": "a", "supporting_facts": [["T"]], )"
               R"("context": [["T", ["ok"]]]})"
               "\n");
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, bad_fact)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(bad_fact + ":1: field 'supporting_facts[0]'")));

  const std::string none_usable = TempFile(std::string(kTinyPool).substr(
      std::string(kTinyPool).rfind('\n', std::string(kTinyPool).size() - 2) + 1));
  EXPECT_THAT(MakeHotpotQaLongSamples(1024, 0.5, Options(1, none_usable)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("no record has all its supporting-fact paragraphs")));
}

// The per-sample seeds are CPython's random.Random(seed).getrandbits(32)
// draws; random.Random(42).getrandbits(32) gives 2746317213 first.
TEST_F(HotpotQaLongTest, SeedsComeFromCpythonRandom) {
  tasks::PyRandom rng(42);
  EXPECT_EQ(rng.NextU32(), 2746317213u);
}

}  // namespace
}  // namespace focal::datasets
