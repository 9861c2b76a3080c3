// SPDX-License-Identifier: Apache-2.0
// AI2 ARC jsonl. Two layouts hold the same data:
//   AI2 release: {"id", "question": {"stem", "choices": [{"text", "label"}]}, "answerKey"}
//   Hugging Face (allenai/ai2_arc exported with to_json, what lm-eval loads):
//     {"id", "question": "...", "choices": {"text": [...], "label": [...]}, "answerKey"}
// gold = choices.label.index(answerKey), as lm-eval's doc_to_target.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/formats.h"

namespace focal::datasets {
namespace {

struct Choice {
  std::string text;
  std::string label;
};

absl::StatusOr<std::vector<Choice>> Ai2Choices(const JsonRecord& r, const JsonValue& question) {
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* list, r.Get("choices", &question, "question.choices"));
  if (!list->is_array()) return r.FieldError("question.choices", "must be an array");
  std::vector<Choice> choices;
  for (size_t i = 0; i < list->array().size(); ++i) {
    const JsonValue& c = list->array()[i];
    const std::string name = absl::StrCat("question.choices[", i, "]");
    if (!c.is_object()) return r.FieldError(name, "must be an object");
    FOCAL_ASSIGN_OR_RETURN(std::string text, r.String("text", &c, absl::StrCat(name, ".text")));
    FOCAL_ASSIGN_OR_RETURN(std::string label, r.String("label", &c, absl::StrCat(name, ".label")));
    choices.push_back({std::move(text), std::move(label)});
  }
  return choices;
}

absl::StatusOr<std::vector<Choice>> HfChoices(const JsonRecord& r) {
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* obj, r.Get("choices"));
  if (!obj->is_object()) return r.FieldError("choices", "must be an object");
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* texts, r.Get("text", obj, "choices.text"));
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* labels, r.Get("label", obj, "choices.label"));
  if (!texts->is_array()) return r.FieldError("choices.text", "must be an array");
  if (!labels->is_array()) return r.FieldError("choices.label", "must be an array");
  if (texts->array().size() != labels->array().size()) {
    return r.Error(absl::StrCat("'choices.text' has ", texts->array().size(),
                                " entries but 'choices.label' has ", labels->array().size()));
  }
  std::vector<Choice> choices;
  for (size_t i = 0; i < texts->array().size(); ++i) {
    const JsonValue& text = texts->array()[i];
    const JsonValue& label = labels->array()[i];
    if (!text.is_string())
      return r.FieldError(absl::StrCat("choices.text[", i, "]"), "must be a string");
    if (!label.is_string())
      return r.FieldError(absl::StrCat("choices.label[", i, "]"), "must be a string");
    choices.push_back({text.string_value(), label.string_value()});
  }
  return choices;
}

absl::StatusOr<Doc> ArcDoc(const JsonRecord& r, int64_t index) {
  Doc doc;
  doc.index = index;
  doc.id = absl::StrCat(index);
  if (r.Find("id") != nullptr) {
    FOCAL_ASSIGN_OR_RETURN(doc.id, r.String("id"));
  }

  FOCAL_ASSIGN_OR_RETURN(const JsonValue* question, r.Get("question"));
  std::vector<Choice> choices;
  if (question->is_object()) {
    FOCAL_ASSIGN_OR_RETURN(doc.fields["question"], r.String("stem", question, "question.stem"));
    FOCAL_ASSIGN_OR_RETURN(choices, Ai2Choices(r, *question));
  } else if (question->is_string()) {
    doc.fields["question"] = question->string_value();
    FOCAL_ASSIGN_OR_RETURN(choices, HfChoices(r));
  } else {
    return r.FieldError("question", "must be an object (AI2 layout) or a string (HF layout)");
  }
  // A one-choice item would score 100% whatever the model does.
  if (choices.size() < 2) {
    return r.Error(absl::StrCat("expected at least 2 choices, got ", choices.size()));
  }

  FOCAL_ASSIGN_OR_RETURN(std::string answer, r.String("answerKey"));
  for (size_t i = 0; i < choices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (choices[j].label == choices[i].label) {
        return r.Error(absl::StrCat("duplicate choice label '", choices[i].label, "'"));
      }
    }
    if (choices[i].label == answer) doc.gold = static_cast<int>(i);
    doc.choices.push_back(std::move(choices[i].text));
  }
  if (doc.gold < 0) {
    std::string labels;
    for (const Choice& c : choices) absl::StrAppend(&labels, labels.empty() ? "" : ", ", c.label);
    return r.Error(
        absl::StrCat("answerKey '", answer, "' is not one of the choice labels (", labels, ")"));
  }
  return doc;
}

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadArc(absl::string_view path, const ReaderOptions& /*options*/) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    FOCAL_ASSIGN_OR_RETURN(Doc doc, ArcDoc(records[i], static_cast<int64_t>(i)));
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
