// SPDX-License-Identifier: Apache-2.0
// What --precision bf16 changes, bounded: the default model (SmolLM2-135M,
// Q4_1 GGUF) on the first 40 documents of each fetched short task, scored
// exact (fp32) and in the BF16 mode. The bounds are numbers, set from a
// measured run with room to spare (docs/benchmarks.md has figures on more
// documents): the chosen answer (the highest loglikelihood) agrees on at least
// 97% of documents over all tasks, no choice's loglikelihood (a sum over its
// tokens) moves by more than 0.75 nats and the mean move stays under 0.10
// (measured with the widened path of an AVX2 CPU: 99.17% of these 240
// documents, 0.379 nats at most, 0.051 on average; with vdpbf16ps on
// 2026-12-06: 100%, 0.271 and 0.049; the bounds on the moves are about
// twice the widened path's).
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/asset_root.h"
#include "base/json.h"
#include "gtest/gtest.h"
#include "harness/runner.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/testing/test_util.h"

namespace focal::harness {
namespace {

constexpr double kMinAgreement = 0.97;
constexpr double kMaxLoglikelihoodDiff = 0.75;
constexpr double kMaxMeanLoglikelihoodDiff = 0.10;

using DocLls = testing::SampleLls;

size_t ArgMax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) best = v[i] > v[best] ? i : best;
  return best;
}

TEST(Bf16AgreementTest, ChosenAnswersAndLoglikelihoodsStayClose) {
  if (std::string why = kernels::CpuPrecisionUnsupported(kernels::CpuPrecision::kBf16);
      !why.empty()) {
    GTEST_SKIP() << why;
  }
  FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "scripts/fetch_default_model.sh");
  FOCAL_REQUIRE_FILE(DataCacheDir() + "/hellaswag/hellaswag_val.jsonl", "scripts/fetch_data.sh");
  const std::string dir = testing::MakeTempDir("bf16_agreement");
  DocLls lls[2];
  const char* precisions[2] = {"fp32", "bf16"};
  for (int p = 0; p < 2; ++p) {
    RunOptions o;
    o.models = {testing::DefaultModelGguf()};
    o.tasks = "arc_easy,arc_challenge,boolq,hellaswag,piqa,winogrande";
    o.data_cache = DataCacheDir();
    o.limit = 40;
    o.device = "cpu";
    o.precision = precisions[p];
    o.threads = 2;
    o.progress = false;
    o.samples = absl::StrCat(dir, "/", precisions[p], ".jsonl");
    std::ostringstream table;
    absl::StatusOr<reports::RunResults> r = RunEvaluation(o, table);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->models(0).backend(), p == 0 ? "cpu" : "cpu:bf16");
    EXPECT_EQ(r->config().data_warning(), "") << "not the fetched data";
    lls[p] = testing::SampleLoglikelihoods(o.samples);
  }
  ASSERT_EQ(lls[0].size(), 6u);
  int docs = 0, same = 0, choices = 0;
  double worst = 0, total = 0;
  for (const auto& [task, by_doc] : lls[0]) {
    ASSERT_EQ(by_doc.size(), 40u) << task;
    for (const auto& [doc, exact] : by_doc) {
      const std::vector<double>& bf16 = lls[1][task][doc];
      ASSERT_EQ(bf16.size(), exact.size()) << task << " doc " << doc;
      ++docs;
      same += ArgMax(exact) == ArgMax(bf16);
      for (size_t i = 0; i < exact.size(); ++i) {
        worst = std::max(worst, std::fabs(exact[i] - bf16[i]));
        total += std::fabs(exact[i] - bf16[i]);
        ++choices;
      }
    }
  }
  const double agreement = static_cast<double>(same) / docs;
  const double mean = total / choices;
  std::printf(
      "[ bf16 ] %d documents: same choice %.4f, |loglikelihood diff| largest %.4g, mean %.4g\n",
      docs, agreement, worst, mean);
  EXPECT_GE(agreement, kMinAgreement);
  EXPECT_LE(worst, kMaxLoglikelihoodDiff);
  EXPECT_LE(mean, kMaxMeanLoglikelihoodDiff);
  // The mode is not the exact mode under another name.
  EXPECT_GT(worst, 1e-4);
}

}  // namespace
}  // namespace focal::harness
