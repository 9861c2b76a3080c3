// SPDX-License-Identifier: Apache-2.0
// The little Unicode the BPE tokenizers need: UTF-8 decoding and encoding,
// Rust's lossy UTF-8 decoding (what HF tokenizers' byte-level decoder does),
// and the code point classes of their split regexes (\p{L}, \p{N}, \s).
#ifndef FOCAL_MODEL_UNICODE_H_
#define FOCAL_MODEL_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "base/utf8.h"

namespace focal::model {

enum class CharClass : uint8_t {
  kOther = 0,
  kLetter,      // general category L*
  kNumber,      // general category N*
  kWhitespace,  // the White_Space property
};

// From the table in unicode_tables.cc (scripts/gen_unicode_tables.py).
CharClass ClassifyCodePoint(char32_t cp);
// The Unicode version that table was computed from, e.g. "14.0.0".
extern const char kUnicodeTablesVersion[];

inline bool IsLetter(char32_t cp) { return ClassifyCodePoint(cp) == CharClass::kLetter; }
inline bool IsNumber(char32_t cp) { return ClassifyCodePoint(cp) == CharClass::kNumber; }
inline bool IsWhitespace(char32_t cp) { return ClassifyCodePoint(cp) == CharClass::kWhitespace; }

// (IsValidUtf8 is in base/utf8.h.)
// The code point starting at s[*pos] of VALID UTF-8; advances *pos past it.
char32_t DecodeUtf8(absl::string_view s, size_t* pos);
// The byte length of the UTF-8 sequence whose lead byte is `lead` (valid text).
inline size_t Utf8Length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}
void AppendUtf8(char32_t cp, std::string* out);
// `bytes` with every maximal ill-formed subsequence replaced by one U+FFFD,
// as Rust's String::from_utf8_lossy does.
std::string Utf8Lossy(absl::string_view bytes);

}  // namespace focal::model

#endif  // FOCAL_MODEL_UNICODE_H_
