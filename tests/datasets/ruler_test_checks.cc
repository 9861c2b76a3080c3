// SPDX-License-Identifier: Apache-2.0
// RULER tasks (see ruler_test.cc): scoring of a perfect and an empty "model",
// reproducibility, checksums of the real data files, 128K lengths, errors.
#include "tests/datasets/ruler_test_util.h"

namespace focal::datasets {
namespace {

// --- Scoring ---------------------------------------------------------------------------

TEST(RulerTest, PerfectModelScoresOneAndEmptyScoresZero) {
  auto registry = tasks::TaskRegistry::Load(absl::StrCat(AssetRoot(), "/tasks/specs"));
  ASSERT_TRUE(registry.ok()) << registry.status();
  for (const std::string& task : RulerTaskNames()) {
    const tasks::Task* t = registry->Find(task);
    ASSERT_NE(t, nullptr) << task;
    const tasks::MetricDef* def = tasks::FindMetric(t->spec().metrics(0));
    auto score = [&](absl::string_view prediction, const std::vector<std::string>& golds) {
      return def->generation(prediction, golds);
    };
    for (int64_t length : kFitLengths) {
      if (!Feasible(task, length)) continue;
      for (const GenerationSample& s : Samples(task, length).samples) {
        ASSERT_FALSE(s.outputs.empty());
        EXPECT_EQ(score(absl::StrJoin(s.outputs, ", "), s.outputs), 1.0) << task;
        EXPECT_EQ(score("", s.outputs), 0.0) << task;
        // The golds are in the prompt (HotpotQA answers need not be: yes/no).
        if (task != "ruler_qa_2") {
          EXPECT_EQ(score(s.input, s.outputs), 1.0) << task;
        }
      }
    }
  }
}

// --- Reproducibility -------------------------------------------------------------------

TEST(RulerTest, DeterministicAndIndependentOfSampleCount) {
  for (const std::string& task : RulerTaskNames()) {
    auto again = MakeRulerSamples(task, 2048, Options(kSamples));
    ASSERT_TRUE(again.ok()) << again.status();
    const std::vector<GenerationSample>& first = Samples(task, 2048).samples;
    ASSERT_EQ(again->size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ((*again)[i].input, first[i].input) << task;
      EXPECT_EQ((*again)[i].outputs, first[i].outputs) << task;
      EXPECT_EQ((*again)[i].meta, first[i].meta) << task;
    }
  }
  // Sample 0 alone is the same sample.
  auto one = MakeRulerSamples("ruler_niah_multikey_2", 2048, Options(1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].input, Samples("ruler_niah_multikey_2", 2048).samples[0].input);
}

TEST(RulerTest, SeedChangesSamplesAndExplicitPathsMatchBundled) {
  GeneratorOptions o = Options(1);
  o.seed = 7;
  auto other = MakeRulerSamples("ruler_niah_single_2", 1024, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)[0].input, Samples("ruler_niah_single_2", 1024).samples[0].input);
  EXPECT_EQ((*other)[0].meta.at("seed"), "7");

  GeneratorOptions paths = Options(1);
  paths.essay_haystack = SourcePath("datasets/samples/haystack_essays.json");
  paths.word_list = SourcePath("datasets/words/ruler_words.txt");
  paths.squad = SourcePath("datasets/samples/squad_sample.json");
  auto a = MakeRulerSamples("ruler_niah_single_2", 1024, paths);
  auto b = MakeRulerSamples("ruler_qa_1", 1024, paths);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0].input, Samples("ruler_niah_single_2", 1024).samples[0].input);
  EXPECT_EQ((*b)[0].input, Samples("ruler_qa_1", 1024).samples[0].input);
}

// --- The full data in ../shared (what --data-dir uses) ------------------------------

