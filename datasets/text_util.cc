// SPDX-License-Identifier: Apache-2.0
#include "datasets/text_util.h"

#include <cstddef>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "datasets/long_context.h"
#include "re2/re2.h"

namespace focal::datasets {
namespace {

bool IsAsciiSpace(unsigned char c) {
  // str.isspace() for ASCII: \t \n \v \f \r, the separators \x1c..\x1f, ' '.
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
}

// UTF-8 encoded non-ASCII whitespace per str.isspace() (Unicode White_Space
// plus bidi B/S/WS): U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000.
bool IsUnicodeSpace(absl::string_view c) {
  if (c.size() == 2) return c == "\xc2\x85" || c == "\xc2\xa0";
  if (c.size() != 3) return false;
  if (c[0] == '\xe2' && c[1] == '\x80') {
    const unsigned char b = static_cast<unsigned char>(c[2]);
    return (b >= 0x80 && b <= 0x8a) || b == 0xa8 || b == 0xa9 || b == 0xaf;
  }
  return c == "\xe1\x9a\x80" || c == "\xe2\x81\x9f" || c == "\xe3\x80\x80";
}

// Byte length of the whitespace character starting at s[0], or 0.
size_t SpaceAtFront(absl::string_view s) {
  if (s.empty()) return 0;
  if (IsAsciiSpace(static_cast<unsigned char>(s[0]))) return 1;
  for (size_t n : {2, 3}) {
    if (s.size() >= n && IsUnicodeSpace(s.substr(0, n))) return n;
  }
  return 0;
}

// Byte length of the whitespace character ending at s.back(), or 0.
size_t SpaceAtBack(absl::string_view s) {
  if (s.empty()) return 0;
  if (IsAsciiSpace(static_cast<unsigned char>(s.back()))) return 1;
  for (size_t n : {2, 3}) {
    if (s.size() >= n && IsUnicodeSpace(s.substr(s.size() - n))) return n;
  }
  return 0;
}

}  // namespace

absl::string_view PyStrip(absl::string_view s) {
  while (size_t n = SpaceAtFront(s)) s.remove_prefix(n);
  while (size_t n = SpaceAtBack(s)) s.remove_suffix(n);
  return s;
}

std::string PyCapitalize(absl::string_view s) {
  std::string out(s);
  bool first = true;
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c < 0x80) {
      if (first && c >= 'a' && c <= 'z') out[i] = static_cast<char>(c - 'a' + 'A');
      if (!first && c >= 'A' && c <= 'Z') out[i] = static_cast<char>(c - 'A' + 'a');
      first = false;
    } else if (c == 0xc3 && i + 1 < out.size()) {
      // Latin-1 letters U+00C0..U+00DE <-> U+00E0..U+00FE share the lead byte
      // C3 and differ by 0x20 in the second; U+00D7/U+00F7 are x and / signs,
      // U+00DF (sharp s) and U+00FF (y umlaut) have no one-character partner.
      unsigned char b = static_cast<unsigned char>(out[i + 1]);
      if (first && b >= 0xa0 && b <= 0xbe && b != 0xb7) out[i + 1] = static_cast<char>(b - 0x20);
      if (!first && b >= 0x80 && b <= 0x9e && b != 0x97) out[i + 1] = static_cast<char>(b + 0x20);
      first = false;
      ++i;
    } else if (c >= 0xc0) {
      first = false;  // lead byte of another character: copied unchanged
    }
    // Continuation bytes (0x80..0xbf) belong to the character already seen.
  }
  return out;
}

std::string HellaswagPreprocess(absl::string_view text) {
  // Latin-1 mode makes '.' match any single byte but '\n' (Python's '.'
  // without DOTALL); '[' and ']' never occur inside a UTF-8 sequence, so the
  // matches are the same as Python's on the decoded string.
  static const RE2* const kTag = [] {
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingLatin1);
    return new RE2(R"(\[.*?\])", options);
  }();
  std::string out = absl::StrReplaceAll(PyStrip(text), {{" [title]", ". "}});
  if (out.find('[') != std::string::npos) RE2::GlobalReplace(&out, *kTag, "");  // rare: skip RE2
  return absl::StrReplaceAll(out, {{"  ", " "}});
}

LastWordSplit SplitLastWord(absl::string_view text) {
  const size_t space = text.rfind(' ');
  if (space == absl::string_view::npos) return {"", absl::StrCat(" ", text)};
  return {std::string(text.substr(0, space)), absl::StrCat(" ", text.substr(space + 1))};
}

absl::StatusOr<std::string> PrefixOfTokens(
    absl::string_view text, absl::Span<const int32_t> ids, int64_t n,
    const std::function<absl::StatusOr<std::string>(absl::Span<const int32_t>)>& decode) {
  if (n < 0) n += static_cast<int64_t>(ids.size());  // all but the last -n tokens
  if (n <= 0) return std::string();
  if (n >= static_cast<int64_t>(ids.size())) return std::string(text);
  FOCAL_ASSIGN_OR_RETURN(std::string d, decode(ids.subspan(0, static_cast<size_t>(n))));
  absl::string_view dv = d;
  if (!text.empty() && text[0] != ' ' && !dv.empty() && dv[0] == ' ') dv.remove_prefix(1);
  size_t k = 0;
  while (k < dv.size() && k < text.size() && dv[k] == text[k]) ++k;
  // Never end inside a UTF-8 character.
  while (k > 0 && k < text.size() && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
  return std::string(text.substr(0, k));
}

}  // namespace focal::datasets
