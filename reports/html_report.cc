// SPDX-License-Identifier: Apache-2.0
#include "reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "reports/comparison.h"
#include "reports/length_summary.h"
#include "reports/results_writer.h"
#include "reports/svg.h"

namespace focal::reports {
namespace {

using svg::Color;

// Values in tooltips and tables: fixed precision, so the output is byte-stable.
std::string Fmt(double x) { return std::isnan(x) ? "N/A" : absl::StrFormat("%.4f", x); }

std::string MetricLabel(const MetricComparison& r) {
  const double depth = r.gold_depth();
  return ::focal::reports::MetricLabel(r.metric(), r.context_length(),
                                       r.has_gold_depth() ? &depth : nullptr);
}

std::string BaseLabel(const ComparisonReport& rep) {
  if (rep.runs().models_size() == 0 || rep.runs().models(0).variant().empty()) return "base";
  return rep.runs().models(0).variant();
}

// Chart 1: base and focal bars per (task, metric), focal whisker = base + CI.
std::string TaskBarsChart(const ComparisonReport& rep) {
  struct Group {
    std::string task, metric;
    double base = 0;
    std::vector<const MetricComparison*> focal;
  };
  std::vector<Group> groups;
  std::vector<std::string> variants;
  for (const MetricComparison& r : rep.rows()) {
    if (r.context_length() > 0 || r.metric() == "perplexity") continue;
    if (std::find(variants.begin(), variants.end(), r.focal_variant()) == variants.end()) {
      variants.push_back(r.focal_variant());
    }
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.task == r.task() && g.metric == r.metric();
    });
    if (it == groups.end()) {
      groups.push_back(Group{r.task(), r.metric(), r.base(), {}});
      it = groups.end() - 1;
    }
    it->focal.push_back(&r);
  }
  if (groups.empty()) {
    return "<p class=\"note\">Per-task chart: no short-context rows in this comparison.</p>\n";
  }
  std::vector<double> values;
  for (const Group& g : groups) {
    values.push_back(g.base);
    for (const MetricComparison* r : g.focal) {
      values.push_back(r->focal());
      values.push_back(r->base() + r->ci_low());
      values.push_back(r->base() + r->ci_high());
    }
  }
  svg::Frame f;
  svg::FitY(values, &f);
  const double bar = 22, gap = 28;
  const double group_w = bar * static_cast<double>(variants.size() + 1) + gap;
  f.width = std::max(400.0, group_w * static_cast<double>(groups.size()));
  const double legend_w = 220;
  const double w = f.left + f.width + 20 + legend_w, h = f.Bottom() + 130;
  const std::string title = "Per-task scores: base vs focal (whisker: paired CI of the difference)";
  std::string out = svg::Open(w, h, title);
  absl::StrAppend(&out, svg::Axes(f, "task / metric", "score", h - 12));
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    const double slot = f.width / static_cast<double>(groups.size());
    const double gx = f.left + slot * static_cast<double>(gi) + (slot - group_w + gap) / 2;
    absl::StrAppend(&out, svg::Bar(f, gx, bar - 2, g.base, Color(0),
                                   absl::StrCat(g.task, " ", g.metric, " ", BaseLabel(rep), ": ",
                                                Fmt(g.base))));
    for (const MetricComparison* r : g.focal) {
      const size_t vi =
          std::find(variants.begin(), variants.end(), r->focal_variant()) - variants.begin();
      const double x = gx + bar * static_cast<double>(vi + 1);
      const double lo = r->base() + r->ci_low(), hi = r->base() + r->ci_high();
      absl::StrAppend(
          &out, svg::Bar(f, x, bar - 2, r->focal(), Color(vi + 1),
                         absl::StrCat(r->task(), " ", r->metric(), " ", r->focal_variant(), ": ",
                                      Fmt(r->focal()), " [", Fmt(lo), ", ", Fmt(hi), "]")));
      const double cx = x + (bar - 2) / 2;
      if (std::isnan(lo) || std::isnan(hi) || std::isnan(r->focal())) continue;
      absl::StrAppend(&out, svg::Whisker(f, cx, lo, hi));
      if (r->significant()) {
        absl::StrAppend(&out, svg::SignificanceMark(cx, std::min(f.Y(hi), f.Y(r->focal())) - 4));
      }
    }
    const double lx = gx + bar * static_cast<double>(variants.size() + 1) / 2, ly = f.Bottom() + 14;
    absl::StrAppend(&out, svg::SlantedLabel(lx, ly, absl::StrCat(g.task, " / ", g.metric)));
  }
  std::vector<svg::LegendEntry> legend = {{BaseLabel(rep), Color(0), false, true}};
  for (size_t i = 0; i < variants.size(); ++i) {
    legend.push_back({variants[i], Color(i + 1), false, true});
  }
  legend.push_back({"whisker: focal CI (base + CI of diff)", "#333333", false, false});
  legend.push_back({"*: significant difference", "", false, false});
  absl::StrAppend(&out, svg::Legend(f.left + f.width + 20, f.top + 10, legend), svg::Close());
  return out;
}

