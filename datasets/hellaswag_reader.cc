// SPDX-License-Identifier: Apache-2.0
// HellaSwag in its original jsonl (rowanz/hellaswag; also Rowan/hellaswag
// exported from Hugging Face, whose "label" is a string), preprocessed as
// lm-eval's hellaswag utils.py process_docs:
//   query   = preprocess(activity_label + ": " + ctx_a + " " + ctx_b.capitalize())
//   choices = [preprocess(e) for e in endings]
//   gold    = int(label)
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/formats.h"
#include "datasets/text_util.h"

namespace focal::datasets {
namespace {

absl::StatusOr<int> Label(const JsonRecord& r) {
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* v, r.Get("label"));
  int64_t label = -1;
  if (v->is_integer()) {
    label = v->integer();
  } else if (!v->is_string() || !absl::SimpleAtoi(v->string_value(), &label)) {
    // HF's test split has label "" (no answers): not evaluable.
    return r.FieldError("label", "must be an integer 0-3 or a string holding one");
  }
  if (label < 0 || label >= kHellaswagChoices) {
    return r.Error(absl::StrCat("label ", label, " is out of range 0-", kHellaswagChoices - 1));
  }
  return static_cast<int>(label);
}

absl::StatusOr<Doc> HellaswagDoc(const JsonRecord& r, int64_t index) {
  FOCAL_ASSIGN_OR_RETURN(std::string activity, r.String("activity_label"));
  FOCAL_ASSIGN_OR_RETURN(std::string ctx_a, r.String("ctx_a"));
  FOCAL_ASSIGN_OR_RETURN(std::string ctx_b, r.String("ctx_b"));
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* endings, r.Get("endings"));
  if (!endings->is_array()) return r.FieldError("endings", "must be an array");
  if (endings->array().size() != kHellaswagChoices) {
    return r.Error(
        absl::StrCat("expected ", kHellaswagChoices, " endings, got ", endings->array().size()));
  }
  Doc doc;
  doc.index = index;
  doc.id = absl::StrCat(index);
  doc.fields["query"] =
      HellaswagPreprocess(absl::StrCat(activity, ": ", ctx_a, " ", PyCapitalize(ctx_b)));
  for (size_t i = 0; i < endings->array().size(); ++i) {
    const JsonValue& e = endings->array()[i];
    if (!e.is_string()) return r.FieldError(absl::StrCat("endings[", i, "]"), "must be a string");
    doc.choices.push_back(HellaswagPreprocess(e.string_value()));
  }
  FOCAL_ASSIGN_OR_RETURN(doc.gold, Label(r));
  return doc;
}

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadHellaswag(absl::string_view path,
                                               const ReaderOptions& /*options*/) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    FOCAL_ASSIGN_OR_RETURN(Doc doc, HellaswagDoc(records[i], static_cast<int64_t>(i)));
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
