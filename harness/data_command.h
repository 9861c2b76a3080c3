// SPDX-License-Identifier: Apache-2.0
// `focal-eval data list|verify`: per task, where its data comes from, whether
// it is there, how many documents it holds and whether its hash checks.
#ifndef FOCAL_HARNESS_DATA_COMMAND_H_
#define FOCAL_HARNESS_DATA_COMMAND_H_

#include <ostream>

#include "absl/status/status.h"
#include "harness/runner.h"

namespace focal::harness {

// One row per task with data (as `run` would resolve it with these flags),
// then every fetched file and its state. `verify` also fails (naming them)
// when a fetched file is missing or changed, or a task that has fetched data
// would not read it. Tasks no package carries (LAMBADA, HELMET's sets) only
// say which file to pass.
absl::Status RunDataList(const RunOptions& o, bool verify, std::ostream& out);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_DATA_COMMAND_H_
