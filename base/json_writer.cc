// SPDX-License-Identifier: Apache-2.0
#include "base/json_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace focal {
namespace {

std::string Exact(double v) { return absl::StrFormat("%.17g", v); }

template <typename T, typename F>
std::string Array(absl::Span<const T> values, F format) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    absl::StrAppend(&out, i ? ", " : "", format(values[i]));
  return out + "]";
}

template <typename V, typename F>
std::string MapObject(const std::map<std::string, V>& values, F format) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : values) {
    absl::StrAppend(&out, first ? "" : ", ", JsonQuote(k), ": ", format(v));
    first = false;
  }
  return out + "}";
}

}  // namespace

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

JsonObjectWriter& JsonObjectWriter::Field(absl::string_view key, absl::string_view json) {
  absl::StrAppend(&out_, out_.size() > 1 ? (compact_ ? "," : ", ") : "", JsonQuote(key),
                  compact_ ? ":" : ": ", json);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::String(absl::string_view key, absl::string_view value) {
  return Field(key, JsonQuote(value));
}
JsonObjectWriter& JsonObjectWriter::Int(absl::string_view key, int64_t value) {
  return Field(key, absl::StrCat(value));
}
JsonObjectWriter& JsonObjectWriter::Bool(absl::string_view key, bool value) {
  return Field(key, value ? "true" : "false");
}
JsonObjectWriter& JsonObjectWriter::Double(absl::string_view key, double value) {
  return Field(key, Exact(value));
}
JsonObjectWriter& JsonObjectWriter::ShortDouble(absl::string_view key, double value) {
  return Field(key, absl::StrCat(value));
}
JsonObjectWriter& JsonObjectWriter::Raw(absl::string_view key, absl::string_view json) {
  return Field(key, json);
}
JsonObjectWriter& JsonObjectWriter::StringArray(absl::string_view key,
                                                absl::Span<const std::string> values) {
  return Field(key, Array(values, [](const std::string& s) { return JsonQuote(s); }));
}
JsonObjectWriter& JsonObjectWriter::DoubleArray(absl::string_view key,
                                                absl::Span<const double> values) {
  return Field(key, Array(values, Exact));
}
JsonObjectWriter& JsonObjectWriter::BoolArray(absl::string_view key,
                                              const std::vector<bool>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", values[i] ? "true" : "false");
  }
  return Field(key, out + "]");
}
JsonObjectWriter& JsonObjectWriter::StringMap(absl::string_view key,
                                              const std::map<std::string, std::string>& values) {
  return Field(key, MapObject(values, [](const std::string& s) { return JsonQuote(s); }));
}
JsonObjectWriter& JsonObjectWriter::DoubleMap(absl::string_view key,
                                              const std::map<std::string, double>& values) {
  return Field(key, MapObject(values, Exact));
}
JsonObjectWriter& JsonObjectWriter::ShortDoubleMap(absl::string_view key,
                                                   const std::map<std::string, double>& values) {
  return Field(key, MapObject(values, [](double v) { return absl::StrCat(v); }));
}

}  // namespace focal
