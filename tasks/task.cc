// SPDX-License-Identifier: Apache-2.0
#include "tasks/task.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tasks/metric_registry.h"

namespace focal::tasks {

int64_t Utf8Length(absl::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count non-continuation bytes
  return n;
}

absl::StatusOr<std::string> RenderTemplate(absl::string_view tmpl, const datasets::Doc& doc) {
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    if (open == absl::string_view::npos) {
      absl::StrAppend(&out, tmpl.substr(pos));
      break;
    }
    absl::StrAppend(&out, tmpl.substr(pos, open - pos));
    size_t close = tmpl.find("}}", open + 2);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("template '", tmpl, "' has an unclosed {{"));
    }
    absl::string_view field = tmpl.substr(open + 2, close - open - 2);
    while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
    while (!field.empty() && field.back() == ' ') field.remove_suffix(1);
    auto it = doc.fields.find(std::string(field));
    if (it == doc.fields.end()) {
      return absl::InvalidArgumentError(absl::StrCat("document ", doc.id, " has no field '", field,
                                                     "' (used by template '", tmpl, "')"));
    }
    out.append(it->second);
    pos = close + 2;
  }
  return out;
}

Task::Task(TaskSpec spec) : spec_(std::move(spec)) {
  literal_choices_.assign(spec_.choices().begin(), spec_.choices().end());
}

absl::StatusOr<Task> Task::FromSpec(TaskSpec spec) {
  const std::string where = absl::StrCat("task '", spec.name(), "'");
  if (spec.name().empty()) return absl::InvalidArgumentError("task spec has no name");
  if (spec.output_type() == OUTPUT_TYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": output_type is not set"));
  }
  if (spec.output_type() == GENERATE_UNTIL) {
    if (spec.generator().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": generator is empty"));
    }
  } else if (spec.doc_to_text().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": doc_to_text is empty"));
  }
  if ((spec.output_type() == LOGLIKELIHOOD || spec.output_type() == MULTIPLE_INPUT) &&
      spec.doc_to_target().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": doc_to_target is empty"));
  }
  for (const std::string& m : spec.metrics()) {
    const MetricDef* def = FindMetric(m);
    if (def == nullptr || std::find(def->output_types.begin(), def->output_types.end(),
                                    spec.output_type()) == def->output_types.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": metric '", m, "' is not defined for ",
                       OutputType_Name(spec.output_type()), " tasks"));
    }
  }
  if (spec.metrics().empty())
    return absl::InvalidArgumentError(absl::StrCat(where, ": no metrics"));
  return Task(std::move(spec));
}

const std::vector<std::string>& Task::Choices(const datasets::Doc& doc) const {
  return literal_choices_.empty() ? doc.choices : literal_choices_;
}

absl::StatusOr<std::vector<std::string>> Task::ChoiceContexts(const datasets::Doc& doc) const {
  datasets::Doc with_choice = doc;
  std::vector<std::string> out;
  for (const std::string& c : Choices(doc)) {
    with_choice.fields["choice"] = c;
    FOCAL_ASSIGN_OR_RETURN(std::string text, RenderTemplate(spec_.doc_to_text(), with_choice));
    out.push_back(std::move(text));
  }
  return out;
}

bool SameDoc(const datasets::Doc& a, const datasets::Doc& b) {
  return a.fields == b.fields && a.choices == b.choices && a.gold == b.gold;
}

absl::StatusOr<std::string> Task::FewshotPrefix(const datasets::Doc& doc,
                                                absl::Span<const datasets::Doc> pool, int k,
                                                bool exclude_doc, PyRandom& rnd) const {
  if (k <= 0) return std::string();
  const int64_t n = static_cast<int64_t>(pool.size());
  const int64_t draw = exclude_doc ? k + 1 : k;
  if (draw > n) {
    return absl::InvalidArgumentError(absl::StrCat("task ", name(), ": ", k,
                                                   "-shot needs at least ", draw,
                                                   " few-shot documents, the pool has ", n));
  }
  std::vector<const datasets::Doc*> chosen;
  for (int64_t i : rnd.Sample(n, draw)) {
    if (!exclude_doc || !SameDoc(pool[i], doc)) chosen.push_back(&pool[i]);
  }
  if (static_cast<int64_t>(chosen.size()) > k) chosen.resize(k);
  if (static_cast<int64_t>(chosen.size()) < k) {
    // Copies of `doc` took more than one slot: lm-eval draws k again from the
    // pool without them.
    std::vector<const datasets::Doc*> rest;
    for (const datasets::Doc& d : pool) {
      if (!SameDoc(d, doc)) rest.push_back(&d);
    }
    if (static_cast<int64_t>(rest.size()) < k) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", name(), ": not enough distinct few-shot documents"));
    }
    chosen.clear();
    for (int64_t i : rnd.Sample(static_cast<int64_t>(rest.size()), k)) chosen.push_back(rest[i]);
  }
  const std::string delim = spec_.has_target_delimiter() ? spec_.target_delimiter() : " ";
  std::string out;
  for (const datasets::Doc* ex : chosen) {
    std::string text, answer;
    if (spec_.output_type() == MULTIPLE_INPUT) {
      // lm-eval: the gold choice's context, then the shared continuation.
      FOCAL_ASSIGN_OR_RETURN(std::vector<std::string> contexts, ChoiceContexts(*ex));
      if (ex->gold < 0 || ex->gold >= static_cast<int>(contexts.size())) {
        return absl::InvalidArgumentError(absl::StrCat("task ", name(), ", few-shot document ",
                                                       ex->id, ": gold index out of range"));
      }
      FOCAL_ASSIGN_OR_RETURN(answer, RenderTemplate(spec_.doc_to_target(), *ex));
      absl::StrAppend(&out, contexts[ex->gold], delim, answer, "\n\n");
      continue;
    }
    FOCAL_ASSIGN_OR_RETURN(text, RenderTemplate(spec_.doc_to_text(), *ex));
    if (spec_.output_type() == LOGLIKELIHOOD) {
      FOCAL_ASSIGN_OR_RETURN(answer, RenderTemplate(spec_.doc_to_target(), *ex));
    } else {
      const auto& choices = Choices(*ex);
      if (ex->gold < 0 || ex->gold >= static_cast<int>(choices.size())) {
        return absl::InvalidArgumentError(absl::StrCat("task ", name(), ", few-shot document ",
                                                       ex->id, ": gold index out of range"));
      }
      answer = choices[ex->gold];
    }
    absl::StrAppend(&out, text, delim, answer, "\n\n");
  }
  return out;
}

