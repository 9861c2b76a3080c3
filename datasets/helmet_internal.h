// SPDX-License-Identifier: Apache-2.0
// Plumbing of the HELMET generators (internal to focal_generators).
#ifndef FOCAL_DATASETS_HELMET_INTERNAL_H_
#define FOCAL_DATASETS_HELMET_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/utf8.h"

namespace focal::datasets {

struct CsvRow {
  std::vector<std::string> fields;
  int64_t line = 0;  // 1-based line where the row starts
};

// Rows as Python's csv.reader reads them (quotechar '"', doubled quotes
// inside quoted fields, quoted fields may span lines, "\r\n" or "\n" line
// ends; skip_initial_space: spaces after a delimiter are dropped). An
// unterminated quote is an error naming the file and line.
absl::StatusOr<std::vector<CsvRow>> ParseCsv(absl::string_view text, absl::string_view path,
                                             char delimiter, bool skip_initial_space);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_HELMET_INTERNAL_H_
