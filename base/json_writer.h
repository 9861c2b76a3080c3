// SPDX-License-Identifier: Apache-2.0
// Writing JSON: string quoting, and one object built field by field in the
// layout of Python's json.dumps defaults (", " and ": "), which the per-sample
// logs use, or compact. Reading is base/json.h.
#ifndef FOCAL_BASE_JSON_WRITER_H_
#define FOCAL_BASE_JSON_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal {

// `s` as a JSON string literal, quotes included (bytes >= 0x80 pass through).
std::string JsonQuote(absl::string_view s);

class JsonObjectWriter {
 public:
  // compact: "," and ":" without spaces (resume logs).
  explicit JsonObjectWriter(bool compact = false) : compact_(compact) {}

  JsonObjectWriter& String(absl::string_view key, absl::string_view value);
  JsonObjectWriter& Int(absl::string_view key, int64_t value);
  JsonObjectWriter& Bool(absl::string_view key, bool value);
  // %.17g: the double round-trips exactly.
  JsonObjectWriter& Double(absl::string_view key, double value);
  // Six significant digits (absl::StrCat's form), for human-scale values.
  JsonObjectWriter& ShortDouble(absl::string_view key, double value);
  // `json` is already valid JSON (a nested object or array).
  JsonObjectWriter& Raw(absl::string_view key, absl::string_view json);
  JsonObjectWriter& StringArray(absl::string_view key, absl::Span<const std::string> values);
  JsonObjectWriter& DoubleArray(absl::string_view key, absl::Span<const double> values);
  JsonObjectWriter& BoolArray(absl::string_view key, const std::vector<bool>& values);
  JsonObjectWriter& StringMap(absl::string_view key,
                              const std::map<std::string, std::string>& values);
  JsonObjectWriter& DoubleMap(absl::string_view key, const std::map<std::string, double>& values);
  JsonObjectWriter& ShortDoubleMap(absl::string_view key,
                                   const std::map<std::string, double>& values);
  // The object, "{...}".
  std::string Finish() const { return out_ + "}"; }

 private:
  JsonObjectWriter& Field(absl::string_view key, absl::string_view json);
  bool compact_;
  std::string out_ = "{";
};

}  // namespace focal

#endif  // FOCAL_BASE_JSON_WRITER_H_
