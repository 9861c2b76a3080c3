// SPDX-License-Identifier: Apache-2.0
#include "reports/ruler_summary.h"

#include <map>
#include <vector>

#include "tasks/metrics.h"
#include "tasks/ruler_metrics.h"

namespace focal::reports {

absl::Status SetRulerSummary(ModelRun& run) {
  std::map<int64_t, std::vector<double>> by_len;
  for (const TaskResult& t : run.tasks()) {
    if (t.task().rfind("ruler_", 0) != 0) continue;
    for (const MetricValue& mv : t.metrics()) {
      if (mv.context_length() > 0) by_len[mv.context_length()].push_back(mv.value());
    }
  }
  run.clear_ruler_by_length();
  std::vector<int64_t> lens;
  std::vector<double> avgs;
  for (const auto& [len, xs] : by_len) {
    LengthSummary* ls = run.add_ruler_by_length();
    ls->set_context_length(len);
    ls->set_average(tasks::Mean(xs));
    ls->set_num_tasks(static_cast<int64_t>(xs.size()));
    lens.push_back(len);
    avgs.push_back(ls->average());
  }
  if (lens.empty()) return absl::OkStatus();
  absl::StatusOr<int64_t> eff = tasks::EffectiveLength(lens, avgs);
  if (!eff.ok()) return eff.status();
  run.set_effective_length(*eff);
  return absl::OkStatus();
}

}  // namespace focal::reports
