// SPDX-License-Identifier: Apache-2.0
// HellaSwag in llama.cpp's text layout (klosax/hellaswag_text_data): six
// lines per item, "activity_label: ctx", the gold index, four endings. The
// context is HF's "ctx" as is (ctx_b not capitalised), so lm-eval parity holds
// only against an lm-eval task over the same text; preprocess() is applied to
// every line as lm-eval would (it changes a few lines that still carry
// "[...]" tags or double spaces).
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

constexpr size_t kLinesPerItem = 2 + kHellaswagChoices;

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadHellaswagLlamacpp(absl::string_view path,
                                                       const ReaderOptions& /*options*/) {
  std::string contents;
  FOCAL_ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, &contents));
  if (lines.size() % kLinesPerItem != 0) {
    const Line& first = lines[lines.size() - lines.size() % kLinesPerItem];
    return LineError(path, first.number,
                     absl::StrCat("incomplete item: ", lines.size() % kLinesPerItem, " of its ",
                                  kLinesPerItem, " lines (query, gold, ", kHellaswagChoices,
                                  " endings) before the end of the file"));
  }
  std::vector<Doc> docs;
  docs.reserve(lines.size() / kLinesPerItem);
  for (size_t at = 0; at < lines.size(); at += kLinesPerItem) {
    Doc doc;
    doc.index = static_cast<int64_t>(docs.size());
    doc.id = absl::StrCat(doc.index);
    doc.fields["query"] = HellaswagPreprocess(lines[at].text);
    const Line& gold = lines[at + 1];
    if (!absl::SimpleAtoi(gold.text, &doc.gold) || doc.gold < 0 || doc.gold >= kHellaswagChoices) {
      return LineError(path, gold.number,
                       absl::StrCat("expected the gold index 0-", kHellaswagChoices - 1, ", got '",
                                    gold.text, "'"));
    }
    for (size_t i = 0; i < kHellaswagChoices; ++i) {
      doc.choices.push_back(HellaswagPreprocess(lines[at + 2 + i].text));
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
