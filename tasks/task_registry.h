// SPDX-License-Identifier: Apache-2.0
// The task specs found under a directory (tasks/specs/*.textproto), looked up
// by name or group. Built once; immutable afterwards.
#ifndef FOCAL_TASKS_TASK_REGISTRY_H_
#define FOCAL_TASKS_TASK_REGISTRY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tasks/task.h"

namespace focal::tasks {

class TaskRegistry {
 public:
  // Parses every *.textproto in `spec_dir`; errors name the file and line.
  // Duplicate task names are an error.
  static absl::StatusOr<TaskRegistry> Load(absl::string_view spec_dir);
  // The same over several directories (built-in specs plus the user's).
  static absl::StatusOr<TaskRegistry> Load(const std::vector<std::string>& spec_dirs);

  // Resolves a comma-separated list of task and group names ("all" = every
  // task not marked exclude_from_all) into tasks, in the order given, without duplicates. An
  // unknown name is NotFound and suggests the nearest known one.
  absl::StatusOr<std::vector<const Task*>> Resolve(absl::string_view names) const;
  const Task* Find(absl::string_view name) const;
  std::vector<std::string> TaskNames() const;                      // sorted
  std::map<std::string, std::vector<std::string>> Groups() const;  // group -> tasks

 private:
  std::map<std::string, Task> tasks_;
};

// Parses one TaskSpec textproto (`source` names it in errors).
absl::StatusOr<TaskSpec> ParseTaskSpec(absl::string_view text, absl::string_view source);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_TASK_REGISTRY_H_
