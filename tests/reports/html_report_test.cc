// SPDX-License-Identifier: Apache-2.0
// The self-contained HTML comparison report: content, escaping, determinism,
// a reviewable golden file (FOCAL_UPDATE_GOLDENS=1 rewrites it), and, where
// chromium is installed, a headless render to PNG.
#include "reports/html_report.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reports/results.pb.h"
#include "tests/reports/synthetic_report.h"
#include "tests/testing/test_util.h"

namespace focal::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGolden[] = "reports/comparison.html";  // under tests/testdata/golden

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(HtmlReportTest, SelfContainedWithChartsAndTable) {
  const std::string html = ComparisonHtml(MakeReport());
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(Count(html, "<svg "), 3) << "bars, RULER lines, HotpotQA lines";
  EXPECT_GE(Count(html, "<rect "), 2 * 3) << "a base and a focal bar per short-context row";
  EXPECT_EQ(Count(html, "<polyline "), 2 + 2 * 2) << "RULER: 2 models; HotpotQA: 2 x 2 lengths";
  EXPECT_EQ(Count(html,
                  "<polyline fill=\"none\" stroke=\"#0072b2\" stroke-width=\"2\" "
                  "stroke-dasharray=\"6 4\" points=\"\""),
            0)
      << "no empty line";
  EXPECT_EQ(Count(html, "class=\"whisker\""), 3);
  EXPECT_THAT(html, HasSubstr("RULER average score vs context length"));
  EXPECT_THAT(html, HasSubstr("HotpotQA (long) substring match vs gold passage depth"));
  EXPECT_THAT(html, HasSubstr(">1024</text>"));
  EXPECT_THAT(html, HasSubstr(">4096</text>"));
  EXPECT_THAT(html, HasSubstr("Attention entropy per layer: not measured"));
  // The table, as in the Markdown: significant differences bold.
  EXPECT_THAT(html, HasSubstr("<td>arc_easy</td><td>acc</td><td class=\"num\">200</td>"
                              "<td class=\"num\">0.6000</td><td class=\"num\">0.6600</td>"
                              "<td>focal(t=0.4)</td><td class=\"num\"><strong>0.0600</strong>"));
  EXPECT_THAT(html, HasSubstr("<td>hellaswag</td><td>acc_norm</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">-0.0200</td>"));
  EXPECT_THAT(html, HasSubstr("<td>wikitext</td><td>perplexity</td>"));
  EXPECT_THAT(html, HasSubstr("<td>hotpotqa_long</td><td>substring_match@2048 depth 0.5</td>"));
  EXPECT_THAT(html, HasSubstr("<td>ruler_vt</td><td>acc@4096</td>"));
  EXPECT_THAT(html, HasSubstr("Effective length: base 2048, focal(t=0.4) 4096"));
  // Escaping: the task name with '<' never appears raw.
  EXPECT_THAT(html, HasSubstr("piqa&lt;x&gt;&amp;y"));
  EXPECT_THAT(html, Not(HasSubstr("piqa<x>")));
  // Self-contained: no network, no scripts.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("nan")));
}

TEST(HtmlReportTest, DiagnosticsChartsAndAgreementTable) {
  const std::string html = ComparisonHtml(MakeReportWithDiagnostics());
  EXPECT_EQ(Count(html, "<svg "), 5) << "plus attention entropy and needle mass per layer";
  EXPECT_EQ(Count(html, "<polyline "), 2 + 2 * 2 + 2 + 2);
  EXPECT_THAT(html, HasSubstr("Attention entropy per layer at the final query position"));
  EXPECT_THAT(html, HasSubstr("Attention mass on the queried needles per layer"));
  // Entropy per layer of the focal model: mean over heads and the two tasks,
  // layer 0: (1.1 + 1.5) / 2 = 1.3.
  EXPECT_THAT(html, HasSubstr("<title>focal focal(t=0.4): 1.3000</title>"));
  EXPECT_THAT(html, HasSubstr("<h2>Logit agreement with the base</h2>"));
  EXPECT_THAT(html, HasSubstr("0.012300 &plusmn; 0.001100"));
  EXPECT_THAT(html, HasSubstr("95.00 &plusmn; 0.50%"));
  EXPECT_THAT(html, Not(HasSubstr("not measured")));
  EXPECT_THAT(html, Not(HasSubstr("nan")));
}

TEST(HtmlReportTest, Deterministic) {
  EXPECT_EQ(ComparisonHtml(MakeReport()), ComparisonHtml(MakeReport()));
}

TEST(HtmlReportTest, MissingChartsBecomeNotes) {
  ComparisonReport rep = MakeReport();
  rep.clear_lengths();
  rep.mutable_rows()->DeleteSubrange(4, rep.rows_size() - 4);  // short-context rows only
  const std::string html = ComparisonHtml(rep);
  EXPECT_EQ(Count(html, "<svg "), 1);
  EXPECT_EQ(Count(html, "<polyline "), 0);
  EXPECT_THAT(html, HasSubstr("no long-context tasks in this comparison"));
  EXPECT_THAT(html, HasSubstr("HotpotQA accuracy vs gold depth: no hotpotqa_long"));
  EXPECT_THAT(html, Not(HasSubstr("RULER average per length")));
}

TEST(HtmlReportTest, MatchesGolden) {
  EXPECT_TRUE(testing::MatchesGolden(ComparisonHtml(MakeReportWithDiagnostics()), kGolden));
}

// Big-endian 32-bit integer at `at`.
uint32_t Be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

TEST(HtmlReportTest, RendersInHeadlessChromium) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed: the headless rendering check is skipped "
                    "(apt-get install chromium to run it)";
  }
  const std::string dir = testing::MakeTempDir("html_report");
  // The golden page (MatchesGolden keeps it equal to ComparisonHtml's output).
  const std::string page = testing::GoldenPath(kGolden), png = dir + "/comparison.png",
                    log = dir + "/chromium.log";
  ASSERT_TRUE(std::filesystem::exists(page)) << page;
  const std::string cmd = absl::StrCat(
      "timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-extensions --user-data-dir=",
      dir,
      "/profile --enable-logging=stderr --v=0 "
      "--screenshot=",
      png, " --window-size=1200,2000 file://", page, " >", log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  const std::string out = testing::ReadFileOrDie(log);
  ASSERT_EQ(rc, 0) << "chromium failed:\n" << out;
  EXPECT_THAT(out, Not(HasSubstr("CONSOLE"))) << "console message while rendering:\n" << out;
  EXPECT_THAT(out, Not(HasSubstr("Uncaught"))) << out;
  ASSERT_TRUE(std::filesystem::exists(png)) << "no screenshot:\n" << out;
  const std::string data = testing::ReadFileOrDie(png);
  ASSERT_GE(data.size(), 24u);
  EXPECT_EQ(data.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(Be32(data, 16), 1200u);
  EXPECT_EQ(Be32(data, 20), 2000u);
  EXPECT_GT(data.size(), 30000u) << "suspiciously small screenshot (blank page?)";
  if (const char* keep = std::getenv("FOCAL_KEEP_SCREENSHOT"); keep != nullptr && *keep) {
    std::filesystem::copy_file(png, keep, std::filesystem::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace focal::reports
