// SPDX-License-Identifier: Apache-2.0
#include "reports/length_summary.h"

#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tasks/metrics.h"
#include "tasks/ruler_metrics.h"

namespace focal::reports {

std::string LengthCategoryOf(absl::string_view task) {
  if (absl::StartsWith(task, "ruler_")) return "ruler";
  if (absl::StartsWith(task, "helmet_icl_")) return "helmet_icl";
  if (task == "helmet_json_kv" || absl::StartsWith(task, "helmet_ruler_")) return "helmet_recall";
  if (absl::StartsWith(task, "helmet_rag_")) return "helmet_rag";
  return "";
}

std::string LengthCategoryTitle(absl::string_view category) {
  if (category == "ruler") return "RULER";
  if (category == "helmet_icl") return "HELMET ICL";
  if (category == "helmet_recall") return "HELMET recall";
  if (category == "helmet_rag") return "HELMET RAG";
  return std::string(category);
}

std::string PartialRulerLabel(absl::string_view category, int64_t num_tasks) {
  if (category != "ruler" || num_tasks >= kRulerTaskCount) return "";
  return absl::StrCat(" (partial: ", num_tasks, " of RULER's ", kRulerTaskCount,
                      " tasks; not RULER's average or effective length)");
}

absl::Status SetLengthSummaries(ModelRun& run) {
  // category -> length -> task scores
  std::map<std::string, std::map<int64_t, std::vector<double>>> by_cat;
  for (const TaskResult& t : run.tasks()) {
    const std::string cat = LengthCategoryOf(t.task());
    if (cat.empty()) continue;
    for (const MetricValue& mv : t.metrics()) {
      if (mv.context_length() > 0) by_cat[cat][mv.context_length()].push_back(mv.value());
    }
  }
  run.clear_ruler_by_length();
  run.clear_category_by_length();
  for (const auto& [cat, by_len] : by_cat) {
    for (const auto& [len, xs] : by_len) {
      LengthSummary* ls = cat == "ruler" ? run.add_ruler_by_length() : run.add_category_by_length();
      ls->set_category(cat);
      ls->set_context_length(len);
      ls->set_average(tasks::Mean(xs));
      ls->set_num_tasks(static_cast<int64_t>(xs.size()));
    }
  }
  std::vector<int64_t> lens;
  std::vector<double> avgs;
  for (const LengthSummary& ls : run.ruler_by_length()) {
    lens.push_back(ls.context_length());
    avgs.push_back(ls.average());
  }
  if (lens.empty()) return absl::OkStatus();
  absl::StatusOr<int64_t> eff = tasks::EffectiveLength(lens, avgs);
  if (!eff.ok()) return eff.status();
  run.set_effective_length(*eff);
  return absl::OkStatus();
}

}  // namespace focal::reports
