// SPDX-License-Identifier: Apache-2.0
// WinoGrande jsonl: {sentence, option1, option2, answer: "1"|"2"} (the
// allenai/winogrande release and its Hugging Face export), split as lm-eval's
// preprocess_winogrande.py does:
//   prefix       = sentence[:sentence.index("_")]       (each choice's context
//                                                        is prefix + option)
//   continuation = sentence[sentence.index("_") + 1:].strip()
//   gold         = {"1": 0, "2": 1}[answer]
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/formats.h"
#include "datasets/text_util.h"

namespace focal::datasets {

absl::StatusOr<std::vector<Doc>> ReadWinogrande(absl::string_view path,
                                                const ReaderOptions& /*options*/) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const JsonRecord& r = records[i];
    Doc doc;
    doc.index = static_cast<int64_t>(i);
    doc.id = absl::StrCat(i);
    FOCAL_ASSIGN_OR_RETURN(std::string sentence, r.String("sentence"));
    FOCAL_ASSIGN_OR_RETURN(std::string option1, r.String("option1"));
    FOCAL_ASSIGN_OR_RETURN(std::string option2, r.String("option2"));
    FOCAL_ASSIGN_OR_RETURN(std::string answer, r.String("answer"));
    const size_t blank = sentence.find('_');
    if (blank == std::string::npos) return r.FieldError("sentence", "has no blank '_'");
    if (answer != "1" && answer != "2") {
      // The test split has answer "" (no labels): not evaluable.
      return r.FieldError("answer", "must be \"1\" or \"2\"");
    }
    doc.fields["prefix"] = sentence.substr(0, blank);
    doc.fields["continuation"] =
        std::string(PyStrip(absl::string_view(sentence).substr(blank + 1)));
    doc.fields["sentence"] = std::move(sentence);
    doc.choices = {std::move(option1), std::move(option2)};
    doc.gold = answer == "1" ? 0 : 1;
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