// The essay-haystack and qa tasks on the real files that the task specs'
// data_files name under --data-dir: RULER's Paul Graham haystack, XQuAD and
// the HotpotQA dev-distractor subset. The golden holds SHA-256s and counts
// only (the text is third-party).
TEST(RulerSharedDataTest, RealFilesChecksums) {
  GeneratorOptions o = Options(2);
  o.essay_haystack = testing::SharedPath("data/haystack/PaulGrahamEssays.json");
  o.squad = testing::SharedPath("data/squad/xquad.en.json");
  o.hotpotqa = testing::SharedPath("data/hotpotqa/hotpot_dev_distractor_500.jsonl");
  for (const std::string& path : {o.essay_haystack, o.squad, o.hotpotqa}) {
    FOCAL_REQUIRE_FILE(path, "../shared/data, the full evaluation data");
  }
  std::string text =
      "# SHA-256 of the input and of the golds joined by \"\\n\" of samples 0-1, with\n"
      "# meta counts, of the essay and qa RULER tasks at 2048 on ../shared/data (seed 42,\n"
      "# stories260K tokenizer with BOS). Regenerate with FOCAL_UPDATE_GOLDENS=1 ruler_test.\n";
  for (const std::string task :
       {"ruler_niah_single_2", "ruler_niah_multivalue", "ruler_qa_1", "ruler_qa_2"}) {
    auto samples = MakeRulerSamples(task, 2048, o);
    ASSERT_TRUE(samples.ok()) << task << ": " << samples.status();
    for (const GenerationSample& s : *samples) {
      absl::StrAppend(&text, task, " 2048 ", s.index, " ", Sha256Hex(s.input), " ",
                      Sha256Hex(absl::StrJoin(s.outputs, "\n")),
                      " input_tokens=", s.meta.at("input_tokens"));
      for (const char* key : {"haystack_repeated", "pool_docs", "docs_repeated", "questions_usable",
                              "questions_skipped"}) {
        if (s.meta.count(key)) absl::StrAppend(&text, " ", key, "=", s.meta.at(key));
      }
      absl::StrAppend(&text, "\n");
      if (absl::StartsWith(task, "ruler_niah")) {
        EXPECT_EQ(s.meta.at("haystack_repeated"), "false") << task;
      }
    }
  }
  EXPECT_TRUE(MatchesGolden(text, absl::StrCat(kGoldenDir, "checksums_shared.txt")));
}

// --- The fetched data (scripts/fetch_data.sh; what runs read by default) ---------------------

// The same tasks on RULER's own files as fetched from its package: its Paul
// Graham essays, SQuAD v2.0 dev (answerable questions only) and the whole
// HotpotQA dev set (a JSON array). SHA-256s and counts only.
TEST(RulerFetchedDataTest, RealFilesChecksums) {
  GeneratorOptions o = Options(2);
  o.essay_haystack = DataCacheDir() + "/ruler/PaulGrahamEssays.json";
  o.squad = DataCacheDir() + "/ruler/squad.json";
  o.hotpotqa = DataCacheDir() + "/ruler/hotpotqa.json";
  for (const std::string& path : {o.essay_haystack, o.squad, o.hotpotqa}) {
    FOCAL_REQUIRE_FILE(path, "bash scripts/fetch_data.sh");
  }
  std::string text =
      "# SHA-256 of the input and of the golds joined by \"\\n\" of samples 0-1, with\n"
      "# meta counts, of the essay and qa RULER tasks at 2048 on the fetched data\n"
      "# (scripts/fetch_data.sh; seed 42, stories260K tokenizer with BOS). Regenerate with\n"
      "# FOCAL_UPDATE_GOLDENS=1 ruler_test.\n";
  for (const std::string task :
       {"ruler_niah_single_2", "ruler_niah_multivalue", "ruler_qa_1", "ruler_qa_2"}) {
    auto samples = MakeRulerSamples(task, 2048, o);
    ASSERT_TRUE(samples.ok()) << task << ": " << samples.status();
    for (const GenerationSample& s : *samples) {
      absl::StrAppend(&text, task, " 2048 ", s.index, " ", Sha256Hex(s.input), " ",
                      Sha256Hex(absl::StrJoin(s.outputs, "\n")),
                      " input_tokens=", s.meta.at("input_tokens"));
      for (const char* key : {"haystack_repeated", "pool_docs", "docs_repeated", "questions_usable",
                              "questions_skipped"}) {
        if (s.meta.count(key)) absl::StrAppend(&text, " ", key, "=", s.meta.at(key));
      }
      absl::StrAppend(&text, "\n");
    }
  }
  EXPECT_TRUE(MatchesGolden(text, absl::StrCat(kGoldenDir, "checksums_fetched.txt")));
}

// --- Long lengths ------------------------------------------------------------------------

