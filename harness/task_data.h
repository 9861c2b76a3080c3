// SPDX-License-Identifier: Apache-2.0
// The run's tasks and where their data comes from: the registry of task
// specs, and each spec's data resolved by datasets/catalog.h from the user's
// flags (shared by `run`, `compare` and `data`).
#ifndef FOCAL_HARNESS_TASK_DATA_H_
#define FOCAL_HARNESS_TASK_DATA_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "datasets/catalog.h"
#include "engine/long_context_runner.h"
#include "harness/runner.h"
#include "tasks/task_registry.h"

namespace focal::harness {

// <asset root>/tasks/specs (or --spec-dir) and every --task-specs folder.
absl::StatusOr<tasks::TaskRegistry> LoadRegistry(const RunOptions& o);

// --data TASK=FILE, --data-dir, the data cache and the asset root, for `task`.
datasets::DataLocations Locations(const RunOptions& o, const std::string& task);

// A loglikelihood task's file.
absl::StatusOr<datasets::ResolvedData> ResolveData(const RunOptions& o, const tasks::TaskSpec& s,
                                                   const datasets::DataCatalog& catalog);

// A generation task's files by role.
absl::StatusOr<datasets::ResolvedFiles> ResolveGeneratorFiles(const RunOptions& o,
                                                              const tasks::TaskSpec& s,
                                                              const datasets::DataCatalog& catalog);

// The long-context runner's options for the selected generation tasks
// (lengths, seeds, each task's files, whether the fetched RULER set is in use).
absl::StatusOr<engine::LongContextOptions> MakeLongContextOptions(
    const RunOptions& o, const std::vector<const tasks::Task*>& generation,
    const datasets::DataCatalog& catalog);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_TASK_DATA_H_
