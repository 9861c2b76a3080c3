// SPDX-License-Identifier: Apache-2.0
// The self-contained HTML comparison report: content, escaping, determinism,
// a reviewable golden file (FOCAL_UPDATE_GOLDENS=1 rewrites it), and, where
// chromium is installed, a headless render to PNG.
#include "reports/html_report.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reports/results.pb.h"
#include "tests/testing/test_util.h"

namespace focal::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGolden[] = "tests/testdata/golden/reports/comparison.html";

MetricComparison* AddRow(ComparisonReport* rep, const std::string& task,
                         const std::string& metric, int64_t length, double base, double focal,
                         double ci_low, double ci_high) {
  MetricComparison* r = rep->add_rows();
  r->set_task(task);
  r->set_metric(metric);
  r->set_context_length(length);
  r->set_focal_variant("focal(t=0.4)");
  r->set_focal_model("models/focal");
  r->set_n(200);
  r->set_base(base);
  r->set_focal(focal);
  r->set_diff(focal - base);
  r->set_rel_diff(base != 0 ? (focal - base) / base : 0);
  r->set_ci_low(ci_low);
  r->set_ci_high(ci_high);
  r->set_higher_is_better(true);
  r->set_significant(ci_low > 0 || ci_high < 0);
  r->set_wins(30);
  r->set_ties(150);
  r->set_losses(20);
  return r;
}

ComparisonReport MakeReport() {
  ComparisonReport rep;
  ModelRun* b = rep.mutable_runs()->add_models();
  b->set_model_path("models/base");
  b->set_variant("base");
  b->set_weights_sha256("0123456789abcdef0123");
  b->set_effective_length(2048);
  ModelRun* f = rep.mutable_runs()->add_models();
  f->set_model_path("models/focal");
  f->set_variant("focal(t=0.4)");
  f->set_weights_sha256("fedcba9876543210fedc");
  f->set_effective_length(4096);
  rep.set_bootstrap_iters(10000);
  rep.set_bootstrap_seed(1234);
  rep.set_confidence(0.95);

  AddRow(&rep, "arc_easy", "acc", 0, 0.60, 0.66, 0.02, 0.10)->set_mcnemar_p(0.0123);
  AddRow(&rep, "hellaswag", "acc_norm", 0, 0.42, 0.40, -0.06, 0.02)->set_mcnemar_p(0.41);
  AddRow(&rep, "piqa<x>&y", "acc", 0, 0.70, 0.71, -0.03, 0.05)->set_mcnemar_p(0.77);
  MetricComparison* ppl = AddRow(&rep, "wikitext", "perplexity", 0, 21.5, 20.1, 0.91, 0.97);
  ppl->set_diff(20.1 / 21.5);
  ppl->set_rel_diff(20.1 / 21.5 - 1);
  ppl->set_higher_is_better(false);
  ppl->set_significant(true);

  const int64_t lengths[] = {1024, 2048, 4096};
  const double niah_base[] = {98.0, 90.0, 61.0}, niah_focal[] = {99.0, 94.0, 78.0};
  const double vt_base[] = {88.0, 80.0, 52.0}, vt_focal[] = {90.0, 85.0, 70.0};
  for (int i = 0; i < 3; ++i) {
    AddRow(&rep, "ruler_niah_single_1", "acc", lengths[i], niah_base[i], niah_focal[i], -1.0,
           2.0 + 4.0 * i);
    AddRow(&rep, "ruler_vt", "acc", lengths[i], vt_base[i], vt_focal[i], 0.5, 3.0 + 6.0 * i);
    LengthComparison* l = rep.add_lengths();
    l->set_focal_variant("focal(t=0.4)");
    l->set_context_length(lengths[i]);
    l->set_base_average((niah_base[i] + vt_base[i]) / 2);
    l->set_focal_average((niah_focal[i] + vt_focal[i]) / 2);
    l->set_relative_improvement((l->focal_average() - l->base_average()) / l->base_average());
  }
  const double depths[] = {0.0, 0.5, 1.0};
  const double hq_base[2][3] = {{62.0, 48.0, 60.0}, {50.0, 31.0, 47.0}};
  const double hq_focal[2][3] = {{63.0, 55.0, 61.0}, {54.0, 44.0, 52.0}};
  for (int li = 0; li < 2; ++li) {
    for (int di = 0; di < 3; ++di) {
      AddRow(&rep, "hotpotqa_long", "substring_match", lengths[li], hq_base[li][di],
             hq_focal[li][di], -4.0, 9.0)
          ->set_gold_depth(depths[di]);
    }
  }
  return rep;
}

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
  EXPECT_EQ(Count(html, "<polyline fill=\"none\" stroke=\"#0072b2\" stroke-width=\"2\" "
                        "stroke-dasharray=\"6 4\" points=\"\""),
            0)
      << "no empty line";
  EXPECT_EQ(Count(html, "class=\"whisker\""), 3);
  EXPECT_THAT(html, HasSubstr("RULER average score vs context length"));
  EXPECT_THAT(html, HasSubstr("HotpotQA (long) substring match vs gold passage depth"));
  EXPECT_THAT(html, HasSubstr(">1024</text>"));
  EXPECT_THAT(html, HasSubstr(">4096</text>"));
  EXPECT_THAT(html, HasSubstr("attention diagnostics: not measured in this version"));
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
  const std::string html = ComparisonHtml(MakeReport());
  const std::string path = testing::SourcePath(kGolden);
  const char* update = std::getenv("FOCAL_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    testing::WriteStringToFile(path, html);
    std::cerr << "wrote " << path << "\n";
    return;
  }
  EXPECT_EQ(html, testing::ReadFileOrDie(path))
      << "golden " << path << " differs (FOCAL_UPDATE_GOLDENS=1 rewrites it)";
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
  const std::string page = testing::SourcePath(kGolden), png = dir + "/comparison.png",
                    log = dir + "/chromium.log";
  ASSERT_TRUE(std::filesystem::exists(page)) << page;
  const std::string cmd = absl::StrCat(
      "timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-extensions --user-data-dir=", dir, "/profile --enable-logging=stderr --v=0 "
      "--screenshot=", png, " --window-size=1200,2000 file://", page, " >", log, " 2>&1");
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
