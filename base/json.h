// SPDX-License-Identifier: Apache-2.0
// A small strict JSON (RFC 8259) reader for config.json and safetensors
// headers. Written here rather than using protobuf's Struct because we need
// exact 64-bit integers (tensor offsets), duplicate-key detection and errors
// that give line and column.
#ifndef FOCAL_BASE_JSON_H_
#define FOCAL_BASE_JSON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace focal {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  // True for numbers written without fraction or exponent that fit in int64.
  bool is_integer() const { return type_ == Type::kNumber && is_int_; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  // Accessors require the matching type (checked; a mismatch is a bug).
  bool bool_value() const;
  double number() const;
  int64_t integer() const;
  const std::string& string_value() const;
  const std::vector<JsonValue>& array() const;
  const std::vector<Member>& members() const;  // in file order, keys unique

  // Object lookup; nullptr when absent (or when this is not an object).
  const JsonValue* Find(absl::string_view key) const;
  static const char* TypeName(Type t);

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  bool is_int_ = false;
  double num_ = 0;
  int64_t int_ = 0;
  std::string str_;
  std::vector<JsonValue> arr_;
  std::vector<Member> obj_;
};

// Parses one JSON document. Errors are InvalidArgument and read
// "<source>:<line>:<col>: <what>"; duplicate object keys are errors.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text, absl::string_view source);

}  // namespace focal

#endif  // FOCAL_BASE_JSON_H_
