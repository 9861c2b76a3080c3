// SPDX-License-Identifier: Apache-2.0
// RULER's headline numbers of one model, derived from its task results: the
// mean over the ruler_* task scores per context length, and the effective
// length. One definition for the run and for `merge`.
#ifndef FOCAL_REPORTS_RULER_SUMMARY_H_
#define FOCAL_REPORTS_RULER_SUMMARY_H_

#include "absl/status/status.h"
#include "reports/results.pb.h"

namespace focal::reports {

// Replaces run.ruler_by_length (and sets effective_length when any RULER
// task was run) from the length-bucketed metrics of tasks named ruler_*.
absl::Status SetRulerSummary(ModelRun& run);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_RULER_SUMMARY_H_
