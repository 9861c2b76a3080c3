// SPDX-License-Identifier: Apache-2.0
#include "model/unicode.h"

namespace focal::model {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when ill-formed; on
// 0, *prefix is the length of the longest prefix of one that is there (the
// "maximal subpart" that one U+FFFD replaces).
size_t WellFormedAt(absl::string_view s, size_t i, size_t* prefix) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  *prefix = 1;
  if (c < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;   // no overlongs
    if (c == 0xED) hi = 0x9F;   // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;   // no overlongs
    if (c == 0xF4) hi = 0x8F;   // not past U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= s.size()) return 0;
    const unsigned char lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
    if (b(i + k) < lo_k || b(i + k) > hi_k) return 0;
    *prefix = k + 1;
  }
  return need;
}

}  // namespace

bool IsValidUtf8(absl::string_view s) {
  size_t prefix;
  for (size_t i = 0; i < s.size();) {
    const size_t n = WellFormedAt(s, i, &prefix);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

char32_t DecodeUtf8(absl::string_view s, size_t* pos) {
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[k])); };
  const size_t i = *pos;
  const size_t n = Utf8Length(static_cast<unsigned char>(s[i]));
  *pos += n;
  switch (n) {
    case 1: return b(i);
    case 2: return ((b(i) & 0x1F) << 6) | (b(i + 1) & 0x3F);
    case 3: return ((b(i) & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
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
    const size_t n = WellFormedAt(bytes, i, &prefix);
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
