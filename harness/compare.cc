// SPDX-License-Identifier: Apache-2.0
#include "harness/compare.h"

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "harness/base/file_util.h"
#include "harness/base/status_macros.h"
#include "harness/commands.h"
#include "reports/comparison.h"
#include "reports/html_report.h"

namespace focal::harness {

absl::Status RunCompare(RunOptions o, const std::string& base_spec,
                        const std::vector<std::string>& focal_specs,
                        const std::string& report_dir, const CompareSettings& settings,
                        std::ostream& out) {
  if (o.focal_temperature.has_value()) {
    return absl::InvalidArgumentError(
        "compare: give temperatures per model (--focal DIR@t=T), not --focal-temperature");
  }
  std::vector<std::string> specs = {base_spec.empty() ? DefaultModelDir() : base_spec};
  if (focal_specs.empty()) {
    specs.push_back(absl::StrCat(DefaultModelDir(), "@t=0.4"));
  } else {
    specs.insert(specs.end(), focal_specs.begin(), focal_specs.end());
  }
  o.models.clear();
  o.model_temperatures.clear();
  for (const std::string& s : specs) {
    std::string dir;
    std::optional<double> t;
    FOCAL_RETURN_IF_ERROR(ParseModelSpec(s, &dir, &t));
    o.models.push_back(dir);
    o.model_temperatures.push_back(t);
  }
  std::error_code ec;
  std::filesystem::create_directories(report_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create report directory '", report_dir, "': ", ec.message()));
  }
  o.out = report_dir + "/results.json";
  o.samples = report_dir + "/samples.jsonl";
  if (o.cache_dir.empty()) o.cache_dir = report_dir + "/cache";
  std::vector<ModelDetails> details;
  std::ostringstream table;
  FOCAL_ASSIGN_OR_RETURN(reports::RunResults runs, RunEvaluation(o, table, &details));
  std::vector<reports::PerDocScores> scores;
  for (const ModelDetails& md : details) {
    reports::PerDocScores p;
    for (const auto& [task, d] : md) {
      p.values[task] = d.per_doc;
      p.requests_sha256[task] = d.requests_sha256;
    }
    scores.push_back(std::move(p));
  }
  reports::CompareOptions co;
  co.bootstrap_iters = settings.bootstrap_iters;
  co.seed = settings.bootstrap_seed;
  FOCAL_ASSIGN_OR_RETURN(reports::ComparisonReport rep, reports::BuildComparison(runs, scores, co));
  const std::string md = reports::ComparisonMarkdown(rep);
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.md", md));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.html", reports::ComparisonHtml(rep)));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.csv", reports::ComparisonCsv(rep)));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/table.tex", reports::ComparisonLatex(rep)));
  FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ComparisonJson(rep));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.json", json));
  out << md;
  return absl::OkStatus();
}

}  // namespace focal::harness
