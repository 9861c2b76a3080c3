// SPDX-License-Identifier: Apache-2.0
#include "base/json.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/utf8.h"

namespace focal {

bool JsonValue::bool_value() const {
  FOCAL_CHECK(type_ == Type::kBool);
  return bool_;
}
double JsonValue::number() const {
  FOCAL_CHECK(type_ == Type::kNumber);
  return num_;
}
int64_t JsonValue::integer() const {
  FOCAL_CHECK(is_integer());
  return int_;
}
const std::string& JsonValue::string_value() const {
  FOCAL_CHECK(type_ == Type::kString);
  return str_;
}
const std::vector<JsonValue>& JsonValue::array() const {
  FOCAL_CHECK(type_ == Type::kArray);
  return arr_;
}
const std::vector<JsonValue::Member>& JsonValue::members() const {
  FOCAL_CHECK(type_ == Type::kObject);
  return obj_;
}
const JsonValue* JsonValue::Find(absl::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const Member& m : obj_) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}
const char* JsonValue::TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "boolean";
    case Type::kNumber:
      return "number";
    case Type::kString:
      return "string";
    case Type::kArray:
      return "array";
    case Type::kObject:
      return "object";
  }
  return "?";
}

class JsonParser {
 public:
  JsonParser(absl::string_view text, absl::string_view source) : s_(text), source_(source) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    SkipWs();
    if (absl::Status st = ParseValue(v, 0); !st.ok()) return st;
    SkipWs();
    if (pos_ != s_.size()) return Error("unexpected data after the JSON value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 256;  // Bounds recursion on hostile input.

  absl::Status Error(absl::string_view what) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ":", line, ":", col, ": malformed JSON: ", what));
  }

  void SkipWs() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(absl::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }

  absl::Status ParseValue(JsonValue& v, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    if (pos_ >= s_.size()) return Error("unexpected end of input");
    char c = s_[pos_];
    if (c == '{') return ParseObject(v, depth);
    if (c == '[') return ParseArray(v, depth);
    if (c == '"') {
      v.type_ = JsonValue::Type::kString;
      return ParseString(v.str_);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(v);
    if (Consume("true")) {
      v.type_ = JsonValue::Type::kBool;
      v.bool_ = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      v.type_ = JsonValue::Type::kBool;
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  absl::Status ParseObject(JsonValue& v, int depth) {
    v.type_ = JsonValue::Type::kObject;
    ++pos_;  // '{'
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return absl::OkStatus();
    }
    // Large objects (a tokenizer's 100k-entry vocabulary) check duplicates
    // with a set; a linear scan would be quadratic.
    constexpr size_t kLinearMax = 16;
    absl::flat_hash_set<std::string> keys;
    while (true) {
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a string key");
      size_t key_pos = pos_;
      std::string key;
      if (absl::Status st = ParseString(key); !st.ok()) return st;
      if (v.obj_.size() == kLinearMax) {
        for (const JsonValue::Member& m : v.obj_) keys.insert(m.first);
      }
      const bool duplicate =
          v.obj_.size() < kLinearMax ? v.Find(key) != nullptr : !keys.insert(key).second;
      if (duplicate) {
        pos_ = key_pos;
        return Error(absl::StrCat("duplicate key \"", key, "\""));
      }
      SkipWs();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Error("expected ':' after key");
      ++pos_;
      SkipWs();
      JsonValue member;
      if (absl::Status st = ParseValue(member, depth + 1); !st.ok()) return st;
      v.obj_.emplace_back(std::move(key), std::move(member));
      SkipWs();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or '}' in object");
    }
  }

  absl::Status ParseArray(JsonValue& v, int depth) {
    v.type_ = JsonValue::Type::kArray;
    ++pos_;  // '['
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      SkipWs();
      JsonValue item;
      if (absl::Status st = ParseValue(item, depth + 1); !st.ok()) return st;
      v.arr_.push_back(std::move(item));
      SkipWs();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or ']' in array");
    }
  }

  absl::Status ParseHex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return Error("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return Error("bad hex digit in \\u escape");
    }
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string& out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return Error("control character in string");
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return Error("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (absl::Status st = ParseHex4(cp); !st.ok()) return st;
          if (cp >= 0xD800 && cp < 0xDC00) {  // High surrogate: needs a low one.
            uint32_t lo = 0;
            if (!Consume("\\u")) return Error("unpaired surrogate in \\u escape");
            if (absl::Status st = ParseHex4(lo); !st.ok()) return st;
            if (lo < 0xDC00 || lo >= 0xE000) return Error("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return Error("unpaired surrogate in \\u escape");
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Error("unknown escape in string");
      }
    }
  }

  absl::Status ParseNumber(JsonValue& v) {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t n = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        ++pos_;
        ++n;
      }
      return n;
    };
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return Error("malformed number");
    }
    bool is_int = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      is_int = false;
      if (digits() == 0) return Error("malformed number");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      is_int = false;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Error("malformed number");
    }
    std::string tok(s_.substr(start, pos_ - start));
    v.type_ = JsonValue::Type::kNumber;
    errno = 0;
    v.num_ = std::strtod(tok.c_str(), nullptr);
    if (is_int) {
      errno = 0;
      long long x = std::strtoll(tok.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        v.is_int_ = true;
        v.int_ = x;
      }
    }
    return absl::OkStatus();
  }

  absl::string_view s_;
  std::string source_;
  size_t pos_ = 0;
};

absl::StatusOr<JsonValue> ParseJson(absl::string_view text, absl::string_view source) {
  return JsonParser(text, source).ParseDocument();
}

}  // namespace focal
