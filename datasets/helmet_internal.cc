// SPDX-License-Identifier: Apache-2.0
#include "datasets/helmet_internal.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/py_random.h"

namespace focal::datasets {

absl::StatusOr<std::vector<CsvRow>> ParseCsv(absl::string_view text, absl::string_view path,
                                             char delimiter, bool skip_initial_space) {
  std::vector<CsvRow> rows;
  int64_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    CsvRow row;
    row.line = line;
    std::string field;
    bool at_field_start = true;
    bool done = false;
    while (!done) {
      if (at_field_start && skip_initial_space) {
        while (i < n && text[i] == ' ') ++i;
      }
      if (at_field_start && i < n && text[i] == '"') {  // quoted field
        const int64_t start_line = line;
        ++i;
        while (true) {
          if (i >= n) {
            return absl::InvalidArgumentError(
                absl::StrCat(path, ":", start_line, ": unterminated quoted field"));
          }
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          field += text[i++];
        }
      }
      // Unquoted text (or what follows a closing quote, kept as csv does).
      while (i < n && text[i] != delimiter && text[i] != '\n' && text[i] != '\r') {
        field += text[i++];
      }
      row.fields.push_back(std::move(field));
      field.clear();
      if (i < n && text[i] == delimiter) {
        ++i;
        at_field_start = true;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') {
        ++i;
        ++line;
      }
      done = true;
    }
    if (row.fields.size() == 1 && row.fields[0].empty()) continue;  // blank line: csv yields []
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string HelmetPassage(absl::string_view title, absl::string_view text) {
  return absl::StrCat("Document (Title: ", title, "): ", text);
}

std::vector<std::string> HelmetTestKeys(std::vector<std::string> keys, uint64_t seed, int64_t n) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  PyRandom draw(seed);
  std::vector<std::string> out;
  for (int64_t k : draw.Sample(static_cast<int64_t>(keys.size()),
                               std::min<int64_t>(n, static_cast<int64_t>(keys.size())))) {
    out.push_back(keys[k]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int64_t> PieceTokens(const GeneratorOptions& o, absl::string_view text,
                                    int64_t bos) {
  FOCAL_ASSIGN_OR_RETURN(int64_t n, o.count_tokens(text));
  return n - bos;
}

}  // namespace focal::datasets