TEST(RulerTest, SomeTasksAt128K) {
  // One sample at 131072 tokens (~230 KB of text for this tokenizer) of the
  // tasks whose bundled data runs out and is repeated or extended (meta says
  // so). All 13 take ~5 s here (tokenizing dominates), too slow for a unit test.
  for (const std::string task : {"ruler_niah_single_2", "ruler_cwe", "ruler_qa_2"}) {
    int64_t calls = 0;
    auto s = MakeRulerSamples(task, 131072, Options(1, &calls));
    ASSERT_TRUE(s.ok()) << s.status();
    const GenerationSample& x = (*s)[0];
    const int64_t tokens = CountTokens(x.input);
    EXPECT_LE(tokens + x.max_new_tokens, 131072) << task;
    EXPECT_GE(tokens + x.max_new_tokens, 0.99 * 131072) << task;
    EXPECT_LE(calls, 16) << task;
    if (task == "ruler_niah_single_2") {
      EXPECT_EQ(x.meta.at("haystack_repeated"), "true") << task;
    }
    if (task == "ruler_qa_2") {
      EXPECT_EQ(x.meta.at("docs_repeated"), "true") << task;
    }
    if (task == "ruler_cwe") {
      EXPECT_EQ(x.meta.at("word_pool"), "singles+pairs");
    }
  }
}

// --- Errors ------------------------------------------------------------------------------

TEST(RulerTest, BadTaskLengthAndOptions) {
  EXPECT_THAT(
      MakeRulerSamples("ruler_niah", 4096, Options(1)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("unknown RULER task 'ruler_niah'"), HasSubstr("ruler_qa_2"))));
  EXPECT_THAT(MakeRulerSamples("ruler_vt", 1000, Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside [1024, ")));
  EXPECT_THAT(MakeRulerSamples("ruler_fwe", kRulerMaxLength + 1, Options(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside")));
  EXPECT_THAT(MakeRulerSamples("ruler_fwe", 4096, Options(0)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("num_samples")));
  GeneratorOptions none = Options(1);
  none.count_tokens = nullptr;
  EXPECT_THAT(MakeRulerSamples("ruler_fwe", 4096, none),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("count_tokens")));
}

TEST(RulerTest, LengthTooSmallForTheTokenizer) {
  // Four tokens per byte: RULER's templates alone exceed 512 - 128.
  GeneratorOptions bytes = Options(1);
  bytes.count_tokens = [](absl::string_view text) -> absl::StatusOr<int64_t> {
    return 4 * static_cast<int64_t>(text.size());
  };
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_2", 512, bytes),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("ruler_niah_single_2 at length 512, sample 0"),
                             HasSubstr("length too small"))));
  EXPECT_THAT(MakeRulerSamples("ruler_qa_2", 512, bytes),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("length too small")));
}

TEST(RulerTest, CounterErrorsPropagate) {
  GeneratorOptions broken = Options(1);
  broken.count_tokens = [](absl::string_view) -> absl::StatusOr<int64_t> {
    return absl::UnavailableError("tokenizer gone");
  };
  for (const std::string& task : RulerTaskNames()) {
    EXPECT_THAT(MakeRulerSamples(task, 4096, broken),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("tokenizer gone")))
        << task;
  }
}

TEST(RulerTest, MissingDataFiles) {
  const std::string missing = MakeTempDir("ruler") + "/missing.json";
  GeneratorOptions o = Options(1);
  o.essay_haystack = missing;
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_2", 4096, o),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.json")));
  // The noise haystack does not read the essay.
  EXPECT_TRUE(MakeRulerSamples("ruler_niah_single_1", 1024, o).ok());
  o = Options(1);
  o.word_list = missing;
  EXPECT_THAT(MakeRulerSamples("ruler_cwe", 4096, o),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.json")));
  o = Options(1);
  o.squad = missing;
  EXPECT_THAT(MakeRulerSamples("ruler_qa_1", 4096, o),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.json")));
  o = Options(1);
  o.hotpotqa = missing;
  EXPECT_THAT(MakeRulerSamples("ruler_qa_2", 4096, o),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.json")));
}

TEST(RulerTest, MalformedData) {
  const std::string dir = MakeTempDir("ruler");
  auto file = [&](const std::string& name, const std::string& contents) {
    WriteStringToFile(dir + "/" + name, contents);
    return dir + "/" + name;
  };
  GeneratorOptions o = Options(1);
  o.essay_haystack = file("essay.json", R"({"txt": "words"})");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_2", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("{\"text\": \"...\"}")));
  o.essay_haystack = file("essay2.json", "{\"text\": \"unterminated}");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_2", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("essay2.json:1:")));
  o.essay_haystack = file("essay3.json", "{\"text\": \" \\n \"}");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_2", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no words")));

  o = Options(1);
  o.word_list = file("w1.txt", "[adjectives]\nred\nBlue\n");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_1", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("w1.txt:3:"), HasSubstr("'Blue'"))));
  o.word_list = file("w2.txt", "red\n");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_1", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("w2.txt:1: a word before")));
  o.word_list = file("w3.txt", "[nouns]\ncat\ncat\n");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_1", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'cat' is listed twice")));
  o.word_list = file("w4.txt", "[adjectives]\nred\n[nouns]\ncat\n");
  EXPECT_THAT(MakeRulerSamples("ruler_niah_single_1", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 10 adjectives")));

  o = Options(1);
  o.squad = file("squad.json", R"({"version": "1.1"})");
  EXPECT_THAT(MakeRulerSamples("ruler_qa_1", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"data\" array")));
  o.squad =
      file("squad2.json", R"({"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q", )"
                          R"("answers": [], "is_impossible": true}]}]}]})");
  EXPECT_THAT(MakeRulerSamples("ruler_qa_1", 4096, o),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no usable question")));

  o = Options(1);
  o.hotpotqa = file("hotpot.jsonl", R"({"question": "q", "answer": "a", "supporting_facts": [], )"
                                    R"("context": [["t", "not a list"]]})"
                                    "\n");
  EXPECT_THAT(MakeRulerSamples("ruler_qa_2", 4096, o),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("hotpot.jsonl:1"), HasSubstr("context[0]"))));
  o.hotpotqa = file("hotpot2.jsonl",
                    R"({"question": "q", "answer": "a", "supporting_facts": [["Gone", 0]], )"
                    R"("context": [["t", ["s."]]]})"
                    "\n");
  EXPECT_THAT(MakeRulerSamples("ruler_qa_2", 4096, o),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no usable question")));
}

