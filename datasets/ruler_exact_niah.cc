// SPDX-License-Identifier: Apache-2.0
// The niah family of RULER's generator (niah.py), draw for draw (see
// ruler_exact.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/py_random.h"
#include "base/status_macros.h"
#include "datasets/ruler_common.h"
#include "datasets/ruler_exact_internal.h"

namespace focal::datasets::ruler_exact {
namespace {

using ::focal::PyRandom;
using ruler::FormatTemplate;

constexpr absl::string_view kNiahPrompt =
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to "
    "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are "
    "all the special magic {type_needle_v} for {query} mentioned in the provided text? The "
    "special magic {type_needle_v} for {query} mentioned in the provided text are";
constexpr absl::string_view kNeedle =
    "One of the special magic {type_needle_v} for {key} is: {value}.";

class Niah {
 public:
  Niah(const Spec& spec, uint64_t seed, const Sources& src)
      : spec_(spec), seed_(seed), src_(src), rng_(seed) {
    num_k_ = std::max(spec.num_k, spec.num_q);
    if (spec.key_type == "words" || spec.value_type == "words") words_ = PairWords(src);
    if (spec.haystack == "essay") haystack_ = ruler::CollapseAndSplitWords(src.essay);
    for (int i = 0; i < 40; ++i) {
      depths_.push_back(static_cast<int64_t>(std::nearbyint(100.0 / 39.0 * i)));
    }
    depths_.back() = 100;
  }

  int64_t incremental(int64_t max_seq_length) const {
    if (spec_.haystack == "essay") return 500;
    return max_seq_length < 4096 ? 5 : 25;
  }
  bool is_essay() const { return spec_.haystack == "essay"; }

  // The fetched boundaries must lie inside the essay they were made for.
  absl::Status CheckSentences() {
    if (!is_essay()) return absl::OkStatus();
    full_ = Strip(absl::StrJoin(haystack_, " "));
    const auto& spans = src_.essay_sentences;
    if (spans.empty() || spans.back().second > static_cast<int64_t>(full_.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec_.name,
                       ": the essay sentence boundaries (ruler/essay_sentences.json) do not fit "
                       "the essay (",
                       full_.size(), " bytes); run bash scripts/fetch_data.sh"));
    }
    return absl::OkStatus();
  }
  int64_t haystack_size() const { return static_cast<int64_t>(haystack_.size()); }

  std::string Random(absl::string_view type) {
    if (type == "numbers") return ruler::RandomNumber(rng_);
    if (type == "words") return words_[rng_.RandBelow(static_cast<int64_t>(words_.size()))];
    return ruler::RandomUuid(rng_);
  }