absl::StatusOr<std::vector<LoglikelihoodRequest>> Task::BuildRequests(
    const datasets::Doc& doc, absl::string_view fewshot_prefix) const {
  const std::string delim = spec_.has_target_delimiter() ? spec_.target_delimiter() : " ";
  std::vector<LoglikelihoodRequest> out;
  if (spec_.output_type() == MULTIPLE_INPUT) {
    FOCAL_ASSIGN_OR_RETURN(std::vector<std::string> contexts, ChoiceContexts(doc));
    FOCAL_ASSIGN_OR_RETURN(std::string target, RenderTemplate(spec_.doc_to_target(), doc));
    if (contexts.size() < 2 || doc.gold < 0 || doc.gold >= static_cast<int>(contexts.size())) {
      return absl::InvalidArgumentError(absl::StrCat("task ", name(), ", document ", doc.id,
                                                     ": needs at least 2 choices and a gold "
                                                     "index among them"));
    }
    if (delim.empty() && target.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", name(), ", document ", doc.id, ": empty continuation"));
    }
    for (std::string& c : contexts)
      out.push_back({absl::StrCat(fewshot_prefix, c), delim + target});
    return out;
  }
  FOCAL_ASSIGN_OR_RETURN(std::string question, RenderTemplate(spec_.doc_to_text(), doc));
  std::string context = absl::StrCat(fewshot_prefix, question);
  if (spec_.output_type() == LOGLIKELIHOOD) {
    FOCAL_ASSIGN_OR_RETURN(std::string target, RenderTemplate(spec_.doc_to_target(), doc));
    if (target.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", name(), ", document ", doc.id, ": empty continuation"));
    }
    out.push_back({std::move(context), std::move(target)});
    return out;
  }
  const auto& choices = Choices(doc);
  if (choices.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("task ", name(), ", document ", doc.id, ": ",
                                                   choices.size(), " choices (need at least 2)"));
  }
  if (doc.gold < 0 || doc.gold >= static_cast<int>(choices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("task ", name(), ", document ", doc.id,
                                                   ": gold index ", doc.gold, " out of range for ",
                                                   choices.size(), " choices"));
  }
  for (const std::string& c : choices) {
    if (delim.empty() && c.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", name(), ", document ", doc.id, ": empty continuation"));
    }
    out.push_back({context, delim + c});
  }
  return out;
}

absl::StatusOr<DocScore> Task::Score(const datasets::Doc& doc,
                                     absl::Span<const LoglikelihoodResult> results) const {
  DocScore s;
  if (spec_.output_type() == LOGLIKELIHOOD) {
    if (results.size() != 1) return absl::InternalError("LOGLIKELIHOOD needs one result");
    const ChoiceOutcome o{.results = results, .best = results[0].is_greedy ? 0 : -1, .gold = 0};
    for (const std::string& m : spec_.metrics()) s.metrics[m] = FindMetric(m)->choices(o);
    return s;
  }
  if (spec_.output_type() != MULTIPLE_CHOICE && spec_.output_type() != MULTIPLE_INPUT) {
    return absl::InternalError(absl::StrCat("task ", name(), " is not scored by loglikelihood"));
  }
  // acc_norm's lengths: the choices, or for multiple input the contexts they
  // make (lm-eval's doc_to_choice output either way).
  std::vector<std::string> contexts;
  if (spec_.output_type() == MULTIPLE_INPUT) {
    FOCAL_ASSIGN_OR_RETURN(contexts, ChoiceContexts(doc));
  }
  const auto& choices = spec_.output_type() == MULTIPLE_INPUT ? contexts : Choices(doc);
  if (results.size() != choices.size()) return absl::InternalError("result count mismatch");
  // numpy.argmax: the first maximum wins.
  int best = 0, best_norm = 0;
  double best_norm_v = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ll > results[best].ll) best = static_cast<int>(i);
    const double norm = results[i].ll / static_cast<double>(Utf8Length(choices[i]));
    if (i == 0 || norm > best_norm_v) {
      best_norm_v = norm;
      best_norm = static_cast<int>(i);
    }
  }
  s.prediction = best;
  const ChoiceOutcome o{.results = results, .best = best, .best_norm = best_norm, .gold = doc.gold};
  for (const std::string& m : spec_.metrics()) s.metrics[m] = FindMetric(m)->choices(o);
  return s;
}

}  // namespace focal::tasks
