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
#include "datasets/reader.h"
#include "engine/long_context_runner.h"
#include "harness/runner.h"
#include "tasks/task.h"
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

// A loglikelihood task's documents (after --limit and --shard) and requests,
// with where its data came from.
struct TaskData {
  const tasks::Task* task;
  std::string path;
  std::string reader;
  datasets::DataOrigin origin = datasets::DataOrigin::kSample;
  std::string note;  // the resolution's (sample, user file not the reference's)
  std::string sha256;
  std::string fewshot_path;
  int64_t total_docs = 0;
  std::vector<datasets::Doc> docs;                                 // after --limit and --shard
  std::vector<std::vector<tasks::LoglikelihoodRequest>> requests;  // per doc
};

// Reads the task's data (and few-shot file) and builds its requests.
absl::StatusOr<TaskData> LoadTask(const RunOptions& o, const tasks::Task& task,
                                  const datasets::DataCatalog& catalog);

// --tasks split by kind; --data and --fewshot-data checked against the registry.
struct TaskSelection {
  std::vector<const tasks::Task*> loglikelihood;
  std::vector<const tasks::Task*> generation;
};
absl::StatusOr<TaskSelection> SelectTasks(const RunOptions& o, const tasks::TaskRegistry& registry);

// The long-context runner's options for the selected generation tasks
// (lengths, seeds, each task's files, whether the fetched RULER set is in use).
absl::StatusOr<engine::LongContextOptions> MakeLongContextOptions(
    const RunOptions& o, const std::vector<const tasks::Task*>& generation,
    const datasets::DataCatalog& catalog);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_TASK_DATA_H_