struct Series {
  std::string label;
  std::string color;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y), sorted by x
};

// A line chart with a categorical x axis at `xpos` (labels `xlabels`).
std::string LineChart(const std::string& title, const std::string& xlabel,
                      const std::string& ylabel, const svg::Frame& f,
                      const std::map<double, double>& xpos,
                      const std::map<double, std::string>& xlabels,
                      const std::vector<Series>& series) {
  // Room for the longest legend label (~7 px a character at 12 px).
  size_t longest = 0;
  for (const Series& s : series) longest = std::max(longest, s.label.size());
  const double legend_w = std::max(240.0, 40.0 + 7.0 * static_cast<double>(longest));
  const double w = f.left + f.width + 20 + legend_w;
  const double h =
      std::max(f.Bottom() + 60, f.top + 20 + 20.0 * static_cast<double>(series.size()));
  std::string out = svg::Open(w, h, title);
  absl::StrAppend(&out, svg::Axes(f, xlabel, ylabel, f.Bottom() + 42));
  for (const auto& [v, x] : xpos) absl::StrAppend(&out, svg::XTick(f, x, xlabels.at(v)));
  std::vector<svg::LegendEntry> legend;
  for (const Series& s : series) {
    std::vector<std::pair<double, double>> pixels;  // the points with a value
    for (const auto& [x, y] : s.points) {
      if (!std::isnan(y)) pixels.emplace_back(xpos.at(x), f.Y(y));
    }
    absl::StrAppend(&out, svg::Polyline(pixels, s.color, s.dashed));
    for (const auto& [x, y] : s.points) {
      if (std::isnan(y)) continue;
      absl::StrAppend(
          &out, svg::Marker(xpos.at(x), f.Y(y), s.color, absl::StrCat(s.label, ": ", Fmt(y))));
    }
    legend.push_back({s.label, s.color, s.dashed, false});
  }
  absl::StrAppend(&out, svg::Legend(f.left + f.width + 20, f.top + 10, legend), svg::Close());
  return out;
}

// Chart 2: a category's average per length (RULER, HELMET ICL, ...), one
// line per model.
std::string CategoryChart(const ComparisonReport& rep, const std::string& category) {
  const std::string title = LengthCategoryTitle(category);
  std::vector<std::string> variants;
  std::map<double, double> base;
  std::map<std::string, std::map<double, double>> focal;
  std::set<double> xs;
  for (const LengthComparison& l : rep.lengths()) {
    const double len = static_cast<double>(l.context_length());
    if (len <= 0 || LengthCategoryOf(l) != category) continue;
    xs.insert(len);
    base.emplace(len, l.base_average());  // the same for every focal variant
    if (focal.find(l.focal_variant()) == focal.end()) variants.push_back(l.focal_variant());
    focal[l.focal_variant()][len] = l.focal_average();
  }
  if (xs.empty()) return "";
  svg::Frame f;
  f.ymin = 0;
  f.ymax = 100;
  f.width = 560;
  const auto xpos = svg::XPositions(xs, f, /*log2=*/true, *xs.begin(), *xs.rbegin());
  std::map<double, std::string> xlabels;
  for (double v : xs) xlabels[v] = absl::StrFormat("%.0f", v);
  std::vector<Series> series;
  series.push_back({BaseLabel(rep), Color(0), true, {base.begin(), base.end()}});
  for (size_t i = 0; i < variants.size(); ++i) {
    const auto& m = focal[variants[i]];
    series.push_back({variants[i], Color(i + 1), false, {m.begin(), m.end()}});
  }
  return LineChart(absl::StrCat(title, " average score vs context length"),
                   "context length (tokens, log2 scale)", absl::StrCat(title, " average (0-100)"),
                   f, xpos, xlabels, series);
}

