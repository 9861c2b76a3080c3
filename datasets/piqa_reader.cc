// SPDX-License-Identifier: Apache-2.0
// PIQA: jsonl {goal, sol1, sol2}; the answers are in a separate file of 0/1
// lines aligned with the records (the official release). Records that carry
// their own "label" (the Hugging Face parquet export, baber/piqa) need no
// labels file.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "datasets/formats.h"

namespace focal::datasets {
namespace {

// valid.jsonl -> valid-labels.lst, as the official release names them.
std::string DefaultLabelsPath(absl::string_view path) {
  absl::ConsumeSuffix(&path, ".jsonl");
  return absl::StrCat(path, "-labels.lst");
}

absl::StatusOr<std::vector<int>> ReadLabelsFile(absl::string_view path, size_t num_records,
                                                absl::string_view data_path) {
  std::string contents;
  FOCAL_ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, &contents));
  if (lines.size() != num_records) {
    // Line-aligned files that differ in length cannot be paired safely.
    return absl::InvalidArgumentError(absl::StrCat(path, " has ", lines.size(), " labels but ",
                                                   data_path, " has ", num_records,
                                                   " records; the files must be line-aligned"));
  }
  std::vector<int> labels;
  labels.reserve(lines.size());
  for (const Line& line : lines) {
    int label = -1;
    if (!absl::SimpleAtoi(line.text, &label) || (label != 0 && label != 1)) {
      return LineError(path, line.number,
                       absl::StrCat("expected label 0 or 1, got '", line.text, "'"));
    }
    labels.push_back(label);
  }
  return labels;
}

absl::StatusOr<int> RecordLabel(const JsonRecord& r) {
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* v, r.Get("label"));
  if (!v->is_integer() || (v->integer() != 0 && v->integer() != 1)) {
    return r.FieldError("label", "must be 0 or 1");
  }
  return static_cast<int>(v->integer());
}

}  // namespace

absl::StatusOr<std::vector<Doc>> ReadPiqa(absl::string_view path, const ReaderOptions& options) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonl(path));
  const auto it = options.find("labels");
  const bool labels_in_records =
      it == options.end() && !records.empty() && records[0].Find("label") != nullptr;
  std::vector<int> labels;
  if (!labels_in_records) {
    const std::string labels_path = it != options.end() ? it->second : DefaultLabelsPath(path);
    FOCAL_ASSIGN_OR_RETURN(labels, ReadLabelsFile(labels_path, records.size(), path));
  }
  std::vector<Doc> docs;
  docs.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const JsonRecord& r = records[i];
    Doc doc;
    doc.index = static_cast<int64_t>(i);
    doc.id = absl::StrCat(i);
    FOCAL_ASSIGN_OR_RETURN(doc.fields["goal"], r.String("goal"));
    FOCAL_ASSIGN_OR_RETURN(std::string sol1, r.String("sol1"));
    FOCAL_ASSIGN_OR_RETURN(std::string sol2, r.String("sol2"));
    doc.choices = {std::move(sol1), std::move(sol2)};
    if (labels_in_records) {
      FOCAL_ASSIGN_OR_RETURN(doc.gold, RecordLabel(r));
    } else {
      doc.gold = labels[i];
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace focal::datasets
