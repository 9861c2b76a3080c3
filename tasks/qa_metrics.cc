// SPDX-License-Identifier: Apache-2.0
#include "tasks/qa_metrics.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "datasets/text_util.h"
#include "re2/re2.h"

namespace focal::tasks {
namespace {

// One decoded UTF-8 character; invalid bytes decode as themselves (len 1,
// cp = -1) and are copied through unchanged.
struct Char {
  int32_t cp = -1;
  size_t len = 1;
};

Char Decode(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  size_t len = 0;
  int32_t cp = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return {};
  }
  if (i + len > s.size()) return {};
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return {};
    cp = (cp << 6) | (cc & 0x3f);
  }
  return {cp, len};
}

void Encode(int32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

bool In(int32_t cp, int32_t lo, int32_t hi) { return cp >= lo && cp <= hi; }

// str.lower() as CPython 3.11 (Unicode 14.0) maps single code points: runs
// {first, last, offset, stride} of the code points whose lower() is the one
// code point cp + offset (every cp in [first, last] when stride is 1, every
// other one when 2). Generated with
//   pairs = [(cp, ord(chr(cp).lower()) - cp) for cp in range(0x110000)
//            if not 0xd800 <= cp < 0xe000 and len(chr(cp).lower()) == 1
//            and chr(cp).lower() != chr(cp)]
// merged greedily into runs; the one multi-character lower() (U+0130) is
// handled in Lower(). Checked over every code point against CPython.
struct LowerRun {
  int32_t first, last, offset, stride;
};
constexpr LowerRun kLowerRuns[] = {
    {0x41, 0x5a, 32, 1},         {0xc0, 0xd6, 32, 1},         {0xd8, 0xde, 32, 1},
    {0x100, 0x12e, 1, 2},        {0x132, 0x136, 1, 2},        {0x139, 0x147, 1, 2},
    {0x14a, 0x176, 1, 2},        {0x178, 0x178, -121, 1},     {0x179, 0x17d, 1, 2},
    {0x181, 0x181, 210, 1},      {0x182, 0x184, 1, 2},        {0x186, 0x186, 206, 1},
    {0x187, 0x187, 1, 1},        {0x189, 0x18a, 205, 1},      {0x18b, 0x18b, 1, 1},
    {0x18e, 0x18e, 79, 1},       {0x18f, 0x18f, 202, 1},      {0x190, 0x190, 203, 1},
    {0x191, 0x191, 1, 1},        {0x193, 0x193, 205, 1},      {0x194, 0x194, 207, 1},
    {0x196, 0x196, 211, 1},      {0x197, 0x197, 209, 1},      {0x198, 0x198, 1, 1},
    {0x19c, 0x19c, 211, 1},      {0x19d, 0x19d, 213, 1},      {0x19f, 0x19f, 214, 1},
    {0x1a0, 0x1a4, 1, 2},        {0x1a6, 0x1a6, 218, 1},      {0x1a7, 0x1a7, 1, 1},
    {0x1a9, 0x1a9, 218, 1},      {0x1ac, 0x1ac, 1, 1},        {0x1ae, 0x1ae, 218, 1},
    {0x1af, 0x1af, 1, 1},        {0x1b1, 0x1b2, 217, 1},      {0x1b3, 0x1b5, 1, 2},
    {0x1b7, 0x1b7, 219, 1},      {0x1b8, 0x1b8, 1, 1},        {0x1bc, 0x1bc, 1, 1},
    {0x1c4, 0x1c4, 2, 1},        {0x1c5, 0x1c5, 1, 1},        {0x1c7, 0x1c7, 2, 1},
    {0x1c8, 0x1c8, 1, 1},        {0x1ca, 0x1ca, 2, 1},        {0x1cb, 0x1db, 1, 2},
    {0x1de, 0x1ee, 1, 2},        {0x1f1, 0x1f1, 2, 1},        {0x1f2, 0x1f4, 1, 2},
    {0x1f6, 0x1f6, -97, 1},      {0x1f7, 0x1f7, -56, 1},      {0x1f8, 0x21e, 1, 2},
    {0x220, 0x220, -130, 1},     {0x222, 0x232, 1, 2},        {0x23a, 0x23a, 10795, 1},
    {0x23b, 0x23b, 1, 1},        {0x23d, 0x23d, -163, 1},     {0x23e, 0x23e, 10792, 1},
    {0x241, 0x241, 1, 1},        {0x243, 0x243, -195, 1},     {0x244, 0x244, 69, 1},
    {0x245, 0x245, 71, 1},       {0x246, 0x24e, 1, 2},        {0x370, 0x372, 1, 2},
    {0x376, 0x376, 1, 1},        {0x37f, 0x37f, 116, 1},      {0x386, 0x386, 38, 1},
    {0x388, 0x38a, 37, 1},       {0x38c, 0x38c, 64, 1},       {0x38e, 0x38f, 63, 1},
    {0x391, 0x3a1, 32, 1},       {0x3a3, 0x3ab, 32, 1},       {0x3cf, 0x3cf, 8, 1},
    {0x3d8, 0x3ee, 1, 2},        {0x3f4, 0x3f4, -60, 1},      {0x3f7, 0x3f7, 1, 1},
    {0x3f9, 0x3f9, -7, 1},       {0x3fa, 0x3fa, 1, 1},        {0x3fd, 0x3ff, -130, 1},
    {0x400, 0x40f, 80, 1},       {0x410, 0x42f, 32, 1},       {0x460, 0x480, 1, 2},
    {0x48a, 0x4be, 1, 2},        {0x4c0, 0x4c0, 15, 1},       {0x4c1, 0x4cd, 1, 2},
    {0x4d0, 0x52e, 1, 2},        {0x531, 0x556, 48, 1},       {0x10a0, 0x10c5, 7264, 1},
    {0x10c7, 0x10c7, 7264, 1},   {0x10cd, 0x10cd, 7264, 1},   {0x13a0, 0x13ef, 38864, 1},
    {0x13f0, 0x13f5, 8, 1},      {0x1c90, 0x1cba, -3008, 1},  {0x1cbd, 0x1cbf, -3008, 1},
    {0x1e00, 0x1e94, 1, 2},      {0x1e9e, 0x1e9e, -7615, 1},  {0x1ea0, 0x1efe, 1, 2},
    {0x1f08, 0x1f0f, -8, 1},     {0x1f18, 0x1f1d, -8, 1},     {0x1f28, 0x1f2f, -8, 1},
    {0x1f38, 0x1f3f, -8, 1},     {0x1f48, 0x1f4d, -8, 1},     {0x1f59, 0x1f5f, -8, 2},
    {0x1f68, 0x1f6f, -8, 1},     {0x1f88, 0x1f8f, -8, 1},     {0x1f98, 0x1f9f, -8, 1},
    {0x1fa8, 0x1faf, -8, 1},     {0x1fb8, 0x1fb9, -8, 1},     {0x1fba, 0x1fbb, -74, 1},
    {0x1fbc, 0x1fbc, -9, 1},     {0x1fc8, 0x1fcb, -86, 1},    {0x1fcc, 0x1fcc, -9, 1},
    {0x1fd8, 0x1fd9, -8, 1},     {0x1fda, 0x1fdb, -100, 1},   {0x1fe8, 0x1fe9, -8, 1},
    {0x1fea, 0x1feb, -112, 1},   {0x1fec, 0x1fec, -7, 1},     {0x1ff8, 0x1ff9, -128, 1},
    {0x1ffa, 0x1ffb, -126, 1},   {0x1ffc, 0x1ffc, -9, 1},     {0x2126, 0x2126, -7517, 1},
    {0x212a, 0x212a, -8383, 1},  {0x212b, 0x212b, -8262, 1},  {0x2132, 0x2132, 28, 1},
    {0x2160, 0x216f, 16, 1},     {0x2183, 0x2183, 1, 1},      {0x24b6, 0x24cf, 26, 1},
    {0x2c00, 0x2c2f, 48, 1},     {0x2c60, 0x2c60, 1, 1},      {0x2c62, 0x2c62, -10743, 1},
    {0x2c63, 0x2c63, -3814, 1},  {0x2c64, 0x2c64, -10727, 1}, {0x2c67, 0x2c6b, 1, 2},
    {0x2c6d, 0x2c6d, -10780, 1}, {0x2c6e, 0x2c6e, -10749, 1}, {0x2c6f, 0x2c6f, -10783, 1},
    {0x2c70, 0x2c70, -10782, 1}, {0x2c72, 0x2c72, 1, 1},      {0x2c75, 0x2c75, 1, 1},
    {0x2c7e, 0x2c7f, -10815, 1}, {0x2c80, 0x2ce2, 1, 2},      {0x2ceb, 0x2ced, 1, 2},
    {0x2cf2, 0x2cf2, 1, 1},      {0xa640, 0xa66c, 1, 2},      {0xa680, 0xa69a, 1, 2},
    {0xa722, 0xa72e, 1, 2},      {0xa732, 0xa76e, 1, 2},      {0xa779, 0xa77b, 1, 2},
    {0xa77d, 0xa77d, -35332, 1}, {0xa77e, 0xa786, 1, 2},      {0xa78b, 0xa78b, 1, 1},
    {0xa78d, 0xa78d, -42280, 1}, {0xa790, 0xa792, 1, 2},      {0xa796, 0xa7a8, 1, 2},
    {0xa7aa, 0xa7aa, -42308, 1}, {0xa7ab, 0xa7ab, -42319, 1}, {0xa7ac, 0xa7ac, -42315, 1},
    {0xa7ad, 0xa7ad, -42305, 1}, {0xa7ae, 0xa7ae, -42308, 1}, {0xa7b0, 0xa7b0, -42258, 1},
    {0xa7b1, 0xa7b1, -42282, 1}, {0xa7b2, 0xa7b2, -42261, 1}, {0xa7b3, 0xa7b3, 928, 1},
    {0xa7b4, 0xa7c2, 1, 2},      {0xa7c4, 0xa7c4, -48, 1},    {0xa7c5, 0xa7c5, -42307, 1},
    {0xa7c6, 0xa7c6, -35384, 1}, {0xa7c7, 0xa7c9, 1, 2},      {0xa7d0, 0xa7d0, 1, 1},
    {0xa7d6, 0xa7d8, 1, 2},      {0xa7f5, 0xa7f5, 1, 1},      {0xff21, 0xff3a, 32, 1},
    {0x10400, 0x10427, 40, 1},   {0x104b0, 0x104d3, 40, 1},   {0x10570, 0x1057a, 39, 1},
    {0x1057c, 0x1058a, 39, 1},   {0x1058c, 0x10592, 39, 1},   {0x10594, 0x10595, 39, 1},
    {0x10c80, 0x10cb2, 64, 1},   {0x118a0, 0x118bf, 32, 1},   {0x16e40, 0x16e5f, 32, 1},
    {0x1e900, 0x1e921, 34, 1},
};

// The lower-case code point of `cp`, or -1 when lower() leaves it alone.
int32_t LowerCodePoint(int32_t cp) {
  if (In(cp, 'A', 'Z')) return cp + 32;
  if (cp < 0xc0) return -1;
  const LowerRun* end = kLowerRuns + sizeof(kLowerRuns) / sizeof(kLowerRuns[0]);
  const LowerRun* run = std::upper_bound(kLowerRuns, end, cp,
                                         [](int32_t c, const LowerRun& r) { return c < r.first; });
  if (run == kLowerRuns) return -1;
  --run;
  if (cp > run->last || (cp - run->first) % run->stride != 0) return -1;
  return cp + run->offset;
}

std::string Lower(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const Char c = Decode(s, i);
    const int32_t lower = c.cp < 0 ? -1 : LowerCodePoint(c.cp);
    if (c.cp == 0x130) {
      out += "i\xcc\x87";  // U+0130 -> "i" + U+0307 COMBINING DOT ABOVE
    } else if (lower >= 0) {
      Encode(lower, &out);
    } else {
      out.append(s.data() + i, c.len);
    }
    i += c.len;
  }
  return out;
}

