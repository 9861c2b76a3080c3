// SPDX-License-Identifier: Apache-2.0
// The per-length headline numbers of one model, derived from its task
// results: RULER's mean over the ruler_* task scores per context length and
// its effective length, and HELMET's category averages per length (the mean
// over the category's task scores, as HELMET reports them). One definition
// for the run, `merge` and `compare`.
#ifndef FOCAL_REPORTS_LENGTH_SUMMARY_H_
#define FOCAL_REPORTS_LENGTH_SUMMARY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "reports/results.pb.h"

namespace focal::reports {

// The category of a long-context task, by name: "ruler" (ruler_*),
// "helmet_icl" (helmet_icl_*), "helmet_recall" (helmet_json_kv), "helmet_rag"
// (helmet_rag_*); "" for any other task.
std::string LengthCategoryOf(absl::string_view task);
// "RULER", "HELMET ICL", "HELMET recall", "HELMET RAG" (the id otherwise).
std::string LengthCategoryTitle(absl::string_view category);

// RULER has 13 tasks; averages over fewer are labelled partial.
inline constexpr int64_t kRulerTaskCount = 13;
// "" for a complete RULER (or another category), else " (partial: N of
// RULER's 13 tasks; not RULER's average or effective length)".
std::string PartialRulerLabel(absl::string_view category, int64_t num_tasks);

// Replaces run.ruler_by_length (and sets effective_length when any RULER
// task was run) and run.category_by_length (the HELMET categories) from the
// length-bucketed metrics of the tasks.
absl::Status SetLengthSummaries(ModelRun& run);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_LENGTH_SUMMARY_H_
