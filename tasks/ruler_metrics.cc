// SPDX-License-Identifier: Apache-2.0
#include "tasks/ruler_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/utf8.h"
#include "datasets/text_util.h"

namespace focal::tasks {
namespace {

// Decodes the UTF-8 code point at s[i] (advancing i); bytes that do not
// start a valid sequence come back as themselves.
uint32_t NextCodePoint(absl::string_view s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const int len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  if (len == 1 || i + len > s.size()) {
    ++i;
    return c;
  }
  uint32_t cp = c & (0xff >> (len + 1));
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += len;
  return cp;
}

// Python's str.lower() on the scripts RULER's data and answers hold: ASCII,
// Latin-1, Latin Extended-A (İ becomes "i" + U+0307, as Python), Greek
// (with the final-sigma rule) and basic Cyrillic. Other characters are kept.
uint32_t LowerCodePoint(uint32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 0x20;
  if (c >= 0x100 && c <= 0x17f) {
    const bool even_upper = (c <= 0x137 && c != 0x130 && c != 0x131) || (c >= 0x14a && c <= 0x177);
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
    if ((even_upper && c % 2 == 0) || (odd_upper && c % 2 == 1)) return c + 1;
    if (c == 0x178) return 0xff;
    return c;
  }
  if ((c >= 0x391 && c <= 0x3a9 && c != 0x3a2)) return c + 0x20;
  if (c == 0x386) return 0x3ac;
  if (c >= 0x388 && c <= 0x38a) return c + 0x25;
  if (c == 0x38c) return 0x3cc;
  if (c == 0x38e || c == 0x38f) return c + 0x3f;
  if (c >= 0x410 && c <= 0x42f) return c + 0x20;
  if (c >= 0x400 && c <= 0x40f) return c + 0x50;
  return c;
}

bool IsCased(uint32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= 0xc0 && c <= 0x24f && c != 0xd7 && c != 0xf7) || (c >= 0x386 && c <= 0x3ff) ||
         (c >= 0x400 && c <= 0x4ff);
}

}  // namespace

std::string PythonLower(absl::string_view s) {
  std::vector<uint32_t> cps;
  for (size_t i = 0; i < s.size();) cps.push_back(NextCodePoint(s, i));
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const uint32_t c = cps[i];
    if (c == 0x130) {  // İ -> i + combining dot above
      AppendUtf8('i', out);
      AppendUtf8(0x307, out);
    } else if (c == 0x3a3) {  // Σ: ς at the end of a word
      const bool after_cased = i > 0 && IsCased(cps[i - 1]);
      const bool before_cased = i + 1 < cps.size() && IsCased(cps[i + 1]);
      AppendUtf8(after_cased && !before_cased ? 0x3c2 : 0x3c3, out);
    } else {
      AppendUtf8(LowerCodePoint(c), out);
    }
  }
  return out;
}

namespace {

// How many golds occur in the post-processed, lower-cased prediction.
int64_t CountMatches(absl::string_view prediction, absl::Span<const std::string> golds) {
  const std::string pred = PythonLower(RulerPostprocess(prediction));
  int64_t n = 0;
  for (const std::string& gold : golds) {
    if (pred.find(PythonLower(gold)) != std::string::npos) ++n;
  }
  return n;
}

}  // namespace

std::string RulerPostprocess(absl::string_view prediction) {
  std::string s(datasets::PyStrip(prediction));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) <= 0x1f) c = '\n';
  }
  return std::string(datasets::PyStrip(s));
}

double StringMatchAll(absl::string_view prediction, absl::Span<const std::string> golds) {
  if (golds.empty()) return 0.0;
  return static_cast<double>(CountMatches(prediction, golds)) / static_cast<double>(golds.size());
}

double StringMatchPart(absl::string_view prediction, absl::Span<const std::string> golds) {
  return CountMatches(prediction, golds) > 0 ? 1.0 : 0.0;
}

absl::StatusOr<int64_t> EffectiveLength(absl::Span<const int64_t> lengths,
                                        absl::Span<const double> averages, double threshold) {
  if (lengths.size() != averages.size() || lengths.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("effective length: ", lengths.size(),
                                                   " lengths and ", averages.size(),
                                                   " averages (need the same, at least one)"));
  }
  std::vector<std::pair<int64_t, double>> points;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (!std::isfinite(averages[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("effective length: the average at length ", lengths[i], " is not finite"));
    }
    points.emplace_back(lengths[i], averages[i]);
  }
  std::sort(points.begin(), points.end());
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].first == points[i - 1].first) {
      return absl::InvalidArgumentError(
          absl::StrCat("effective length: length ", points[i].first, " given twice"));
    }
  }
  int64_t effective = 0;
  for (const auto& [length, average] : points) {
    if (average < threshold) break;
    effective = length;
  }
  return effective;
}

}  // namespace focal::tasks