// One chart per long-context category, or a note when there is none.
std::string CategoryCharts(const ComparisonReport& rep) {
  std::string out;
  for (const std::string& cat : LengthCategories(rep)) {
    const std::string chart = CategoryChart(rep, cat);
    if (chart.empty()) continue;
    if (!out.empty()) absl::StrAppend(&out, "</div>\n<div class=\"chart\">\n");
    absl::StrAppend(&out, chart);
  }
  if (out.empty()) {
    return "<p class=\"note\">RULER score vs context length: no long-context tasks in this "
           "comparison.</p>\n";
  }
  return out;
}

// Chart 3: hotpotqa_long substring_match vs gold depth, per model and length.
std::string HotpotChart(const ComparisonReport& rep) {
  std::vector<std::string> variants;
  std::map<int64_t, std::map<double, double>> base;  // length -> depth -> score
  std::map<std::string, std::map<int64_t, std::map<double, double>>> focal;
  std::set<double> xs;
  std::vector<double> values;
  for (const MetricComparison& r : rep.rows()) {
    if (r.task() != "hotpotqa_long" || r.metric() != "substring_match" || !r.has_gold_depth()) {
      continue;
    }
    xs.insert(r.gold_depth());
    base[r.context_length()].emplace(r.gold_depth(), r.base());
    if (focal.find(r.focal_variant()) == focal.end()) variants.push_back(r.focal_variant());
    focal[r.focal_variant()][r.context_length()][r.gold_depth()] = r.focal();
    values.push_back(r.base());
    values.push_back(r.focal());
  }
  if (xs.empty()) {
    return "<p class=\"note\">HotpotQA accuracy vs gold depth: no hotpotqa_long substring_match "
           "rows with a gold depth in this comparison.</p>\n";
  }
  svg::Frame f;
  f.width = 560;
  svg::FitY(values, &f);
  const auto xpos = svg::XPositions(xs, f, /*log2=*/false, 0.0, 1.0);
  std::map<double, std::string> xlabels;
  for (double v : xs) xlabels[v] = absl::StrFormat("%.2f", v);
  std::vector<Series> series;
  size_t color = 0;
  for (const auto& [len, pts] : base) {
    series.push_back(
        {absl::StrCat(BaseLabel(rep), " @", len), Color(color++), true, {pts.begin(), pts.end()}});
    for (const std::string& v : variants) {
      auto lit = focal[v].find(len);
      if (lit == focal[v].end()) continue;
      series.push_back({absl::StrCat(v, " @", len),
                        Color(color++),
                        false,
                        {lit->second.begin(), lit->second.end()}});
    }
  }
  return LineChart("HotpotQA (long) substring match vs gold passage depth",
                   "relative depth of the gold passages (0: start, 1: end)", "substring match", f,
                   xpos, xlabels, series);
}

// Chart 4 (and 5): attention entropy (needle mass) per layer, one line per model.
std::string AttentionChart(const std::vector<LayerCurve>& curves, bool mass) {
  std::set<double> xs;
  std::vector<double> values;
  std::vector<Series> series;
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::vector<double>& ys = mass ? curves[i].needle_mass : curves[i].entropy;
    Series s{curves[i].label, Color(i), i == 0, {}};
    for (size_t l = 0; l < ys.size(); ++l) {
      xs.insert(static_cast<double>(l));
      values.push_back(ys[l]);
      s.points.emplace_back(static_cast<double>(l), ys[l]);
    }
    if (!s.points.empty()) series.push_back(std::move(s));
  }
  if (xs.empty()) {
    if (mass) return "";
    return "<p class=\"note\">Attention entropy per layer: not measured (run compare with "
           "--attention-stats N).</p>\n";
  }
  svg::Frame f;
  f.width = 560;
  svg::FitY(values, &f);
  if (mass) {
    // Needle mass is often a few percent: fit the axis to the data, not 0..1.
    double hi = 0;
    for (double v : values) hi = std::isnan(v) ? hi : std::max(hi, v);
    if (hi > 0) {
      const double step = svg::NiceStep(hi, 5);
      f.ymin = 0;
      f.ymax = std::ceil(hi / step - 1e-9) * step;
    }
  }
  const auto xpos = svg::XPositions(xs, f, /*log2=*/false, *xs.begin(), *xs.rbegin());
  std::map<double, std::string> xlabels;
  for (double v : xs) xlabels[v] = absl::StrFormat("%.0f", v);
  return LineChart(mass ? "Attention mass on the queried needles per layer (RULER NIAH)"
                        : "Attention entropy per layer at the final query position",
                   "layer", mass ? "needle attention mass" : "entropy (nats, mean over heads)", f,
                   xpos, xlabels, series);
}

