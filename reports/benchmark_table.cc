// SPDX-License-Identifier: Apache-2.0
#include "reports/benchmark_table.h"

#include <cmath>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "reports/html_report.h"
#include "reports/length_summary.h"
#include "reports/results_writer.h"

namespace focal::reports {
namespace {

struct Row {
  std::string task, metric;
  bool higher_is_better = true;
  std::map<int, double> values;  // column -> value
};

}  // namespace

absl::StatusOr<std::string> BenchmarkTable(const std::vector<RunResults>& runs,
                                           const std::string& format, const std::string& baseline) {
  if (runs.empty()) return absl::InvalidArgumentError("report: no results given");
  if (format == "json") {
    RunResults all = runs[0];
    for (size_t i = 1; i < runs.size(); ++i) {
      for (const ModelRun& m : runs[i].models()) *all.add_models() = m;
    }
    return ResultsToJson(all);
  }
  if (format != "md" && format != "csv" && format != "latex" && format != "html") {
    return absl::InvalidArgumentError(
        absl::StrCat("report: unknown --format '", format, "' (md, csv, html, latex or json)"));
  }
  std::vector<std::string> cols;
  std::vector<std::string> keys;  // row order: first appearance
  std::map<std::string, Row> rows;
  for (const RunResults& r : runs) {
    for (const ModelRun& m : r.models()) {
      const int col = static_cast<int>(cols.size());
      cols.push_back(ModelLabel(m));
      for (const TaskResult& t : m.tasks()) {
        for (const MetricValue& v : t.metrics()) {
          const double depth = v.gold_depth();
          const std::string metric =
              MetricLabel(v.name(), v.context_length(), v.has_gold_depth() ? &depth : nullptr);
          const std::string key = absl::StrCat(t.task(), "\t", metric);
          if (!rows.count(key)) keys.push_back(key);
          Row& row = rows[key];
          row.task = t.task();
          row.metric = metric;
          row.higher_is_better = v.higher_is_better();
          row.values[col] = v.value();
        }
      }
      // The per-length category averages (RULER, HELMET ICL / recall / RAG)
      // as rows of their own, after the tasks.
      std::vector<const LengthSummary*> summaries;
      for (const LengthSummary& l : m.ruler_by_length()) summaries.push_back(&l);
      for (const LengthSummary& l : m.category_by_length()) summaries.push_back(&l);
      for (const LengthSummary* l : summaries) {
        const std::string task = absl::StrCat(
            LengthCategoryTitle(l->category().empty() ? "ruler" : l->category()), " average");
        const std::string metric = MetricLabel("over_tasks", l->context_length(), nullptr);
        const std::string key = absl::StrCat(task, "\t", metric);
        if (!rows.count(key)) keys.push_back(key);
        Row& row = rows[key];
        row.task = task;
        row.metric = metric;
        row.higher_is_better = true;
        row.values[col] = l->average();
      }
    }
  }
  std::optional<int> base;
  if (!baseline.empty()) {
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c] == baseline) base = static_cast<int>(c);
    }
    if (!base) {
      return absl::InvalidArgumentError(
          absl::StrCat("report: --baseline '", baseline,
                       "' is not a column (columns: ", absl::StrJoin(cols, "; "), ")"));
    }
  }
  auto cell = [&](const Row& row, int c, bool bold_best, const std::string& b0,
                  const std::string& b1) -> std::string {
    auto it = row.values.find(c);
    if (it == row.values.end()) return "-";
    std::string s = absl::StrFormat("%.4f", it->second);
    if (base && c != *base && row.values.count(*base)) {
      absl::StrAppend(&s, absl::StrFormat(" (%+.4f)", it->second - row.values.at(*base)));
    }
    if (bold_best) {
      bool best = true;
      for (const auto& [oc, ov] : row.values) {
        if (row.higher_is_better ? ov > it->second : ov < it->second) best = false;
      }
      if (best && row.values.size() > 1) s = absl::StrCat(b0, s, b1);
    }
    return s;
  };
  // Any run on bundled samples: one line in every format but CSV (JSON keeps
  // each run's own config).
  std::string warning;
  for (const RunResults& r : runs) {
    if (!r.config().data_warning().empty() && warning.empty()) warning = r.config().data_warning();
  }
  std::string out;
  if (format == "csv") {
    out = "task,metric";
    for (const std::string& c : cols) absl::StrAppend(&out, ",\"", c, "\"");
    out += "\n";
    for (const std::string& k : keys) {
      const Row& row = rows[k];
      absl::StrAppend(&out, row.task, ",", row.metric);
      for (size_t c = 0; c < cols.size(); ++c) {
        auto it = row.values.find(static_cast<int>(c));
        absl::StrAppend(&out, ",",
                        it == row.values.end() ? "" : absl::StrFormat("%.10g", it->second));
      }
      out += "\n";
    }
    return out;
  }
  if (format == "latex") {
    out = absl::StrCat("% generated by focal-eval report\n",
                       warning.empty() ? "" : absl::StrCat("% Warning: ", warning, "\n"),
                       "\\begin{tabular}{ll", std::string(cols.size(), 'r'),
                       "}\n\\toprule\nTask & Metric");
    for (const std::string& c : cols) absl::StrAppend(&out, " & ", EscapeLatex(c));
    out += " \\\\\n\\midrule\n";
    for (const std::string& k : keys) {
      const Row& row = rows[k];
      absl::StrAppend(&out, EscapeLatex(row.task), " & ", EscapeLatex(row.metric));
      for (size_t c = 0; c < cols.size(); ++c) {
        absl::StrAppend(&out, " & ", cell(row, static_cast<int>(c), true, "\\textbf{", "}"));
      }
      out += " \\\\\n";
    }
    return out + "\\bottomrule\n\\end{tabular}\n";
  }
  if (format == "html") {
    out =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>focal-eval report</title>"
        "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style></head><body>\n";
    if (!warning.empty()) {
      absl::StrAppend(&out, "<p><strong>Warning:</strong> ", HtmlEscape(warning), "</p>\n");
    }
    out += "<table>\n<tr><th>Task</th><th>Metric</th>";
    for (const std::string& c : cols) absl::StrAppend(&out, "<th>", HtmlEscape(c), "</th>");
    out += "</tr>\n";
    for (const std::string& k : keys) {
      const Row& row = rows[k];
      absl::StrAppend(&out, "<tr><td>", HtmlEscape(row.task), "</td><td>", HtmlEscape(row.metric),
                      "</td>");
      for (size_t c = 0; c < cols.size(); ++c) {
        absl::StrAppend(&out, "<td>", cell(row, static_cast<int>(c), true, "<b>", "</b>"), "</td>");
      }
      out += "</tr>\n";
    }
    return out + "</table>\n</body></html>\n";
  }
  out = warning.empty() ? "" : absl::StrCat("**Warning:** ", warning, "\n\n");
  out += "| Task | Metric |";
  for (const std::string& c : cols) absl::StrAppend(&out, " ", c, " |");
  out += "\n|---|---|";
  for (size_t c = 0; c < cols.size(); ++c) out += "---:|";
  out += "\n";
  for (const std::string& k : keys) {
    const Row& row = rows[k];
    absl::StrAppend(&out, "| ", row.task, " | ", row.metric, " |");
    for (size_t c = 0; c < cols.size(); ++c) {
      absl::StrAppend(&out, " ", cell(row, static_cast<int>(c), true, "**", "**"), " |");
    }
    out += "\n";
  }
  return out;
}

}  // namespace focal::reports
