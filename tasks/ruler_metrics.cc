// SPDX-License-Identifier: Apache-2.0
#include "tasks/ruler_metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "datasets/text_util.h"

namespace focal::tasks {
namespace {

// str.lower() for ASCII and the Latin-1 capitals U+00C0..U+00DE (but the
// multiplication sign U+00D7), which UTF-8 encodes as C3 80..C3 9E.
std::string Lower(absl::string_view s) {
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    if (c >= 'A' && c <= 'Z') {
      out[i] = static_cast<char>(c + 32);
    } else if (c == 0xc3 && i + 1 < out.size()) {
      const unsigned char d = static_cast<unsigned char>(out[i + 1]);
      if (d >= 0x80 && d <= 0x9e && d != 0x97) out[i + 1] = static_cast<char>(d + 0x20);
      ++i;
    }
  }
  return out;
}

// How many golds occur in the post-processed, lower-cased prediction.
int64_t CountMatches(absl::string_view prediction, absl::Span<const std::string> golds) {
  const std::string pred = Lower(RulerPostprocess(prediction));
  int64_t n = 0;
  for (const std::string& gold : golds) {
    if (pred.find(Lower(gold)) != std::string::npos) ++n;
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