std::string AgreementTable(const ComparisonReport& rep) {
  if (rep.agreement().empty()) return "";
  std::string out =
      "<h2>Logit agreement with the base</h2>\n<p>KL(base || focal) of the full next-token "
      "distributions at the scored continuation tokens (nats per token), and the share of tokens "
      "whose top-1 token agrees.</p>\n<table>\n<thead><tr><th>Task</th><th>Variant</th>"
      "<th>Tokens</th><th>Mean KL</th><th>Median KL</th><th>KL 99%</th><th>Max KL</th>"
      "<th>Same top-1</th></tr></thead>\n<tbody>\n";
  for (const LogitAgreement& a : rep.agreement()) {
    absl::StrAppend(
        &out, "<tr><td>", HtmlEscape(a.task()), "</td><td>", HtmlEscape(a.focal_variant()),
        "</td><td class=\"num\">", a.tokens(), "</td><td class=\"num\">",
        absl::StrFormat("%.6f &plusmn; %.6f", a.mean_kl(), a.kl_stderr()),
        "</td><td class=\"num\">", absl::StrFormat("%.6f", a.median_kl()),
        "</td><td class=\"num\">", absl::StrFormat("%.6f", a.p99_kl()), "</td><td class=\"num\">",
        absl::StrFormat("%.6f", a.max_kl()), "</td><td class=\"num\">",
        absl::StrFormat("%.2f &plusmn; %.2f%%", 100 * a.same_argmax(),
                        100 * a.same_argmax_stderr()),
        "</td></tr>\n");
  }
  absl::StrAppend(&out, "</tbody>\n</table>\n");
  return out;
}