// str.isspace(): ASCII \t..\r, \x1c..\x1f, ' ', and the Unicode ones.
bool IsPySpace(int32_t cp) {
  return In(cp, 0x09, 0x0d) || In(cp, 0x1c, 0x20) || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
         In(cp, 0x2000, 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
         cp == 0x3000;
}

// string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ (ASCII bytes never
// occur inside a multi-byte UTF-8 character, so removing bytes is safe).
std::string RemovePunctuation(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const bool punct = (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
                       (c >= '{' && c <= '~');
    if (!punct) out.push_back(c);
  }
  return out;
}

// re.sub(r"\b(a|an|the)\b", " ", s): with \b between a word character and a
// non-word one, a match is exactly a maximal run of word characters that
// equals a, an or the. Python's \w on str is [\pL\pN_].
std::string RemoveArticles(absl::string_view s) {
  static const LazyRE2 kWord = {"([\\pL\\pN_]+)"};
  std::string out;
  out.reserve(s.size());
  re2::StringPiece input(s.data(), s.size());
  re2::StringPiece word;
  const char* copied = s.data();
  while (RE2::FindAndConsume(&input, *kWord, &word)) {
    out.append(copied, word.data() - copied);
    const absl::string_view w(word.data(), word.size());
    if (w == "a" || w == "an" || w == "the") {
      out.push_back(' ');
    } else {
      out.append(w.data(), w.size());
    }
    copied = word.data() + word.size();
    if (word.empty()) break;  // cannot happen with '+', but never loop forever
  }
  out.append(copied, s.data() + s.size() - copied);
  return out;
}

// " ".join(s.split()) with Python's whitespace.
std::string FixWhitespace(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (size_t i = 0; i < s.size();) {
    const Char c = Decode(s, i);
    if (c.cp >= 0 && IsPySpace(c.cp)) {
      pending_space = !out.empty();
    } else {
      if (pending_space) out.push_back(' ');
      pending_space = false;
      out.append(s.data() + i, c.len);
    }
    i += c.len;
  }
  return out;
}

double F1(const std::string& pred, const std::string& gold) {
  const std::vector<absl::string_view> p = absl::StrSplit(pred, ' ', absl::SkipEmpty());
  const std::vector<absl::string_view> g = absl::StrSplit(gold, ' ', absl::SkipEmpty());
  std::map<absl::string_view, int64_t> counts;
  for (absl::string_view t : g) ++counts[t];
  int64_t same = 0;
  for (absl::string_view t : p) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  if (same == 0) return 0.0;
  // Same operation order as SQuAD's f1_score, so the doubles agree bit for bit.
  const double precision = 1.0 * static_cast<double>(same) / static_cast<double>(p.size());
  const double recall = 1.0 * static_cast<double>(same) / static_cast<double>(g.size());
  return (2 * precision * recall) / (precision + recall);
}

}  // namespace

