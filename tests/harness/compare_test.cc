// SPDX-License-Identifier: Apache-2.0
// `focal-eval compare` end to end on the bundled model against its own t=0.4
// retrofit, and BuildComparison's refusal to pair different requests.
#include <cstdlib>
#include <filesystem>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "reports/comparison.h"
#include "reports/results_writer.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int RunCli(const std::string& args, std::string* out, std::string* err) {
  testing::CommandResult r = testing::RunOnStories260K(FOCAL_EVAL_BIN, args);
  *out = r.out;
  *err = r.err;
  return r.code;
}

// Runs `common` as shards 0..n-1 of n into the report directories dir/s<i>;
// "" when every shard succeeds, else the failing shard's stderr.
std::string RunShards(const std::string& common, const std::string& dir, int n) {
  std::string out, err;
  for (int i = 0; i < n; ++i) {
    if (RunCli(absl::StrCat(common, "--shard ", i, "/", n, " --out ", dir, "/s", i), &out, &err)) {
      return absl::StrCat("shard ", i, "/", n, ": ", err);
    }
  }
  return "";
}

// Each of `files` is byte-identical in directories `a` and `b`.
void ExpectSameFiles(const std::string& a, const std::string& b,
                     std::initializer_list<const char*> files) {
  for (const char* f : files) {
    EXPECT_EQ(testing::ReadFileOrDie(a + "/" + f), testing::ReadFileOrDie(b + "/" + f)) << f;
  }
}

