// SPDX-License-Identifier: Apache-2.0
// `focal-eval compare`: a base model and one or more focal models (or
// retrofits, DIR@t=T) on the identical request list, in one process, then the
// paired comparison written as report.md, report.csv, report.json and
// table.tex (plus results.json and samples.jsonl) into a report directory.
#ifndef FOCAL_HARNESS_COMPARE_H_
#define FOCAL_HARNESS_COMPARE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "harness/runner.h"

namespace focal::harness {

struct CompareSettings {
  int64_t bootstrap_iters = 10000;
  uint64_t bootstrap_seed = 1234;
  // --from-shards: bootstrap_iters 0 and this take the shards' settings.
  bool bootstrap_seed_from_shards = false;
  bool logit_agreement = true;    // KL / same top-1 on the scored continuations
  int64_t attention_samples = 0;  // attention diagnostics on N prompts per task; 0: off
};

// Empty base_spec: the bundled model; no focal specs: the bundled model
// retrofitted at t = 0.4. `options` carries the shared run flags (tasks,
// data, limit, lengths, ...); its out/samples/cache paths are set here.
absl::Status RunCompare(RunOptions options, const std::string& base_spec,
                        const std::vector<std::string>& focal_specs, const std::string& report_dir,
                        const CompareSettings& settings, std::ostream& out);

// The comparison of a sharded compare (`compare --shard I/N` into one report
// directory per shard, e.g. Slurm array tasks): merges the shards' results
// and pairs their per-document values as one process would. Each shard's
// report.json must exist (its own compare checked the requests were
// identical); agreement and attention sections are not rebuilt.
absl::Status RunCompareFromShards(const std::vector<std::string>& shard_dirs,
                                  const std::string& report_dir, const CompareSettings& settings,
                                  std::ostream& out);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_COMPARE_H_
