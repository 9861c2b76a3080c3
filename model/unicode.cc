// SPDX-License-Identifier: Apache-2.0
#include "model/unicode.h"

namespace focal::model {

char32_t DecodeUtf8(absl::string_view s, size_t* pos) {
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[k])); };
  const size_t i = *pos;
  const size_t n = Utf8Length(static_cast<unsigned char>(s[i]));
  *pos += n;
  switch (n) {
    case 1:
      return b(i);
    case 2:
      return ((b(i) & 0x1F) << 6) | (b(i + 1) & 0x3F);
    case 3:
      return ((b(i) & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
    default:
      return ((b(i) & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) |
             (b(i + 3) & 0x3F);
  }
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Utf8Lossy(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t prefix;
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = Utf8WellFormedAt(bytes, i, &prefix);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += prefix;
    } else {
      out.append(bytes.data() + i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace focal::model