  absl::StatusOr<std::pair<std::string, std::vector<std::string>>> Make(int64_t num_haystack) {
    std::vector<std::string> keys, needles;
    std::vector<std::vector<std::string>> values;
    for (int k = 0; k < num_k_; ++k) {
      keys.push_back(Random(spec_.key_type));
      std::vector<std::string> value;
      for (int v = 0; v < spec_.num_v; ++v) {
        value.push_back(Random(spec_.value_type));
        needles.push_back(FormatTemplate(
            kNeedle,
            {{"type_needle_v", spec_.value_type}, {"key", keys.back()}, {"value", value.back()}}));
      }
      values.push_back(std::move(value));
    }
    PyRandom fresh(seed_);
    ruler::Shuffle(fresh, needles);
    const int64_t n_needles = static_cast<int64_t>(needles.size());

    std::string context;
    if (is_essay()) {
      const int64_t n = std::min(num_haystack, haystack_size());
      const std::vector<absl::string_view> sents = Sentences(n);
      const int64_t ns = static_cast<int64_t>(sents.size());
      std::vector<int64_t> pos;
      for (int64_t i : rng_.Sample(static_cast<int64_t>(depths_.size()), n_needles)) {
        pos.push_back(static_cast<int64_t>(static_cast<double>(ns) *
                                           (static_cast<double>(depths_[i]) / 100.0)));
      }
      std::sort(pos.begin(), pos.end());
      pos.insert(pos.begin(), 0);
      pos.push_back(ns);
      std::vector<std::string> parts;
      for (size_t i = 1; i < pos.size(); ++i) {
        std::vector<absl::string_view> run;
        for (int64_t s = pos[i - 1]; s < std::max(pos[i - 1], pos[i]); ++s) run.push_back(sents[s]);
        parts.push_back(absl::StrJoin(run, " "));
        if (static_cast<int64_t>(i - 1) < n_needles) parts.push_back(needles[i - 1]);
      }
      context = absl::StrJoin(parts, " ");
    } else {
      std::vector<std::string> sentences;
      if (spec_.haystack == "repeat") {
        sentences.assign(std::max<int64_t>(0, num_haystack), std::string(kNoise));
      } else {
        for (int64_t i = 0; i < num_haystack; ++i) {
          std::string key = Random(spec_.key_type);
          std::string value = Random(spec_.value_type);
          sentences.push_back(FormatTemplate(
              kNeedle, {{"type_needle_v", spec_.value_type}, {"key", key}, {"value", value}}));
        }
      }
      if (n_needles > num_haystack) return PyError("Sample larger than population");
      std::vector<int64_t> idx = ruler::SampleIndices(rng_, num_haystack, n_needles);
      std::sort(idx.rbegin(), idx.rend());
      for (int64_t j = 0; j < n_needles; ++j) {
        sentences.insert(sentences.begin() + idx[j], needles[j]);
      }
      context = absl::StrJoin(sentences, "\n");
    }

    const std::vector<int64_t> picked = ruler::SampleIndices(rng_, num_k_, spec_.num_q);
    std::vector<std::string> queries, answers;
    for (int64_t i : picked) {
      queries.push_back(keys[i]);
      for (const std::string& a : values[i]) answers.push_back(a);
    }
    std::string query = queries[0];
    if (queries.size() > 1) {
      query = absl::StrCat(
          absl::StrJoin(std::vector<std::string>(queries.begin(), queries.end() - 1), ", "),
          ", and ", queries.back());
    }
    std::string tmpl(kNiahPrompt);
    std::string type_v(spec_.value_type);
    if (spec_.num_q * spec_.num_v == 1) {
      for (auto [from, to] :
           {std::pair{"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}}) {
        tmpl = absl::StrReplaceAll(tmpl, {{from, to}});
      }
      type_v.pop_back();
    }
    std::string input =
        FormatTemplate(tmpl, {{"type_needle_v", type_v}, {"context", context}, {"query", query}});
    return std::make_pair(std::move(input), std::move(answers));
  }

 private:
  // wonderwords' adjective-noun pairs, sorted and unique as RULER builds
  // them. The adjectives are sorted first; adjectives that share a prefix
  // with their predecessor (e.g. "hot", "hot-blooded") form a cluster whose
  // pairs can interleave, so only a cluster is sorted as joined strings.
  static std::vector<std::string> PairWords(const Sources& src) {
    const std::vector<std::string> adjs = SortedUnique(src.adjectives);
    const std::vector<std::string> nouns = SortedUnique(src.nouns);
    std::vector<std::string> out;
    out.reserve(adjs.size() * nouns.size());
    size_t i = 0;
    while (i < adjs.size()) {
      size_t j = i + 1;
      while (j < adjs.size() && absl::string_view(adjs[j]).substr(0, adjs[i].size()) == adjs[i]) {
        ++j;
      }
      const size_t start = out.size();
      for (size_t a = i; a < j; ++a) {
        for (const std::string& n : nouns) out.push_back(absl::StrCat(adjs[a], "-", n));
      }
      if (j - i > 1) {
        std::sort(out.begin() + start, out.end());
        out.erase(std::unique(out.begin() + start, out.end()), out.end());
      }
      i = j;
    }
    return out;
  }

  // sent_tokenize(" ".join(haystack[:n]).strip()): the fetched boundaries of
  // the whole text that fall inside the prefix.
  std::vector<absl::string_view> Sentences(int64_t n) {
    const std::string prefix = Strip(absl::StrJoin(haystack_.begin(), haystack_.begin() + n, " "));
    const int64_t p = static_cast<int64_t>(prefix.size());
    std::vector<absl::string_view> out;
    const absl::string_view full(full_);
    for (const auto& [a, b] : src_.essay_sentences) {
      if (a >= p) break;
      out.push_back(full.substr(a, std::min(b, p) - a));
    }
    return out;
  }
  static std::string Strip(std::string s) {
    // Only ' ' can be left at the ends of a whitespace-collapsed text.
    const size_t a = s.find_first_not_of(' ');
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(' ') - a + 1);
  }

  const Spec& spec_;
  uint64_t seed_;
  const Sources& src_;
  PyRandom rng_;
  int num_k_;
  std::vector<std::string> words_, haystack_;
  std::vector<int64_t> depths_;
  std::string full_;
};

}  // namespace

absl::StatusOr<std::vector<Sample>> GenerateNiah(const Spec& spec, int64_t max_len, int64_t num,
                                                 uint64_t seed, const Sources& src,
                                                 const CountTokens& count) {
  Niah niah(spec, seed, src);
  FOCAL_RETURN_IF_ERROR(niah.CheckSentences());
  const int64_t inc = niah.incremental(max_len);
  const int64_t t = spec.tokens_to_generate;
  int64_t num_haystack = inc, total = 0;
  while (total + t < max_len) {
    FOCAL_ASSIGN_OR_RETURN(auto made, niah.Make(num_haystack));
    FOCAL_ASSIGN_OR_RETURN(total, count(made.first + absl::StrJoin(made.second, " ")));
    if (total + t > max_len) {
      num_haystack -= inc;
      break;
    }
    if (niah.is_essay() && num_haystack > niah.haystack_size()) {
      num_haystack = niah.haystack_size();
      break;
    }
    num_haystack += inc;
  }
  return SampleLoop(
      spec.name, num, num_haystack, inc, max_len, t,
      [&](int64_t units) { return niah.Make(units); }, count);
}

}  // namespace focal::datasets::ruler_exact
