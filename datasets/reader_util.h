// SPDX-License-Identifier: Apache-2.0
// Plumbing shared by the readers: splitting a file into numbered lines and
// reading JSON-lines records with errors that name the file, the line and
// the field. Internal to focal_datasets.
#ifndef FOCAL_DATASETS_READER_UTIL_H_
#define FOCAL_DATASETS_READER_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json.h"

namespace focal::datasets {

using ReaderOptions = std::map<std::string, std::string>;

// One line of a text file, without its "\n" (or "\r\n") terminator.
struct Line {
  absl::string_view text;
  int64_t number = 0;  // 1-based, for error messages
};

// Splits `contents` into lines. Blank (whitespace-only) lines at the end of
// the file are dropped, since editors and `cat` add them freely; a blank line
// anywhere else is an error, because it would shift every later record (and,
// for line-aligned files such as PIQA's labels, silently mis-pair them).
absl::StatusOr<std::vector<Line>> SplitLines(absl::string_view contents, absl::string_view path);

// The whole file, decompressed when its name ends in ".bz2" or ".gz";
// corrupt or truncated compressed data is DataLoss naming the file.
absl::StatusOr<std::string> ReadDataFile(absl::string_view path);

// ReadDataFile + SplitLines. The returned lines point into `*storage`.
absl::StatusOr<std::vector<Line>> ReadLines(absl::string_view path, std::string* storage);

// "<path>:<line>: <what>" as InvalidArgument.
absl::Status LineError(absl::string_view path, int64_t line, absl::string_view what);

// One JSON object of a .jsonl file, with typed field access whose errors read
// "<path>:<line>: missing field 'question.stem'" and the like.
class JsonRecord {
 public:
  // Parses one line; malformed JSON is reported as "<path>:<line>:<col>: ...".
  static absl::StatusOr<JsonRecord> Parse(const Line& line, absl::string_view path);

  // Element `index` of a JSON array file; errors read "<path>: record
  // <index>: ..." (0-based, the array index).
  static JsonRecord FromArrayElement(JsonValue value, std::string path, int64_t index);

  const JsonValue& value() const { return value_; }
  int64_t line() const { return line_; }

  absl::Status Error(absl::string_view what) const;
  absl::Status FieldError(absl::string_view field, absl::string_view what) const;

  // Member `field` of `obj` (default: the record itself); null counts as
  // missing. `name` is the dotted path used in messages (default: `field`).
  const JsonValue* Find(absl::string_view field, const JsonValue* obj = nullptr) const;
  absl::StatusOr<const JsonValue*> Get(absl::string_view field, const JsonValue* obj = nullptr,
                                       absl::string_view name = {}) const;
  absl::StatusOr<std::string> String(absl::string_view field, const JsonValue* obj = nullptr,
                                     absl::string_view name = {}) const;

 private:
  JsonRecord(JsonValue value, std::string path, int64_t line)
      : value_(std::move(value)), path_(std::move(path)), line_(line) {}

  JsonValue value_;
  std::string path_;
  int64_t line_ = 0;
  bool array_element_ = false;  // line_ is then the array index
};

// Reads a whole .jsonl file into records (every line must be a JSON object).
absl::StatusOr<std::vector<JsonRecord>> ReadJsonl(absl::string_view path);

// A .jsonl file, or a file holding one JSON array of objects (HotpotQA's and
// SQuAD-style original releases; detected by its first non-blank character).
absl::StatusOr<std::vector<JsonRecord>> ReadJsonRecords(absl::string_view path);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_READER_UTIL_H_
