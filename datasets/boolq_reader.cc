// SPDX-License-Identifier: Apache-2.0
// BoolQ jsonl: {question, passage, answer: true|false} (the original Google
// release) or {question, passage, label: 0|1} (SuperGLUE / Hugging Face, what
// lm-eval loads). The choices "no"/"yes" come from the task spec; gold is 1
// for true.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/formats.h"

namespace focal::datasets {
namespace {

absl::StatusOr<int> Gold(const JsonRecord& r) {
  const JsonValue* answer = r.Find("answer");
  const JsonValue* label = r.Find("label");
  if (answer == nullptr && label == nullptr) {
    return r.Error("missing field 'answer' (true/false) or 'label' (0/1)");
  }
  int gold = -1;
  if (label != nullptr) {
    if (!label->is_integer() || (label->integer() != 0 && label->integer() != 1)) {
      return r.FieldError("label", "must be 0 or 1");
    }
    gold = static_cast<int>(label->integer());
  }
  if (answer != nullptr) {
    if (!answer->is_bool()) return r.FieldError("answer", "must be true or false");
    // Both present: they must agree, or the gold is ambiguous.
    if (gold >= 0 && gold != static_cast<int>(answer->bool_value())) {
      return r.Error("fields 'answer' and 'label' disagree");
    }
    gold = answer->bool_value() ? 1 : 0;
  }
  return gold;
}

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadBoolq(absl::string_view path,
                                           const ReaderOptions& /*options*/) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const JsonRecord& r = records[i];
    Doc doc;
    doc.index = static_cast<int64_t>(i);
    doc.id = absl::StrCat(i);
    FOCAL_ASSIGN_OR_RETURN(doc.fields["question"], r.String("question"));
    FOCAL_ASSIGN_OR_RETURN(doc.fields["passage"], r.String("passage"));
    FOCAL_ASSIGN_OR_RETURN(doc.gold, Gold(r));
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
