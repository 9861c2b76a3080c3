// SPDX-License-Identifier: Apache-2.0
#include "datasets/ruler_common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/check.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/status_macros.h"

namespace focal::datasets::ruler {
namespace {

// CPython's random.sample(): the pool method for small populations, else
// the set method; the threshold as in Lib/random.py.
int64_t SampleSetSize(int64_t k) {
  int64_t setsize = 21;
  if (k > 5) {
    setsize += static_cast<int64_t>(
        std::pow(4.0, std::ceil(std::log(static_cast<double>(k * 3)) / std::log(4.0))));
  }
  return setsize;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a64(absl::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Byte length of the Python-whitespace character (str.isspace(), which is
// what re's \s matches in a str pattern) starting at s[0], or 0.
size_t WhitespaceAt(absl::string_view s) {
  if (s.empty()) return 0;
  const unsigned char c = static_cast<unsigned char>(s[0]);
  if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
  if (s.size() >= 2 && c == 0xc2) {
    const unsigned char d = static_cast<unsigned char>(s[1]);
    if (d == 0x85 || d == 0xa0) return 2;  // U+0085, U+00A0
  }
  if (s.size() >= 3) {
    const absl::string_view t = s.substr(0, 3);
    if (t[0] == '\xe2' && t[1] == '\x80') {
      const unsigned char b = static_cast<unsigned char>(t[2]);
      // U+2000..U+200A, U+2028, U+2029, U+202F
      if ((b >= 0x80 && b <= 0x8a) || b == 0xa8 || b == 0xa9 || b == 0xaf) return 3;
    }
    if (t == "\xe1\x9a\x80" || t == "\xe2\x81\x9f" || t == "\xe3\x80\x80") return 3;
  }
  return 0;
}

}  // namespace

// --- Templates -----------------------------------------------------------------

std::string FormatTemplate(absl::string_view tmpl, absl::Span<const Field> fields,
                           size_t* context_offset) {
  std::string out;
  bool context_seen = false;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    const size_t open = tmpl.find('{', pos);
    if (open == absl::string_view::npos) {
      absl::StrAppend(&out, tmpl.substr(pos));
      break;
    }
    const size_t close = tmpl.find('}', open);
    FOCAL_CHECK(close != absl::string_view::npos);
    absl::StrAppend(&out, tmpl.substr(pos, open - pos));
    const absl::string_view name = tmpl.substr(open + 1, close - open - 1);
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (f.name == name) field = &f;
    }
    FOCAL_CHECK(field != nullptr);
    if (name == "context" && !context_seen) {
      context_seen = true;
      if (context_offset != nullptr) *context_offset = out.size();
    }
    absl::StrAppend(&out, field->value);
    pos = close + 1;
  }
  return out;
}

// --- Random draws ----------------------------------------------------------------

uint64_t SampleSeed(uint64_t seed, absl::string_view task, int64_t index) {
  return SplitMix64(SplitMix64(seed ^ Fnv1a64(task)) ^ static_cast<uint64_t>(index));
}

int64_t RandInt(PyRandom& rng, int64_t a, int64_t b) { return a + rng.RandBelow(b - a + 1); }

std::vector<int64_t> SampleIndices(PyRandom& rng, int64_t n, int64_t k) {
  FOCAL_CHECK(k >= 0 && k <= n);
  std::vector<int64_t> result(k);
  if (n <= SampleSetSize(k)) {
    std::vector<int64_t> pool(n);
    for (int64_t i = 0; i < n; ++i) pool[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = rng.RandBelow(n - i);
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
    return result;
  }
  std::vector<bool> selected(n, false);
  for (int64_t i = 0; i < k; ++i) {
    int64_t j = rng.RandBelow(n);
    while (selected[j]) j = rng.RandBelow(n);
    selected[j] = true;
    result[i] = j;
  }
  return result;
}

std::string RandomLetters(PyRandom& rng, char first, int k) {
  std::string s;
  for (int i = 0; i < k; ++i) s.push_back(static_cast<char>(first + rng.ChoiceIndex(26)));
  return s;
}

std::string RandomNumber(PyRandom& rng) { return absl::StrCat(RandInt(rng, 1000000, 9999999)); }

std::string RandomUuid(PyRandom& rng) {
  // getrandbits(128) fills 32-bit words from the least significant one.
  uint64_t words[4];
  for (uint64_t& w : words) w = rng.NextU32();
  uint64_t lo = words[0] | (words[1] << 32);
  uint64_t hi = words[2] | (words[3] << 32);
  lo &= ~(uint64_t{0xc000} << 48);  // variant RFC 4122
  lo |= uint64_t{0x8000} << 48;
  hi &= ~uint64_t{0xf000};  // version 4
  hi |= uint64_t{4} << 12;
  const std::string hex = absl::StrFormat("%016x%016x", hi, lo);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20));
}

// --- Data ------------------------------------------------------------------------

std::string DataPath(absl::string_view configured, absl::string_view bundled_rel) {
  if (!configured.empty()) return std::string(configured);
  return absl::StrCat(AssetRoot(), "/", bundled_rel);
}

std::string WordList::Pair(int64_t i) const {
  const int64_t n = static_cast<int64_t>(nouns.size());
  return absl::StrCat(adjectives[i / n], "-", nouns[i % n]);
}

absl::StatusOr<WordList> LoadWordList(const GeneratorOptions& options) {
  const std::string path = DataPath(options.word_list, "datasets/words/ruler_words.txt");
  FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  WordList list;
  std::vector<std::string>* section = nullptr;
  int64_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    if (line == "[adjectives]") {
      section = &list.adjectives;
      continue;
    }
    if (line == "[nouns]") {
      section = &list.nouns;
      continue;
    }
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": ", what));
    };
    if (section == nullptr) return error("a word before the first [adjectives] or [nouns] line");
    for (char c : line) {
      if (c < 'a' || c > 'z') {
        return error(absl::StrCat("'", line, "' is not a lower-case word (letters a-z only)"));
      }
    }
    section->emplace_back(line);
  }
  for (auto* words : {&list.adjectives, &list.nouns}) {
    std::sort(words->begin(), words->end());
    auto dup = std::adjacent_find(words->begin(), words->end());
    if (dup != words->end()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": '", *dup, "' is listed twice"));
    }
  }
  // cwe's one-shot example draws 40 distinct single words; keys need pairs.
  if (list.adjectives.size() < 10 || list.nouns.size() < 10) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": needs at least 10 adjectives and 10 nouns, has ",
                     list.adjectives.size(), " and ", list.nouns.size()));
  }
  std::set_union(list.adjectives.begin(), list.adjectives.end(), list.nouns.begin(),
                 list.nouns.end(), std::back_inserter(list.singles));
  return list;
}

