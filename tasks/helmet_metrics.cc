// SPDX-License-Identifier: Apache-2.0
#include "tasks/helmet_metrics.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "datasets/text_util.h"
#include "tasks/qa_metrics.h"
#include "tasks/ruler_metrics.h"

namespace focal::tasks {
namespace {

// The position of the first case-insensitive match of `needle` (ASCII case
// folding: HELMET's prefixes are ASCII), or npos.
size_t FindIgnoreCase(absl::string_view hay, absl::string_view needle) {
  if (needle.size() > hay.size()) return absl::string_view::npos;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    if (absl::EqualsIgnoreCase(hay.substr(i, needle.size()), needle)) return i;
  }
  return absl::string_view::npos;
}

absl::string_view LineFrom(absl::string_view s, size_t begin) {
  s.remove_prefix(begin);
  return s.substr(0, s.find('\n'));
}

double Helmet(absl::string_view prefix, absl::string_view generation,
              absl::Span<const std::string> golds, bool substring) {
  const std::string output = absl::StrCat(prefix, generation);
  const std::string parsed = HelmetParseOutput(output, prefix);
  if (!substring) return ExactMatch(parsed, golds);
  return std::max(SubstringMatch(output, golds), SubstringMatch(parsed, golds));
}

}  // namespace

std::string HelmetParseOutput(absl::string_view output, absl::string_view prefix) {
  const size_t at = FindIgnoreCase(output, prefix);
  absl::string_view s = datasets::PyStrip(
      at != absl::string_view::npos ? LineFrom(output, at + prefix.size()) : LineFrom(output, 0));
  if (absl::StartsWithIgnoreCase(s, prefix)) s.remove_prefix(prefix.size());
  return std::string(datasets::PyStrip(s));
}

double HelmetIclExactMatch(absl::string_view generation, absl::Span<const std::string> golds) {
  return Helmet("label:", generation, golds, /*substring=*/false);
}
double HelmetKvSubstringMatch(absl::string_view generation, absl::Span<const std::string> golds) {
  return Helmet("Corresponding value:", generation, golds, /*substring=*/true);
}
double HelmetRagSubstringMatch(absl::string_view generation, absl::Span<const std::string> golds) {
  return Helmet("Answer:", generation, golds, /*substring=*/true);
}
double HelmetRulerRecall(absl::string_view output, absl::Span<const std::string> golds) {
  if (golds.empty()) return 0;
  const std::string out = PythonLower(output);
  int64_t n = 0;
  for (const std::string& g : golds) n += out.find(PythonLower(g)) != std::string::npos;
  return static_cast<double>(n) / static_cast<double>(golds.size());
}

}  // namespace focal::tasks
