// SPDX-License-Identifier: Apache-2.0
// Joins the --shard I/N results of one run into the result of the unsharded
// run, recomputing every metric from the per-document values.
#ifndef FOCAL_REPORTS_MERGE_H_
#define FOCAL_REPORTS_MERGE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "reports/results.pb.h"

namespace focal::reports {

// Refuses (InvalidArgument / FailedPrecondition, naming the shard) missing,
// duplicate or mismatched shards (other tasks, limit, seed, model weights or
// variant) and results without per-document values.
absl::StatusOr<RunResults> MergeShards(const std::vector<RunResults>& shards);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_MERGE_H_