std::vector<std::string> CollapseAndSplitWords(absl::string_view text) {
  std::vector<std::string> words(1);
  size_t i = 0;
  while (i < text.size()) {
    if (const size_t n = WhitespaceAt(text.substr(i)); n > 0) {
      // A run of whitespace is one " ", i.e. one word boundary.
      while (i < text.size()) {
        const size_t m = WhitespaceAt(text.substr(i));
        if (m == 0) break;
        i += m;
      }
      words.emplace_back();
      continue;
    }
    words.back().push_back(text[i]);
    ++i;
  }
  return words;
}

absl::StatusOr<std::vector<std::string>> LoadEssayWords(const GeneratorOptions& options) {
  const std::string path =
      DataPath(options.essay_haystack, "datasets/samples/haystack_essays.json");
  FOCAL_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  FOCAL_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(contents, path));
  const JsonValue* text = doc.Find("text");
  if (!doc.is_object() || text == nullptr || !text->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the essay haystack must be a JSON object {\"text\": \"...\"}"));
  }
  std::vector<std::string> words = CollapseAndSplitWords(text->string_value());
  int64_t nonempty = 0;
  for (const std::string& w : words) nonempty += w.empty() ? 0 : 1;
  if (nonempty == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the essay haystack has no words"));
  }
  return words;
}

std::vector<absl::string_view> SplitSentences(absl::string_view text) {
  std::vector<absl::string_view> sentences;
  size_t start = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if ((c == '.' || c == '?' || c == '!') && text[i + 1] == ' ') {
      sentences.push_back(text.substr(start, i + 1 - start));
      start = i + 2;
      ++i;
    }
  }
  if (start < text.size()) sentences.push_back(text.substr(start));
  return sentences;
}

std::string JoinInts(absl::Span<const int64_t> v) { return absl::StrJoin(v, ","); }

// --- Length fitting ----------------------------------------------------------------