std::string QaPrediction(absl::string_view generation) {
  size_t start = generation.find_first_not_of('\n');
  if (start == absl::string_view::npos) return "";
  absl::string_view line = generation.substr(start);
  line = line.substr(0, line.find('\n'));
  return std::string(datasets::PyStrip(line));
}

std::string NormalizeAnswer(absl::string_view s) {
  return FixWhitespace(RemoveArticles(RemovePunctuation(Lower(s))));
}

double ExactMatch(absl::string_view prediction, absl::Span<const std::string> golds) {
  const std::string pred = NormalizeAnswer(QaPrediction(prediction));
  double score = 0.0;
  for (const std::string& gold : golds) {
    if (pred == NormalizeAnswer(gold)) score = 1.0;
  }
  return score;
}

double TokenF1(absl::string_view prediction, absl::Span<const std::string> golds) {
  const std::string pred = NormalizeAnswer(QaPrediction(prediction));
  double score = 0.0;
  for (const std::string& gold : golds) score = std::max(score, F1(pred, NormalizeAnswer(gold)));
  return score;
}

double SubstringMatch(absl::string_view prediction, absl::Span<const std::string> golds) {
  const std::string pred = NormalizeAnswer(prediction);
  double score = 0.0;
  for (const std::string& gold : golds) {
    if (absl::StrContains(pred, NormalizeAnswer(gold))) score = 1.0;
  }
  return score;
}

}  // namespace focal::tasks
