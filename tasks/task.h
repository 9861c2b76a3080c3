// SPDX-License-Identifier: Apache-2.0
// A Task turns documents into loglikelihood requests and request results into
// per-document metrics, exactly as lm-evaluation-harness 0.4.x does. Pure: no
// model, no I/O. Tasks never see model internals: only strings and numbers.
#ifndef FOCAL_TASKS_TASK_H_
#define FOCAL_TASKS_TASK_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "datasets/doc.h"
#include "tasks/metrics.h"
#include "tasks/task_spec.pb.h"

namespace focal::tasks {

// log P(continuation | context), lm-eval's Instance for "loglikelihood".
struct LoglikelihoodRequest {
  std::string context;
  std::string continuation;
};

struct LoglikelihoodResult {
  double ll = 0;
  bool is_greedy = false;
};

// One document's outcome.
struct DocScore {
  std::map<std::string, double> metrics;  // "acc" -> 0/1, "perplexity" -> ll, ...
  int prediction = -1;                    // argmax choice (multiple choice)
};

class Task {
 public:
  // Validates the spec (known output type and metrics, templates present).
  static absl::StatusOr<Task> FromSpec(TaskSpec spec);

  const TaskSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name(); }

  // Requests for one document in a fixed order that Score relies on (one per
  // choice, or one). `fewshot_prefix` (from FewshotPrefix) goes before the
  // question. Errors name the task, document and missing field.
  absl::StatusOr<std::vector<LoglikelihoodRequest>> BuildRequests(
      const datasets::Doc& doc, absl::string_view fewshot_prefix = "") const;
  // lm-eval 0.4.x's few-shot examples for `doc`: `k` documents of `pool`
  // drawn with rnd.sample (CPython), each rendered doc_to_text + delimiter +
  // answer + "\n\n". With `exclude_doc` (the pool is the evaluated split) it
  // draws k + 1 and drops copies of `doc`, as lm-eval does. `rnd` is shared by
  // all documents of the task, in document order.
  absl::StatusOr<std::string> FewshotPrefix(const datasets::Doc& doc,
                                            absl::Span<const datasets::Doc> pool, int k,
                                            bool exclude_doc, PyRandom& rnd) const;
  // The choices a document is scored over (spec literals or the doc's own).
  const std::vector<std::string>& Choices(const datasets::Doc& doc) const;
  // MULTIPLE_INPUT: doc_to_text rendered once per choice, with {{choice}}.
  absl::StatusOr<std::vector<std::string>> ChoiceContexts(const datasets::Doc& doc) const;
  // Per-document metrics from the results of BuildRequests(doc), in order.
  absl::StatusOr<DocScore> Score(const datasets::Doc& doc,
                                 absl::Span<const LoglikelihoodResult> results) const;

 private:
  explicit Task(TaskSpec spec);
  TaskSpec spec_;
  std::vector<std::string> literal_choices_;
};

// Renders "{{field}}" placeholders from doc.fields; a missing field is an
// InvalidArgument naming it.
absl::StatusOr<std::string> RenderTemplate(absl::string_view tmpl, const datasets::Doc& doc);

// lm-eval compares documents as whole dicts: equal fields, choices and gold.
bool SameDoc(const datasets::Doc& a, const datasets::Doc& b);

// Python's len() of a UTF-8 string: the number of code points (lm-eval's
// acc_norm divides by this).
int64_t Utf8Length(absl::string_view s);

}  // namespace focal::tasks

#endif  // FOCAL_TASKS_TASK_H_