TEST(RulerTest, WordListTooSmallForCwe) {
  // n adjectives "a<letters>" and n nouns "n<letters>".
  auto word_list = [](int n) {
    std::string text = "[adjectives]\n";
    for (int i = 0; i < n; ++i)
      absl::StrAppend(&text, "a", std::string(1, 'a' + i % 26), "x", std::string(1, 'a' + i / 26),
                      "\n");
    absl::StrAppend(&text, "[nouns]\n");
    for (int i = 0; i < n; ++i)
      absl::StrAppend(&text, "n", std::string(1, 'a' + i % 26), "x", std::string(1, 'a' + i / 26),
                      "\n");
    return text;
  };
  const std::string dir = MakeTempDir("ruler");
  GeneratorOptions o = Options(1);
  o.word_list = dir + "/small.txt";
  WriteStringToFile(o.word_list, word_list(15));
  EXPECT_THAT(MakeRulerSamples("ruler_cwe", 8192, o),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("30 distinct words; cwe's one-shot example needs 40")));
  // 40 singles + 400 pairs cannot fill 64K tokens.
  WriteStringToFile(o.word_list, word_list(20));
  EXPECT_THAT(MakeRulerSamples("ruler_cwe", 65536, o),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("cannot fill"), HasSubstr("at most 440 distinct words"))));
}

TEST(RulerTest, HotpotQaSkipsRecordsWithoutTheirGoldParagraphs) {
  const std::string path = MakeTempDir("ruler") + "/h.jsonl";
  WriteStringToFile(
      path,
      R"({"_id": "a", "question": "Who wrote Alpha?", "answer": "Ann", "supporting_facts": )"
      R"([["Alpha", 0], ["Ann", 0]], "context": [["Alpha", ["Alpha is a book by Ann."]], )"
      R"(["Beta", ["Beta is a river."]], ["Ann", ["Ann is a writer."]]]})"
      "\n"
      R"({"_id": "b", "question": "Lost?", "answer": "x", "supporting_facts": [["Gone", 0]], )"
      R"("context": [["Zeta", ["Zeta is last."]]]})"
      "\n");
  GeneratorOptions o = Options(2);
  o.hotpotqa = path;
  auto s = MakeRulerSamples("ruler_qa_2", 1024, o);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const GenerationSample& x : *s) {
    EXPECT_EQ(x.meta.at("question_id"), "a");
    EXPECT_EQ(x.meta.at("questions_skipped"), "1");
    EXPECT_EQ(x.meta.at("pool_docs"), "4");
    EXPECT_EQ(x.meta.at("docs_repeated"), "true");
    EXPECT_THAT(x.input, HasSubstr("Alpha\nAlpha is a book by Ann."));
  }
  EXPECT_EQ((*s)[1].meta.at("question_round"), "1");
}

}  // namespace
}  // namespace focal::datasets
