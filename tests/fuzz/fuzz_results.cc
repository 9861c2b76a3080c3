// SPDX-License-Identifier: Apache-2.0
// Results files as `focal-eval merge` and `focal-eval report` read them
// (harness/commands.cc RunMerge, RunReport): each parsed by ResultsFromJson,
// then merged (MergeShards, the merged file and its summary table) and
// tabulated in every report format (BenchmarkTable). Input: up to four
// results files separated by kFileSeparator.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reports/benchmark_table.h"
#include "reports/merge.h"
#include "reports/results_writer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace focal;
  std::vector<reports::RunResults> runs;
  for (absl::string_view file : fuzz::SplitFiles(fuzz::AsText(data, size), 4)) {
    auto r = reports::ResultsFromJson(std::string(file), "results.json");
    if (!r.ok()) return 0;
    runs.push_back(std::move(*r));
  }
  volatile size_t sink = 0;
  auto merged = reports::MergeShards(runs);
  if (merged.ok()) {
    auto json = reports::ResultsToJson(*merged);
    if (json.ok()) sink = sink + json->size();
    sink = sink + reports::SummaryTable(*merged).size();
  }
  std::string baseline;
  if (!runs[0].models().empty()) baseline = reports::ModelLabel(runs[0].models(0));
  for (const char* format : {"md", "csv", "latex", "html", "json"}) {
    for (const std::string& b : {std::string(), baseline}) {
      auto table = reports::BenchmarkTable(runs, format, b);
      if (table.ok()) sink = sink + table->size();
    }
  }
  (void)sink;
  return 0;
}