absl::StatusOr<FitResult> FitUnits(const std::function<absl::StatusOr<Candidate>(int64_t)>& render,
                                   const TokenCounter& count, int64_t budget, int64_t min_units,
                                   int64_t max_units, int64_t guess, double tokens_per_unit,
                                   bool exact) {
  struct Point {
    int64_t units = 0;
    int64_t tokens = 0;
  };
  std::optional<FitResult> lo;  // largest size known to fit
  std::optional<Point> hi;      // smallest size known not to fit
  std::optional<Point> prev;
  double rate = tokens_per_unit;
  bool bisect = false;
  int64_t n = std::clamp(guess, min_units, max_units);
  while (true) {
    FOCAL_ASSIGN_OR_RETURN(Candidate c, render(n));
    FOCAL_ASSIGN_OR_RETURN(const int64_t t, count(c.input));
    if (t < 0) return absl::InternalError(absl::StrCat("count_tokens returned ", t));
    // Tokens per unit: the secant across the bracket when there is one, else
    // through the last two points, else RULER's estimate (prompt / units).
    // Samples drawn at nearby sizes differ by more than the units between
    // them (other words, other documents), so a secant over fewer than
    // max(4, 1%) units is noise and is not used.
    const Point here{n, t};
    const Point* a = nullptr;
    Point other;
    if (t <= budget && hi.has_value()) {
      other = *hi;
      a = &other;
    } else if (t > budget && lo.has_value()) {
      other = Point{lo->units, lo->tokens};
      a = &other;
    } else if (prev.has_value()) {
      other = *prev;
      a = &other;
    }
    if (a != nullptr && std::abs(a->units - here.units) >= std::max<int64_t>(4, here.units / 100)) {
      const double s =
          static_cast<double>(here.tokens - a->tokens) / static_cast<double>(here.units - a->units);
      if (s > 0) rate = s;
    }
    if (rate <= 0) rate = static_cast<double>(t) / static_cast<double>(std::max<int64_t>(n, 1));
    prev = here;

    if (t <= budget) {
      lo.emplace();
      lo->units = n;
      lo->tokens = t;
      lo->candidate = std::move(c);
      if (!exact && static_cast<double>(budget - t) < std::max(1.0, rate)) {
        lo->stop = "room_below_one_unit";
        break;
      }
      if (n >= max_units) {
        lo->stop = "max_units";
        break;
      }
    } else {
      hi = here;
      if (n <= min_units) {
        return absl::InvalidArgumentError(absl::StrCat(
            "length too small: the smallest prompt (", min_units, " haystack units) has ", t,
            " tokens, more than the ", budget, " left after the tokens to generate"));
      }
    }
    if (lo && hi && hi->units - lo->units <= 1) {
      lo->stop = "next_unit_overflows";
      break;
    }

    int64_t next;
    if (lo && hi) {
      if (bisect) {
        next = lo->units + (hi->units - lo->units) / 2;
      } else {
        next = lo->units +
               static_cast<int64_t>(std::floor(static_cast<double>(budget - lo->tokens) / rate));
      }
      next = std::clamp(next, lo->units + 1, hi->units - 1);
      const int64_t width = hi->units - lo->units;
      // Interpolation that leaves a wide bracket alternates with bisection.
      bisect = !bisect && width > 4;
    } else if (lo) {
      const double step = std::floor(static_cast<double>(budget - lo->tokens) / rate);
      next = lo->units + std::max<int64_t>(1, static_cast<int64_t>(step));
      next = std::min(next, max_units);
    } else {
      const double step = std::ceil(static_cast<double>(hi->tokens - budget) / rate);
      next = hi->units - std::max<int64_t>(1, static_cast<int64_t>(step));
      next = std::max(next, min_units);
    }
    n = next;
  }
  lo->tokens_per_unit = rate;
  return std::move(*lo);
}

absl::StatusOr<std::vector<GenerationSample>> BuildSamples(const TaskConfig& task, int64_t length,
                                                           const GeneratorOptions& options,
                                                           const FamilyPlan& plan) {
  const int64_t budget = length - task.tokens_to_generate;
  std::vector<GenerationSample> samples;
  samples.reserve(options.num_samples);
  int64_t start_units = plan.probe_units;
  double rate = 0;
  for (int64_t i = 0; i < options.num_samples; ++i) {
    auto render = [&](int64_t units) { return plan.render(i, units); };
    auto fit = FitUnits(render, options.count_tokens, budget, plan.min_units(i), plan.max_units,
                        start_units, rate, plan.exact);
    if (!fit.ok()) {
      return Annotate(fit.status(), absl::StrCat(task.name, " at length ", length, ", sample ", i,
                                                 " (", plan.unit_name, ")"));
    }
    if (i == 0) {  // later samples start from sample 0's size and rate
      start_units = fit->units;
      rate = fit->tokens_per_unit;
    }
    if (fit->units >= plan.max_units &&
        static_cast<double>(budget - fit->tokens) >= std::max(1.0, fit->tokens_per_unit)) {
      return absl::FailedPreconditionError(absl::StrCat(
          task.name, " at length ", length, ": the data cannot fill the length (at most ",
          plan.max_units, " ", plan.unit_name, " give ", fit->tokens, " of ", budget, " tokens)"));
    }
    GenerationSample s;
    s.task = std::string(task.name);
    s.length = length;
    s.index = i;
    s.input = std::move(fit->candidate.input);
    s.outputs = std::move(fit->candidate.outputs);
    s.max_new_tokens = task.tokens_to_generate;
    s.meta = std::move(fit->candidate.meta);
    s.meta["seed"] = absl::StrCat(options.seed);
    s.meta["sample_seed"] = absl::StrCat(SampleSeed(options.seed, task.name, i));
    s.meta["haystack_units"] = absl::StrCat(fit->units);
    s.meta["input_tokens"] = absl::StrCat(fit->tokens);
    s.meta["slack_tokens"] = absl::StrCat(budget - fit->tokens);
    s.meta["fit_tokens_per_unit"] = absl::StrFormat("%.2f", fit->tokens_per_unit);
    s.meta["fit_stop"] = fit->stop;
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace focal::datasets::ruler
