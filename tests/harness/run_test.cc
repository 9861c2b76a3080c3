// SPDX-License-Identifier: Apache-2.0
// `focal-eval run` end to end on the bundled model and samples: results,
// samples, resume, shards and merge, report tables (long context, user
// specs, replicas and bad input: run_test_more.cc).
#include "tests/harness/run_test_util.h"

namespace focal {
namespace {

// A user file of a task whose reference file is known, with another SHA-256:
// a warning on stderr, and the note in the results.
TEST(RunTest, UserFileThatIsNotTheReferencesIsFlagged) {
  const std::string dir = testing::MakeTempDir("userfile");
  Result r =
      RunCli("run --tasks lambada_openai --limit 3 --out " + dir + "/r.json --data " +
             "lambada_openai=" + testing::SourcePath("datasets/samples/lambada_openai.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: task lambada_openai: not the file the reference reads"));
  const reports::RunResults res = Load(dir + "/r.json");
  ASSERT_EQ(res.models(0).tasks_size(), 1);
  EXPECT_EQ(res.models(0).tasks(0).data_source(), "user file");
  EXPECT_THAT(res.models(0).tasks(0).note(), HasSubstr("4aa8d02cd17c7191"));
  EXPECT_EQ(res.config().data_warning(), "");  // the user's own file: no sample warning
}

TEST(RunTest, BundledDefaultWritesResultsSamplesAndResumes) {
  const std::string dir = testing::MakeTempDir("res");
  const std::string args =
      "run --tasks all --limit 6 --out " + dir + "/r.json --samples " + dir + "/s.jsonl";
  Result r = RunCli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| arc_easy | 1 | 0 | acc_norm |"));
  reports::RunResults res = Load(dir + "/r.json");
  ASSERT_EQ(res.models_size(), 1);
  const reports::ModelRun& m = res.models(0);
  EXPECT_EQ(m.variant(), "base");
  EXPECT_EQ(m.bos_policy(), "bos");
  EXPECT_EQ(m.weights_sha256().size(), 64u);
  ASSERT_EQ(m.tasks_size(), 8);
  // Bundled samples: every task says so, and the run says it once.
  EXPECT_THAT(res.config().data_warning(), HasSubstr("these scores mean nothing"));
  EXPECT_THAT(r.out, HasSubstr("**Warning:** bundled format samples"));
  EXPECT_THAT(r.err, HasSubstr("scripts/fetch_data.sh"));
  int64_t requests = 0;
  for (const auto& t : m.tasks()) {
    EXPECT_EQ(t.data_source(), "sample") << t.task();
    EXPECT_EQ(t.num_docs(), 6) << t.task();
    EXPECT_GE(t.num_docs_total(), 6);
    EXPECT_EQ(t.data_sha256().size(), 64u);
    requests += t.num_requests();
    for (const auto& mv : t.metrics()) EXPECT_EQ(mv.n(), 6);
  }
  EXPECT_GT(m.tokens_processed(), 0);
  EXPECT_EQ(m.cached_requests(), 0);
  EXPECT_EQ(res.config().tasks_size(), 8);
  auto samples = testing::SampleLoglikelihoods(dir + "/s.jsonl");
  EXPECT_EQ(samples.size(), 8u);
  EXPECT_EQ(samples["piqa"].size(), 6u);
  EXPECT_EQ(samples["piqa"][0].size(), 2u);

  // The same command again: everything from the cache, identical numbers.
  Result again = RunCli(args);
  ASSERT_EQ(again.code, 0) << again.err;
  reports::RunResults res2 = Load(dir + "/r.json");
  EXPECT_EQ(res2.models(0).cached_requests(), requests);
  EXPECT_EQ(res2.models(0).tokens_processed(), 0);
  for (int t = 0; t < 8; ++t) {
    for (int k = 0; k < m.tasks(t).metrics_size(); ++k) {
      EXPECT_EQ(res2.models(0).tasks(t).metrics(k).value(), m.tasks(t).metrics(k).value());
    }
  }
}

TEST(RunTest, ShardsAndBatchSizeDoNotChangeScores) {
  const std::string dir = testing::MakeTempDir("shard");
  const std::string common = "run --tasks arc_easy,boolq,lambada_openai --limit 7 --no-progress ";
  ASSERT_EQ(RunCli(common + "--samples " + dir + "/all.jsonl").code, 0);
  ASSERT_EQ(RunCli(common + "--batch-tokens 1 --samples " + dir + "/b1.jsonl").code, 0);
  ASSERT_EQ(RunCli(common + "--shard 0/2 --samples " + dir + "/s0.jsonl").code, 0);
  ASSERT_EQ(RunCli(common + "--shard 1/2 --samples " + dir + "/s1.jsonl").code, 0);
  auto all = testing::SampleLoglikelihoods(dir + "/all.jsonl");
  EXPECT_EQ(testing::SampleLoglikelihoods(dir + "/b1.jsonl"), all);
  auto s0 = testing::SampleLoglikelihoods(dir + "/s0.jsonl"),
       s1 = testing::SampleLoglikelihoods(dir + "/s1.jsonl");
  for (auto& [task, docs] : all) {
    EXPECT_EQ(s0[task].size() + s1[task].size(), docs.size()) << task;
    for (auto& [i, lls] : docs) {
      const auto& shard = (i % 2 == 0) ? s0[task] : s1[task];
      ASSERT_TRUE(shard.count(i)) << task << " " << i;
      EXPECT_EQ(shard.at(i), lls) << task << " " << i;
    }
  }
}

TEST(RunTest, MergeOfLongContextShardsEqualsTheUnshardedRun) {
  const std::string dir = testing::MakeTempDir("merge_long");
  const std::string common =
      "run --tasks ruler_niah_single_1,ruler_niah_multikey_1 --lengths 1024,2048 "
      "--allow-length-extrapolation --limit 3 --no-progress ";
  ASSERT_EQ(RunCli(common + "--out " + dir + "/all.json").code, 0);
  ASSERT_EQ(RunShards(common, dir, 2), "");
  Result m = RunCli("merge " + dir + "/s1.json " + dir + "/s0.json --out " + dir + "/merged.json");
  ASSERT_EQ(m.code, 0) << m.err;
  reports::RunResults all = Load(dir + "/all.json"), merged = Load(dir + "/merged.json");
  const auto& a = all.models(0);
  const auto& b = merged.models(0);
  ASSERT_EQ(b.tasks_size(), a.tasks_size());
  for (int t = 0; t < a.tasks_size(); ++t) {
    EXPECT_EQ(b.tasks(t).num_docs(), a.tasks(t).num_docs());
    ASSERT_EQ(b.tasks(t).metrics_size(), a.tasks(t).metrics_size());
    for (int k = 0; k < a.tasks(t).metrics_size(); ++k) {
      const auto& x = a.tasks(t).metrics(k);
      const auto& y = b.tasks(t).metrics(k);
      EXPECT_EQ(y.context_length(), x.context_length());
      EXPECT_EQ(y.n(), x.n()) << a.tasks(t).task() << " " << x.name();
      EXPECT_EQ(y.value(), x.value()) << a.tasks(t).task() << " " << x.name();
      EXPECT_EQ(y.stderr(), x.stderr()) << a.tasks(t).task() << " " << x.name();
    }
  }
  ASSERT_EQ(b.ruler_by_length_size(), a.ruler_by_length_size());
  for (int i = 0; i < a.ruler_by_length_size(); ++i) {
    EXPECT_EQ(b.ruler_by_length(i).average(), a.ruler_by_length(i).average());
  }
  EXPECT_EQ(b.effective_length(), a.effective_length());
  // Each shard really holds only its samples.
  reports::RunResults s0 = Load(dir + "/s0.json");
  EXPECT_EQ(s0.models(0).tasks(0).metrics(0).n(), 2);  // samples 0 and 2 of 3
}

// One sample per group and three shards: shards 1 and 2 hold nothing. They
// still list the tasks, so merge takes them (it said "comes from a different
// run" before) and gives the unsharded numbers.
TEST(RunTest, MergeTakesLongContextShardsThatHoldNoSample) {
  const std::string dir = testing::MakeTempDir("merge_empty");
  const std::string common =
      "run --tasks ruler_niah_single_1,ruler_niah_multikey_1 --lengths 1024 "
      "--allow-length-extrapolation --limit 1 --no-progress ";
  ASSERT_EQ(RunCli(common + "--out " + dir + "/all.json").code, 0);
  ASSERT_EQ(RunShards(common, dir, 3), "");
  const reports::RunResults empty = Load(dir + "/s2.json");
  ASSERT_EQ(empty.models(0).tasks_size(), 2);
  EXPECT_EQ(empty.models(0).tasks(0).num_docs(), 0);
  EXPECT_EQ(empty.models(0).tasks(0).metrics_size(), 0);
  Result m = RunCli("merge " + dir + "/s2.json " + dir + "/s1.json " + dir + "/s0.json --out " +
                    dir + "/merged.json");
  ASSERT_EQ(m.code, 0) << m.err;
  const reports::RunResults all = Load(dir + "/all.json"), merged = Load(dir + "/merged.json");
  const auto& a = all.models(0);
  const auto& b = merged.models(0);
  ASSERT_EQ(b.tasks_size(), a.tasks_size());
  for (int t = 0; t < a.tasks_size(); ++t) {
    EXPECT_EQ(b.tasks(t).task(), a.tasks(t).task());
    EXPECT_EQ(b.tasks(t).num_docs(), 1);
    ASSERT_EQ(b.tasks(t).metrics_size(), a.tasks(t).metrics_size());
    for (int k = 0; k < a.tasks(t).metrics_size(); ++k) {
      EXPECT_EQ(b.tasks(t).metrics(k).name(), a.tasks(t).metrics(k).name());
      EXPECT_EQ(b.tasks(t).metrics(k).value(), a.tasks(t).metrics(k).value());
    }
  }
  ASSERT_EQ(b.ruler_by_length_size(), 1);
  EXPECT_EQ(b.ruler_by_length(0).average(), a.ruler_by_length(0).average());
}

// A shard that holds none of a task's documents says so; its metrics have no
// value (N/A, never "nan").
TEST(RunTest, ShardWithoutDocumentsSaysSo) {
  const std::string dir = testing::MakeTempDir("shard_empty");
  Result r =
      RunCli("run --tasks piqa --limit 1 --no-progress --shard 1/2 --out " + dir + "/s1.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| piqa | 2 | 0 | acc | ↑ | N/A |"));
  EXPECT_THAT(r.out, HasSubstr("Note (piqa): no documents in this shard (1/2)"));
  EXPECT_THAT(r.out, Not(HasSubstr("nan")));
}

TEST(RunTest, MergeOfShardsEqualsTheUnshardedRun) {
  const std::string dir = testing::MakeTempDir("merge");
  const std::string common = "run --tasks piqa,boolq,lambada_openai --limit 9 --no-progress ";
  ASSERT_EQ(RunCli(common + "--out " + dir + "/all.json").code, 0);
  ASSERT_EQ(RunShards(common, dir, 3), "");
  Result m = RunCli("merge " + dir + "/s2.json " + dir + "/s0.json " + dir + "/s1.json --out " +
                    dir + "/merged.json");
  ASSERT_EQ(m.code, 0) << m.err;
  reports::RunResults all = Load(dir + "/all.json"), merged = Load(dir + "/merged.json");
  EXPECT_EQ(merged.config().shard_count(), 1);
  ASSERT_EQ(merged.models(0).tasks_size(), all.models(0).tasks_size());
  for (int t = 0; t < all.models(0).tasks_size(); ++t) {
    const auto& a = all.models(0).tasks(t);
    const auto& b = merged.models(0).tasks(t);
    EXPECT_EQ(b.num_docs(), a.num_docs());
    EXPECT_EQ(b.num_requests(), a.num_requests());
    for (int k = 0; k < a.metrics_size(); ++k) {
      EXPECT_EQ(b.metrics(k).value(), a.metrics(k).value()) << a.task() << " " << k;
      EXPECT_EQ(b.metrics(k).stderr(), a.metrics(k).stderr()) << a.task() << " " << k;
    }
  }
  // Missing, duplicate and foreign shards are refused; nothing is written.
  Result missing = RunCli("merge " + dir + "/s0.json " + dir + "/s1.json --out " + dir + "/x.json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("shard 2/3 is missing"));
  Result dup = RunCli("merge " + dir + "/s0.json " + dir + "/s0.json " + dir + "/s1.json --out " +
                      dir + "/x.json");
  EXPECT_EQ(dup.code, 1);
  EXPECT_THAT(dup.err, HasSubstr("given twice"));
  ASSERT_EQ(RunCli("run --tasks piqa,boolq,lambada_openai --limit 8 --no-progress --shard 2/3 "
                   "--out " +
                   dir + "/other.json")
                .code,
            0);
  Result foreign = RunCli("merge " + dir + "/s0.json " + dir + "/s1.json " + dir +
                          "/other.json --out " + dir + "/x.json");
  EXPECT_EQ(foreign.code, 1);
  EXPECT_THAT(foreign.err, HasSubstr("different run"));
  Result unsharded = RunCli("merge " + dir + "/all.json --out " + dir + "/x.json");
  EXPECT_EQ(unsharded.code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
}

// Crashes of `merge` on bad results files, written by hand while reviewing
// MergeShards for the fuzz target tests/fuzz/fuzz_results and confirmed
// under it (ASan): a shard count of 10^9 in one file had merge allocate
// 8 GB, and a task named "a|b" passed for the tasks "a" and "b" of another
// shard, after which merge read past that shard's task list.
TEST(RunTest, MergeRefusesShardFilesThatCrashedIt) {
  auto parse = [](const std::string& json) {
    auto r = reports::ResultsFromJson(json, "shard.json");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : reports::RunResults();
  };
  auto huge =
      reports::MergeShards({parse(R"({"config": {"shard_index": 0, "shard_count": 1000000000}})")});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument) << huge.status();
  EXPECT_THAT(std::string(huge.status().message()), HasSubstr("shard 1/1000000000 is missing"));
  auto ambiguous = reports::MergeShards(
      {parse(R"({"config": {"shard_index": 0, "shard_count": 2}, "models": [{"tasks": [)"
             R"({"task": "a", "num_docs": "1", "docs": [{"doc_index": "0"}]}, {"task": "b"}]}]})"),
       parse(R"({"config": {"shard_index": 1, "shard_count": 2}, "models": [{"tasks": [)"
             R"({"task": "a|b", "num_docs": "1", "docs": [{"doc_index": "1"}]}]}]})")});
  EXPECT_EQ(ambiguous.status().code(), absl::StatusCode::kFailedPrecondition) << ambiguous.status();
  EXPECT_THAT(std::string(ambiguous.status().message()), HasSubstr("different run"));
}

// Shards whose metric lists are not one within the other (here each has
// one length the other lacks): the merged file would drop one, so merge
// refuses and names it.
TEST(RunTest, MergeRefusesShardsWithMetricsTheOthersLack) {
  auto shard = [](int index, int length) {
    auto r = reports::ResultsFromJson(
        absl::StrCat(R"({"config": {"shard_index": )", index,
                     R"(, "shard_count": 2}, "models": [{"tasks": [{"task": "a", )",
                     R"("num_docs": "1", "docs": [{"doc_index": ")", index,
                     R"(", "context_length": ")", length, R"(", "values": [1]}], )",
                     R"("metrics": [{"name": "acc", "context_length": ")", length, R"("}]}]}]})"),
        "shard.json");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : reports::RunResults();
  };
  auto merged = reports::MergeShards({shard(0, 1024), shard(1, 2048)});
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kFailedPrecondition) << merged.status();
  EXPECT_THAT(std::string(merged.status().message()),
              HasSubstr("shard 1 has a acc at length 2048"));
  EXPECT_TRUE(reports::MergeShards({shard(0, 1024), shard(1, 1024)}).ok());
}

