// SPDX-License-Identifier: Apache-2.0
// Every comparison writer on a fixed synthetic report, byte for byte against
// reviewable golden files (FOCAL_UPDATE_GOLDENS=1 rewrites them), plus a few
// hand-checked cells so a rewritten golden cannot hide a wrong number.
#include <algorithm>
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reports/comparison.h"
#include "tests/reports/synthetic_report.h"
#include "tests/testing/test_util.h"

namespace focal::reports {
namespace {

using ::testing::HasSubstr;

TEST(ComparisonGoldenTest, Markdown) {
  const std::string md = ComparisonMarkdown(MakeReportWithDiagnostics());
  EXPECT_TRUE(testing::MatchesGolden(md, "reports/comparison.md"));
  EXPECT_THAT(md, HasSubstr("| arc_easy | acc | 200 | 0.6000 | 0.6600 | focal(t=0.4) | "
                            "**0.0600** | +10.0% | [0.0200, 0.1000] | 0.0123 | 30/150/20 |"));
  // 74 - 56.5 = 17.5, its interval excludes 0 (bold); a report from before
  // category intervals (1024) shows none.
  EXPECT_THAT(md, HasSubstr("| focal(t=0.4) | 4096 | 56.5000 | 74.0000 | **17.5000** | "
                            "[9.0000, 26.0000] | 400 | +31.0% |"));
  EXPECT_THAT(md,
              HasSubstr("| focal(t=0.4) | 1024 | 93.0000 | 94.5000 | 1.5000 | - | - | +1.6% |"));
  EXPECT_THAT(md, HasSubstr("| arc_easy | focal(t=0.4) | 1000 | 0.012300 ± 0.001100 | "
                            "0.009800 | 0.045600 | 0.123400 | 95.00 ± 0.50% |"));
  // Entropy, layer 1: base (1.7 + 2.2) / 2, focal (0.8 + 1.2) / 2.
  EXPECT_THAT(md, HasSubstr("| Layer | base base | focal focal(t=0.4) |"));
  EXPECT_THAT(md, HasSubstr("| 1 | 1.9500 | 1.0000 |"));
  // Needle mass, layer 0: base 0.15, focal 0.35 (NIAH only).
  EXPECT_THAT(md, HasSubstr("| 0 | 0.1500 | 0.3500 |"));
  EXPECT_THAT(md,
              HasSubstr("| ruler_niah_single_1@4096 | 8 | 2.4000 (0.1750) | 1.3500 (0.3750) |"));
}

TEST(ComparisonGoldenTest, Csv) {
  const std::string csv = ComparisonCsv(MakeReportWithDiagnostics());
  EXPECT_TRUE(testing::MatchesGolden(csv, "reports/comparison.csv"));
  EXPECT_THAT(csv, HasSubstr("hotpotqa_long,substring_match,2048,0.5,\"focal(t=0.4)\",200,31,44,"));
}

TEST(ComparisonGoldenTest, AttentionCsv) {
  const std::string csv = ComparisonAttentionCsv(MakeReportWithDiagnostics());
  EXPECT_TRUE(testing::MatchesGolden(csv, "reports/attention.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 2 * 2 * 2);
  EXPECT_THAT(csv, HasSubstr("\"models/focal\",\"focal(t=0.4)\",ruler_niah_single_1,4096,,8,1,1,"
                             "1.3,0.45\n"));
}

TEST(ComparisonGoldenTest, Latex) {
  const std::string tex = ComparisonLatex(MakeReportWithDiagnostics());
  EXPECT_TRUE(testing::MatchesGolden(tex, "reports/table.tex"));
  EXPECT_THAT(tex, HasSubstr("piqa<x>\\&y"));
}

TEST(ComparisonGoldenTest, Json) {
  auto json = ComparisonJson(MakeReportWithDiagnostics());
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(testing::MatchesGolden(*json, "reports/comparison.json"));
}

}  // namespace
}  // namespace focal::reports
