// SPDX-License-Identifier: Apache-2.0
// What an evaluation keeps per task beside its aggregate metrics, for paired
// comparisons and diagnostics (`compare`).
#ifndef FOCAL_ENGINE_TASK_DETAILS_H_
#define FOCAL_ENGINE_TASK_DETAILS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/diagnostics.h"
#include "engine/scorer.h"

namespace focal::engine {

// Per-document scores of one model. Keys are task names, or "task@length" /
// "task@length@depth" for long-context tasks.
struct TaskDetails {
  std::map<std::string, std::vector<double>> per_doc;  // metric -> value per document
  std::string requests_sha256;                         // the exact token sequences scored, in order
  std::vector<TokenizedRequest> requests;              // loglikelihood tasks, with keep_requests
  std::optional<AttentionSummary> attention;           // with attention_samples > 0
};
using ModelDetails = std::map<std::string, TaskDetails>;

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_TASK_DETAILS_H_