constexpr char kStyle[] = R"(<style>
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1400px; }
table { border-collapse: collapse; font-size: 13px; margin: 12px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { background: #f4f4f4; padding: 0 3px; }
.chart { margin: 16px 0; overflow-x: auto; }
svg { font-family: sans-serif; font-size: 12px; background: #fff; }
svg .title { font-size: 15px; font-weight: bold; }
svg .label { font-size: 13px; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; }
svg .axis { stroke: #333; stroke-width: 1; }
svg .whisker line { stroke: #333; stroke-width: 1.5; }
svg .sig { font-size: 16px; font-weight: bold; }
p.note { color: #555; font-style: italic; }
</style>
)";

}  // namespace

std::string HtmlEscape(const std::string& s) { return svg::Escape(s); }

std::string ComparisonHtml(const ComparisonReport& rep) {
  const ModelRun& b =
      rep.runs().models_size() > 0 ? rep.runs().models(0) : ModelRun::default_instance();
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>focal-eval comparison</title>\n",
      kStyle, "</head>\n<body>\n<h1>focal-eval comparison</h1>\n",
      rep.runs().config().data_warning().empty()
          ? ""
          : absl::StrCat("<p class=\"warning\"><strong>Warning:</strong> ",
                         HtmlEscape(rep.runs().config().data_warning()), "</p>\n"),
      "<p>Base: <code>", HtmlEscape(b.model_path()), "</code> (", HtmlEscape(b.variant()),
      ", weights ", HtmlEscape(b.weights_sha256().substr(0, 12)), ")");
  for (int i = 1; i < rep.runs().models_size(); ++i) {
    const ModelRun& m = rep.runs().models(i);
    absl::StrAppend(&out, "<br>\nFocal: <code>", HtmlEscape(m.model_path()), "</code> (",
                    HtmlEscape(VariantLabel(m, b)), ", weights ",
                    HtmlEscape(m.weights_sha256().substr(0, 12)), ")");
  }
  absl::StrAppend(&out, "</p>\n<p>Paired per document on identical requests; ",
                  absl::StrFormat("%.0f%%", 100 * rep.confidence()),
                  " intervals by paired bootstrap (", rep.bootstrap_iters(), " resamples, seed ",
                  rep.bootstrap_seed(),
                  "); McNemar's exact test for 0/1 metrics. <strong>Bold</strong>: the interval "
                  "excludes no change. Perplexity rows show focal/base ratios.</p>\n");

  const std::vector<LayerCurve> curves = AttentionCurves(rep);
  absl::StrAppend(&out, "<h2>Charts</h2>\n<div class=\"chart\">\n", TaskBarsChart(rep),
                  "</div>\n<div class=\"chart\">\n", CategoryCharts(rep),
                  "</div>\n<div class=\"chart\">\n", HotpotChart(rep), "</div>\n",
                  "<div class=\"chart\">\n", AttentionChart(curves, /*mass=*/false), "</div>\n");
  if (const std::string m = AttentionChart(curves, /*mass=*/true); !m.empty()) {
    absl::StrAppend(&out, "<div class=\"chart\">\n", m, "</div>\n");
  }

  absl::StrAppend(&out,
                  "<h2>Comparison</h2>\n<table>\n<thead><tr><th>Task</th><th>Metric</th><th>n</th>"
                  "<th>Base</th><th>Focal</th><th>Variant</th><th>&Delta;</th><th>rel. &Delta;"
                  "</th><th>CI</th><th>McNemar p</th><th>W/T/L</th></tr></thead>\n<tbody>\n");
  for (const MetricComparison& r : rep.rows()) {
    std::string d = Fmt(r.diff());
    if (r.significant()) d = absl::StrCat("<strong>", d, "</strong>");
    absl::StrAppend(
        &out, "<tr><td>", HtmlEscape(r.task()), "</td><td>", HtmlEscape(MetricLabel(r)),
        "</td><td class=\"num\">", r.n(), "</td><td class=\"num\">", Fmt(r.base()),
        "</td><td class=\"num\">", Fmt(r.focal()), "</td><td>", HtmlEscape(r.focal_variant()),
        "</td><td class=\"num\">", d, "</td><td class=\"num\">",
        std::isnan(r.rel_diff()) ? "N/A" : absl::StrFormat("%+.1f%%", 100 * r.rel_diff()),
        "</td><td>[", Fmt(r.ci_low()), ", ", Fmt(r.ci_high()), "]</td><td class=\"num\">",
        r.has_mcnemar_p() ? Fmt(r.mcnemar_p()) : "-", "</td><td>", r.wins(), "/", r.ties(), "/",
        r.losses(), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</tbody>\n</table>\n");

  for (const std::string& cat : LengthCategories(rep)) {
    absl::StrAppend(&out, "<h2>", LengthCategoryTitle(cat),
                    " average per length</h2>\n<table>\n<thead><tr><th>Variant</th>"
                    "<th>Length</th><th>Base</th><th>Focal</th><th>&Delta;</th><th>CI</th>"
                    "<th>Pairs</th><th>Relative improvement</th></tr></thead>\n<tbody>\n");
    for (const LengthComparison& l : rep.lengths()) {
      if (LengthCategoryOf(l) != cat) continue;
      const AverageCells c = FormatAverage(l);
      absl::StrAppend(&out, "<tr><td>", HtmlEscape(l.focal_variant()), "</td><td class=\"num\">",
                      l.context_length(), "</td><td class=\"num\">", c.base,
                      "</td><td class=\"num\">", c.focal, "</td><td class=\"num\">",
                      c.significant ? absl::StrCat("<strong>", c.diff, "</strong>") : c.diff,
                      "</td><td>", c.ci, "</td><td class=\"num\">", c.pairs,
                      "</td><td class=\"num\">", c.relative, "</td></tr>\n");
    }
    absl::StrAppend(&out, "</tbody>\n</table>\n");
    if (cat != "ruler") continue;
    absl::StrAppend(&out, "<p>Effective length: base ", b.effective_length());
    for (int i = 1; i < rep.runs().models_size(); ++i) {
      absl::StrAppend(&out, ", ", HtmlEscape(rep.runs().models(i).variant()), " ",
                      rep.runs().models(i).effective_length());
    }
    absl::StrAppend(&out, HtmlEscape(PartialRulerLabel(cat, FewestTasks(rep, cat))), "</p>\n");
  }
  absl::StrAppend(&out, AgreementTable(rep), "</body>\n</html>\n");
  return out;
}

}  // namespace focal::reports