reports::ComparisonReport LoadReport(const std::string& path) {
  reports::ComparisonReport r;
  auto st = google::protobuf::util::JsonStringToMessage(testing::ReadFileOrDie(path), &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

TEST(CompareTest, DefaultRetrofitComparisonWritesEveryReport) {
  const std::string dir = testing::MakeTempDir("report");
  std::string out, err;
  ASSERT_EQ(RunCli("compare --tasks piqa,lambada_openai --limit 12 --bootstrap 500 --no-progress "
                   "--out " +
                       dir,
                   &out, &err),
            0)
      << err;
  for (const char* f :
       {"report.md", "report.csv", "report.json", "table.tex", "results.json", "samples.jsonl"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  EXPECT_THAT(out, HasSubstr("focal(t=0.4, retrofit)"));
  EXPECT_THAT(testing::ReadFileOrDie(dir + "/table.tex"), HasSubstr("\\toprule"));
  reports::ComparisonReport rep = LoadReport(dir + "/report.json");
  ASSERT_EQ(rep.runs().models_size(), 2);
  EXPECT_EQ(rep.runs().models(0).variant(), "base");
  EXPECT_EQ(rep.requests_sha256().size(), 2u);
  ASSERT_EQ(rep.rows_size(), 4);  // piqa acc, acc_norm; lambada acc, perplexity
  for (const auto& r : rep.rows()) {
    EXPECT_EQ(r.n(), 12) << r.metric();
    EXPECT_LE(r.ci_low(), r.ci_high());
    EXPECT_EQ(r.wins() + r.ties() + r.losses(), 12);
    if (r.metric() == "perplexity") {
      EXPECT_NEAR(r.diff(), r.focal() / r.base(), 1e-9);
      EXPECT_FALSE(r.has_mcnemar_p());
    } else {
      EXPECT_NEAR(r.diff(), r.focal() - r.base(), 1e-12);
      EXPECT_TRUE(r.has_mcnemar_p());
      EXPECT_GE(r.mcnemar_p(), 0.0);
      EXPECT_LE(r.mcnemar_p(), 1.0);
    }
  }
  // The base column is exactly what `run` reports for the same settings.
  ASSERT_EQ(
      RunCli("run --tasks piqa --limit 12 --no-progress --out " + dir + "/plain.json", &out, &err),
      0);
  auto plain = reports::ResultsFromJson(testing::ReadFileOrDie(dir + "/plain.json"), "plain");
  ASSERT_TRUE(plain.ok());
  for (const auto& r : rep.rows()) {
    if (r.task() == "piqa" && r.metric() == "acc") {
      EXPECT_EQ(r.base(), plain->models(0).tasks(0).metrics(0).value());
    }
  }
  // CSV: a header and one line per row.
  const std::string csv = testing::ReadFileOrDie(dir + "/report.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
}

TEST(CompareTest, LongContextRowsAndPerLengthImprovement) {
  const std::string dir = testing::MakeTempDir("longcmp");
  std::string out, err;
  ASSERT_EQ(RunCli("compare --tasks ruler_niah_single_2,ruler_niah_single_3 --lengths 2048 "
                   "--allow-length-extrapolation --limit 2 --bootstrap 200 --no-progress --out " +
                       dir,
                   &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("## RULER average per length"));
  reports::ComparisonReport rep = LoadReport(dir + "/report.json");
  ASSERT_EQ(rep.lengths_size(), 1);
  EXPECT_EQ(rep.lengths(0).context_length(), 2048);
  for (const auto& r : rep.rows()) EXPECT_EQ(r.context_length(), 2048);
}

TEST(CompareTest, AttentionStatsAndLogitAgreement) {
  const std::string dir = testing::MakeTempDir("diag");
  std::string out, err;
  ASSERT_EQ(RunCli("compare --tasks arc_easy,ruler_niah_multikey_1 --lengths 1024 "
                   "--allow-length-extrapolation --limit 3 --attention-stats 2 --bootstrap 100 "
                   "--no-progress --out " +
                       dir,
                   &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("## Logit agreement with the base"));
  EXPECT_THAT(out, HasSubstr("## Attention diagnostics"));
  reports::ComparisonReport rep = LoadReport(dir + "/report.json");
  // Agreement covers the loglikelihood task only (generation has no scored continuation).
  ASSERT_EQ(rep.agreement_size(), 1);
  EXPECT_EQ(rep.agreement(0).task(), "arc_easy");
  EXPECT_GT(rep.agreement(0).tokens(), 0);
  EXPECT_GT(rep.agreement(0).mean_kl(), 0);
  // Two models x two tasks, every layer, needle mass on the NIAH task only.
  ASSERT_EQ(rep.attention_size(), 4);
  for (const auto& a : rep.attention()) {
    EXPECT_EQ(a.samples(), 2) << a.task();
    EXPECT_EQ(a.layers_size(), 5);
    const bool niah = a.task() == "ruler_niah_multikey_1";
    EXPECT_EQ(a.context_length(), niah ? 1024 : 0);
    for (const auto& l : a.layers()) {
      EXPECT_EQ(l.head_entropy_size(), 8);
      EXPECT_EQ(l.head_needle_mass_size(), niah ? 8 : 0);
      for (double m : l.head_needle_mass()) {
        EXPECT_GE(m, 0);
        EXPECT_LE(m, 1);
      }
    }
  }
  const std::string csv = testing::ReadFileOrDie(dir + "/attention.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 5 * 8);
  const std::string html = testing::ReadFileOrDie(dir + "/report.html");
  EXPECT_THAT(html, HasSubstr("Attention entropy per layer"));
  EXPECT_THAT(html, HasSubstr("Attention mass on the queried needles"));
  // A rerun resumes: finished agreement tasks are read back from the cache
  // (proved by editing the cached value), not recomputed.
  std::string cached;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cache")) {
    if (e.path().filename().string().rfind("agreement-", 0) == 0) {
      ASSERT_TRUE(cached.empty()) << "one agreement file per task";
      cached = e.path().string();
    }
  }
  ASSERT_FALSE(cached.empty());
  std::string text = testing::ReadFileOrDie(cached);
  const std::string tokens = absl::StrCat("\"tokens\": \"", rep.agreement(0).tokens(), "\"");
  ASSERT_THAT(text, HasSubstr(tokens));
  text.replace(text.find(tokens), tokens.size(), "\"tokens\": \"424242\"");
  // Its model index is this run's, not the one stored with it (the pair may
  // stand elsewhere in another run's --focal list).
  const std::string index = "\"focal_index\": 1";
  ASSERT_THAT(text, HasSubstr(index));
  text.replace(text.find(index), index.size(), "\"focal_index\": 7");
  testing::WriteStringToFile(cached, text);
  ASSERT_EQ(RunCli("compare --tasks arc_easy,ruler_niah_multikey_1 --lengths 1024 "
                   "--allow-length-extrapolation --limit 3 --attention-stats 2 --bootstrap 100 "
                   "--no-progress --out " +
                       dir,
                   &out, &err),
            0)
      << err;
  const reports::ComparisonReport again = LoadReport(dir + "/report.json");
  EXPECT_EQ(again.agreement(0).tokens(), 424242);
  EXPECT_EQ(again.agreement(0).focal_index(), 1);
  // Off switch: no agreement section.
  const std::string dir2 = testing::MakeTempDir("noagree");
  ASSERT_EQ(RunCli("compare --tasks arc_easy --limit 3 --no-logit-agreement --bootstrap 100 "
                   "--no-progress --out " +
                       dir2,
                   &out, &err),
            0)
      << err;
  EXPECT_EQ(LoadReport(dir2 + "/report.json").agreement_size(), 0);
  EXPECT_FALSE(std::filesystem::exists(dir2 + "/attention.csv"));
}

// A model beside itself in the BF16 mode ("DIR@bf16"): each runs on its own
// backend, the tables name the precision, and the logit agreement measures
// what the mode changes.
TEST(CompareTest, ModelBesideItselfInBf16) {
  if (std::string why = kernels::CpuPrecisionUnsupported(kernels::CpuPrecision::kBf16);
      !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string dir = testing::MakeTempDir("cmp_bf16");
  std::string out, err;
  ASSERT_EQ(RunCli("compare --tasks arc_easy,piqa --limit 6 --device cpu --focal default@bf16 "
                   "--focal default@t=0.4@bf16 --bootstrap 100 --no-progress --out " +
                       dir,
                   &out, &err),
            0)
      << err;
  const reports::ComparisonReport rep = LoadReport(dir + "/report.json");
  ASSERT_EQ(rep.runs().models_size(), 3);
  EXPECT_EQ(rep.runs().models(0).backend(), "cpu");
  EXPECT_EQ(rep.runs().models(1).backend(), "cpu:bf16");
  EXPECT_EQ(rep.runs().models(2).backend(), "cpu:bf16");
  EXPECT_EQ(rep.runs().models(1).variant(), "base");
  EXPECT_THAT(out, HasSubstr("| base, cpu:bf16 |"));
  EXPECT_THAT(out, HasSubstr("| focal(t=0.4, retrofit), cpu:bf16 |"));
  ASSERT_GE(rep.agreement_size(), 2);
  EXPECT_EQ(rep.agreement(0).focal_variant(), "base, cpu:bf16");
  EXPECT_GT(rep.agreement(0).mean_kl(), 0);     // the mode changes something...
  EXPECT_LT(rep.agreement(0).mean_kl(), 0.05);  // ...but far less than the retrofit
  // Each sample line names its backend: the two runs of one model stay apart.
  const std::string samples = testing::ReadFileOrDie(dir + "/samples.jsonl");
  EXPECT_THAT(samples, HasSubstr(R"("variant": "base", "backend": "cpu", )"));
  EXPECT_THAT(samples, HasSubstr(R"("variant": "base", "backend": "cpu:bf16", )"));
  // A precision the device string contradicts is refused.
  EXPECT_EQ(RunCli("compare --tasks piqa --limit 2 --device cpu:fp32 --focal default@bf16 --out " +
                       testing::MakeTempDir("bad"),
                   &out, &err),
            1);
  EXPECT_THAT(err, HasSubstr("--device cpu:fp32 names precision fp32 but --precision is bf16"));
  EXPECT_EQ(RunCli("run --tasks piqa --precision fp16", &out, &err), 2);
}

// Two CPU replicas per model: every report file and the samples are those
// of one device, byte for byte.
TEST(CompareTest, TwoCpuReplicasEqualOne) {
  const std::string dir = testing::MakeTempDir("cmp_replicas");
  std::string out, err;
  for (const std::string device : {"cpu", "cpu,cpu"}) {
    ASSERT_EQ(RunCli("compare --tasks arc_easy,piqa,ruler_niah_single_1 --lengths 1024 "
                     "--allow-length-extrapolation --limit 8 --batch-tokens 256 --bootstrap 200 "
                     "--no-progress --device " +
                         device + " --out " + dir + "/" + device,
                     &out, &err),
              0)
        << err;
  }
  ExpectSameFiles(dir + "/cpu,cpu", dir + "/cpu",
                  {"report.md", "report.csv", "report.html", "table.tex", "samples.jsonl"});
}

// A sharded compare (three report directories, given out of order) joined
// by --from-shards: every report file equals the one-process compare's but
// report.json, whose request checksums are chained per shard and whose wall
// times differ.
TEST(CompareTest, FromShardsEqualsTheUnshardedCompare) {
  const std::string dir = testing::MakeTempDir("cmp_shards");
  const std::string common =
      "compare --tasks arc_easy,piqa,ruler_niah_single_1,hotpotqa_long --lengths 1024 "
      "--allow-length-extrapolation --limit 8 --no-logit-agreement --bootstrap 300 --no-progress ";
  std::string out, err;
  ASSERT_EQ(RunCli(common + "--out " + dir + "/all", &out, &err), 0) << err;
  ASSERT_EQ(RunShards(common, dir, 3), "");
  const std::string shards = dir + "/s2 " + dir + "/s0 " + dir + "/s1";
  // (The shards' --bootstrap 300 is taken from their reports.)
  ASSERT_EQ(RunCli("compare --from-shards " + shards + " --out " + dir + "/merged", &out, &err), 0)
      << err;
  ExpectSameFiles(dir + "/merged", dir + "/all",
                  {"report.md", "report.csv", "report.html", "table.tex"});
  EXPECT_EQ(LoadReport(dir + "/merged/report.json").rows_size(),
            LoadReport(dir + "/all/report.json").rows_size());
  // A missing shard is named; a shard that is no compare output is refused.
  EXPECT_NE(RunCli("compare --from-shards " + dir + "/s0 " + dir + "/s2 --out " + dir + "/m2", &out,
                   &err),
            0);
  EXPECT_THAT(err, HasSubstr("shard 1/3 is missing"));
  EXPECT_NE(RunCli("compare --from-shards " + dir + "/nothing --out " + dir + "/m3", &out, &err),
            0);
  EXPECT_THAT(err, HasSubstr(dir + "/nothing/results.json"));
  EXPECT_EQ(
      RunCli("compare --from-shards " + shards + " --base x --out " + dir + "/m4", &out, &err), 2);
}

// A shard that holds none of a task's documents says so in its report, and
// --from-shards still joins it into the one-process compare.
TEST(CompareTest, ShardWithoutDocumentsSaysSoAndJoins) {
  const std::string dir = testing::MakeTempDir("cmp_empty_shard");
  const std::string common =
      "compare --tasks piqa,ruler_niah_single_1 --lengths 1024 --allow-length-extrapolation "
      "--limit 1 --no-logit-agreement --bootstrap 100 --no-progress ";
  std::string out, err;
  ASSERT_EQ(RunCli(common + "--out " + dir + "/all", &out, &err), 0) << err;
  ASSERT_EQ(RunShards(common, dir, 2), "");
  EXPECT_THAT(testing::ReadFileOrDie(dir + "/s1/report.md"),
              HasSubstr("No documents of piqa, ruler_niah_single_1 in this shard (1/2)"));
  EXPECT_THAT(testing::ReadFileOrDie(dir + "/s0/report.md"), Not(HasSubstr("No documents")));
  ASSERT_EQ(RunCli("compare --from-shards " + dir + "/s1 " + dir + "/s0 --out " + dir + "/merged",
                   &out, &err),
            0)
      << err;
  ExpectSameFiles(dir + "/merged", dir + "/all", {"report.md", "report.csv", "table.tex"});
}

TEST(CompareTest, RefusesToPairDifferentRequests) {
  reports::RunResults runs;
  runs.add_models()->set_variant("base");
  runs.add_models()->set_variant("focal");
  std::vector<reports::PerDocScores> s(2);
  for (auto& p : s) p.values["piqa"]["acc"] = {1, 0, 1};
  s[0].requests_sha256["piqa"] = "aaaaaaaaaaaaaaaa";
  s[1].requests_sha256["piqa"] = "bbbbbbbbbbbbbbbb";
  auto rep = reports::BuildComparison(runs, s, {});
  EXPECT_THAT(
      rep, testing::StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("refusing to pair")));
  std::string out, err;
  // Temperatures are per model in compare: --focal DIR@t=T.
  EXPECT_EQ(
      RunCli("compare --tasks piqa --focal-temperature 0.4 --out " + testing::MakeTempDir("bad"),
             &out, &err),
      2);
  EXPECT_EQ(RunCli("compare --tasks piqa --focal /x@t=zero --out " + testing::MakeTempDir("bad"),
                   &out, &err),
            1);
  EXPECT_THAT(err, HasSubstr("after '@t=' must be a number > 0"));
}

}  // namespace
}  // namespace focal