TEST(RunTest, ReportTablesAcrossModels) {
  const std::string dir = testing::MakeTempDir("report");
  ASSERT_EQ(
      RunCli("run --tasks piqa,lambada_openai --limit 6 --no-progress --out " + dir + "/base.json")
          .code,
      0);
  ASSERT_EQ(RunCli("run --tasks piqa,lambada_openai --limit 6 --no-progress "
                   "--focal-temperature 0.4 --out " +
                   dir + "/focal.json")
                .code,
            0);
  const std::string files = dir + "/base.json " + dir + "/focal.json";
  Result md = RunCli("report " + files + " --baseline 'stories260K base'");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_THAT(md.out, HasSubstr("| Task | Metric | stories260K base | stories260K focal(t=0.4, "
                                "retrofit) |"));
  EXPECT_THAT(md.out, HasSubstr("| lambada_openai | perplexity |"));
  EXPECT_THAT(md.out, HasSubstr("**"));                                // the best of each row
  EXPECT_THAT(md.out, ::testing::ContainsRegex("\\([+-][0-9.]+\\)"));  // deltas
  Result csv = RunCli("report " + files + " --format csv --out " + dir + "/t.csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  const std::string t = testing::ReadFileOrDie(dir + "/t.csv");
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 5);  // header + 4 rows
  for (const char* f : {"latex", "html", "json"}) {
    EXPECT_EQ(RunCli("report " + files + " --format " + f).code, 0) << f;
  }
  Result bad = RunCli("report " + files + " --format docx");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown --format 'docx'"));
  // --baseline naming a results file picks that file's column.
  Result by_file = RunCli("report " + files + " --baseline " + dir + "/base.json");
  ASSERT_EQ(by_file.code, 0) << by_file.err;
  EXPECT_EQ(by_file.out, md.out);
  Result nobase = RunCli("report " + files + " --baseline nope");
  EXPECT_EQ(nobase.code, 1);
  EXPECT_THAT(nobase.err, HasSubstr("is not a column"));
  Result missing = RunCli("report /no/such.json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/no/such.json"));
}

TEST(RunTest, FocalRetrofitIsRecorded) {
  const std::string dir = testing::MakeTempDir("focal");
  Result r = RunCli("run --tasks piqa --limit 3 --focal-temperature 0.4 --out " + dir + "/r.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Load(dir + "/r.json").models(0).variant(), "focal(t=0.4, retrofit)");
}

}  // namespace
}  // namespace focal
