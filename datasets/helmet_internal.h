// SPDX-License-Identifier: Apache-2.0
// Plumbing of the HELMET generators (internal to focal_generators).
#ifndef FOCAL_DATASETS_HELMET_INTERNAL_H_
#define FOCAL_DATASETS_HELMET_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "datasets/generator.h"

namespace focal::datasets {

struct CsvRow {
  std::vector<std::string> fields;
  int64_t line = 0;  // 1-based line where the row starts
};

// Rows as Python's csv.reader reads them (quotechar '"', doubled quotes
// inside quoted fields, quoted fields may span lines, "\r\n" or "\n" line
// ends; skip_initial_space: spaces after a delimiter are dropped). An
// unterminated quote is an error naming the file and line.
absl::StatusOr<std::vector<CsvRow>> ParseCsv(absl::string_view text, absl::string_view path,
                                             char delimiter, bool skip_initial_space);

inline constexpr int64_t kHelmetTestSamples = 100;  // max_test_samples of recall and RAG
inline constexpr int64_t kHelmetRagMaxNewTokens = 20;
inline constexpr absl::string_view kHelmetRagInstruction =
    "Use the given documents to write a concise and short answer to the question. Write your "
    "answer in the following format:\nAnswer: [answer]\n\n";

// HELMET's RAG passage: "Document (Title: {title}): {text}".
std::string HelmetPassage(absl::string_view title, absl::string_view text);

// HELMET's test keys: random.seed(seed); random.sample(sorted(set(keys)),
// min(n, len)); returned sorted (HELMET keeps the drawn items in file order).
std::vector<std::string> HelmetTestKeys(std::vector<std::string> keys, uint64_t seed,
                                        int64_t n = kHelmetTestSamples);

// Tokens of `text` without the BOS the counter adds (a piece's share of a
// joined prompt, up to merges at the joins).
absl::StatusOr<int64_t> PieceTokens(const GeneratorOptions& o, absl::string_view text, int64_t bos);

// The largest n in [lo, hi] with fits(n) (fits monotone, fits(lo) true).
template <typename F>
absl::StatusOr<int64_t> LargestFitting(int64_t lo, int64_t hi, F fits) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    FOCAL_ASSIGN_OR_RETURN(bool ok, fits(mid));
    if (ok) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The largest n in [lo, hi] whose prompt fits `budget`, where `count(n)` is
// the exact token count of the prompt with n items (monotone; lo - 1 when
// count(lo) does not fit)
// and item_tokens(k) the k-th item's own count: an estimate from the summed
// item counts, calibrated once by the exact count at that estimate (joins
// merge or split a token or so per item), then galloping and bisection from
// there. A 128K prompt costs a handful of exact counts.
template <typename Count, typename Item>
absl::StatusOr<int64_t> FitItems(int64_t lo, int64_t hi, int64_t budget, Count count,
                                 Item item_tokens) {
  FOCAL_ASSIGN_OR_RETURN(const int64_t base, count(lo));
  if (base > budget) return lo - 1;  // not even `lo` items fit
  auto estimate = [&](double bias) -> absl::StatusOr<int64_t> {
    int64_t g = lo;
    double used = static_cast<double>(base);
    while (g < hi) {
      FOCAL_ASSIGN_OR_RETURN(int64_t t, item_tokens(g));
      if (used + static_cast<double>(t) + bias > static_cast<double>(budget)) break;
      used += static_cast<double>(t) + bias;
      ++g;
    }
    return g;
  };
  auto fits = [&](int64_t n) -> absl::StatusOr<bool> {
    FOCAL_ASSIGN_OR_RETURN(int64_t t, count(n));
    return t <= budget;
  };
  FOCAL_ASSIGN_OR_RETURN(int64_t g, estimate(0));
  if (g > lo) {
    FOCAL_ASSIGN_OR_RETURN(int64_t exact, count(g));
    double summed = static_cast<double>(base);
    for (int64_t k = lo; k < g; ++k) {
      FOCAL_ASSIGN_OR_RETURN(int64_t t, item_tokens(k));
      summed += static_cast<double>(t);
    }
    FOCAL_ASSIGN_OR_RETURN(
        g, estimate((static_cast<double>(exact) - summed) / static_cast<double>(g - lo)));
  }
  FOCAL_ASSIGN_OR_RETURN(bool ok, fits(g));
  int64_t step = 1;
  if (ok) {  // gallop up, then bisect
    while (g < hi) {
      const int64_t next = std::min(hi, g + step);
      FOCAL_ASSIGN_OR_RETURN(bool f, fits(next));
      if (!f) return LargestFitting(g, next - 1, fits);
      g = next;
      step *= 2;
    }
    return g;
  }
  while (true) {  // gallop down, then bisect
    const int64_t next = std::max(lo, g - step);
    if (next == lo) return LargestFitting(lo, g - 1, fits);
    FOCAL_ASSIGN_OR_RETURN(bool f, fits(next));
    if (f) return LargestFitting(next, g - 1, fits);
    g = next;
    step *= 2;
  }
}

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_HELMET_INTERNAL_H_
