// SPDX-License-Identifier: Apache-2.0
// LAMBADA, OpenAI's detokenised jsonl ({"text": ...}, lm-eval's
// lambada_openai); MakeLambadaDoc is shared with lambada_plain_reader.cc.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/formats.h"
#include "datasets/text_util.h"

namespace focal::datasets {

Doc MakeLambadaDoc(std::string text, int64_t index) {
  Doc doc;
  doc.index = index;
  doc.id = absl::StrCat(index);
  LastWordSplit split = SplitLastWord(text);
  doc.fields["context"] = std::move(split.context);
  doc.fields["target"] = std::move(split.target);
  doc.fields["text"] = std::move(text);
  return doc;
}

absl::StatusOr<std::vector<Doc>> ReadLambada(absl::string_view path,
                                             const ReaderOptions& /*options*/) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    FOCAL_ASSIGN_OR_RETURN(std::string text, records[i].String("text"));
    // An empty passage has no word to predict.
    if (text.empty()) return records[i].FieldError("text", "is empty");
    docs.push_back(MakeLambadaDoc(std::move(text), static_cast<int64_t>(i)));
  }
  return docs;
}

}  // namespace focal::datasets
