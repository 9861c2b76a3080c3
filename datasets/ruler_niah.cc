// SPDX-License-Identifier: Apache-2.0
// RULER's needle-in-a-haystack family (scripts/data/synthetic/niah.py):
// niah_single_1..3, niah_multikey_1..3, niah_multivalue, niah_multiquery.
//
// Per sample, with the sample's own generator r, in RULER's order:
//  1. for each of max(num_keys, num_queries) keys: key = draw(key type), then
//     num_values values = draw(value type), one needle
//     "One of the special magic {type_needle_v} for {key} is: {value}." each;
//  2. the needles are shuffled with a fresh random.Random(seed);
//  3. the haystack:
//     essay:  the first N words (the essay repeated if needed), stripped and
//             split into sentences; depths = r.sample(DEPTHS, #needles), DEPTHS
//             the 40 rounded points of linspace(0, 100, 40); each needle goes
//             before sentence int(#sentences * depth / 100) (positions sorted,
//             needles in shuffled order) and everything is joined by " ";
//     noise:  N copies of the noise sentence;
//     needle: N distractor needles with fresh keys and values;
//             for noise/needle, r.sample(range(N), #needles) sorted descending
//             gives the insertion indices, and lines are joined by "\n";
//  4. the queried keys: r.sample(range(#keys), num_queries); the golds are
//     their values in that order; the query is "a, b, c, and d".
// The template gets RULER's singular rewrite when one value is asked.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "datasets/ruler_common.h"

namespace focal::datasets::ruler {
namespace {

constexpr int kNumDepths = 40;

// np.round(np.linspace(0, 100, 40)).astype(int)[i]: 100 * i / 39 is never
// within rounding error of a .5, so round-half-up on integers is exact.
int64_t Depth(int64_t i) { return (200 * i + 39) / 78; }

absl::string_view TypeName(NeedleType t) {
  switch (t) {
    case NeedleType::kWords:
      return "words";
    case NeedleType::kNumbers:
      return "numbers";
    case NeedleType::kUuids:
      return "uuids";
  }
  return "";
}

struct Needle {
  std::string text;
  int64_t key = 0;  // index into keys
};

class NiahGenerator {
 public:
  NiahGenerator(const TaskConfig& task, const GeneratorOptions& options, WordList words,
                std::vector<std::string> essay)
      : task_(task), options_(options), words_(std::move(words)), essay_(std::move(essay)) {}

  absl::StatusOr<Candidate> Render(int64_t index, int64_t units) const;

 private:
  std::string Draw(PyRandom& r, NeedleType type) const {
    switch (type) {
      case NeedleType::kWords:
        return words_.Pair(r.RandBelow(words_.num_pairs()));
      case NeedleType::kNumbers:
        return RandomNumber(r);
      case NeedleType::kUuids:
        return RandomUuid(r);
    }
    return "";
  }
  std::string NeedleText(absl::string_view key, absl::string_view value) const {
    return absl::StrCat("One of the special magic ", TypeName(task_.value_type), " for ", key,
                        " is: ", value, ".");
  }
  // Essay haystack: context and, per needle (in context order), its depth and
  // byte offset in the context.
  std::string EssayContext(PyRandom& r, const std::vector<Needle>& needles, int64_t units,
                           std::vector<std::string>* depths, std::vector<int64_t>* offsets) const;
  // Noise / needle haystack: lines with the needles inserted, joined by "\n".
  std::string LineContext(PyRandom& r, const std::vector<Needle>& needles,
                          const std::vector<std::string>& keys, int64_t units,
                          std::vector<std::string>* depths, std::vector<int64_t>* offsets) const;

  const TaskConfig& task_;
  const GeneratorOptions& options_;
  WordList words_;
  std::vector<std::string> essay_;
};

std::string NiahGenerator::EssayContext(PyRandom& r, const std::vector<Needle>& needles,
                                        int64_t units, std::vector<std::string>* depths,
                                        std::vector<int64_t>* offsets) const {
  // " ".join((haystack * repeats)[:units]).strip()
  std::string text;
  const int64_t n = static_cast<int64_t>(essay_.size());
  for (int64_t i = 0; i < units; ++i) {
    if (i > 0) text.push_back(' ');
    absl::StrAppend(&text, essay_[i % n]);
  }
  const std::string stripped(absl::StripAsciiWhitespace(text));
  const std::vector<absl::string_view> sents = SplitSentences(stripped);
  const int64_t num_sents = static_cast<int64_t>(sents.size());
  std::vector<std::pair<int64_t, int64_t>> at;  // (sentence position, depth)
  for (int64_t i : r.Sample(kNumDepths, static_cast<int64_t>(needles.size()))) {
    const int64_t d = Depth(i);
    at.emplace_back(
        static_cast<int64_t>(static_cast<double>(num_sents) * (static_cast<double>(d) / 100.0)), d);
  }
  std::stable_sort(at.begin(), at.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // [segment, needle, segment, needle, ..., segment] joined by " " (a segment
  // may be empty: RULER's double spaces then, and a leading space at depth 0).
  std::string context;
  int64_t last = 0;
  for (size_t k = 0; k <= needles.size(); ++k) {
    const int64_t next = k < needles.size() ? at[k].first : num_sents;
    if (k > 0) context.push_back(' ');
    for (int64_t s = last; s < next; ++s) {
      if (s > last) context.push_back(' ');
      absl::StrAppend(&context, sents[s]);
    }
    last = next;
    if (k < needles.size()) {
      context.push_back(' ');
      offsets->push_back(static_cast<int64_t>(context.size()));
      depths->push_back(absl::StrCat(at[k].second));
      absl::StrAppend(&context, needles[k].text);
    }
  }
  return context;
}

std::string NiahGenerator::LineContext(PyRandom& r, const std::vector<Needle>& needles,
                                       const std::vector<std::string>& keys, int64_t units,
                                       std::vector<std::string>* depths,
                                       std::vector<int64_t>* offsets) const {
  std::vector<std::string> lines;
  lines.reserve(units + needles.size());
  if (task_.haystack == Haystack::kNoise) {
    lines.assign(units, std::string(kNoiseSentence));
  } else {
    for (int64_t i = 0; i < units; ++i) {
      // A distractor never reuses a needle's key (redrawn; RULER's key space
      // is large enough not to care).
      std::string key = Draw(r, task_.key_type);
      while (std::find(keys.begin(), keys.end(), key) != keys.end()) key = Draw(r, task_.key_type);
      lines.push_back(NeedleText(key, Draw(r, task_.value_type)));
    }
  }
  std::vector<int64_t> where = r.Sample(units, static_cast<int64_t>(needles.size()));
  std::sort(where.begin(), where.end(), std::greater<>());
  std::vector<int> is_needle(lines.size(), -1);
  for (size_t k = 0; k < needles.size(); ++k) {  // list.insert, highest index first
    lines.insert(lines.begin() + where[k], needles[k].text);
    is_needle.insert(is_needle.begin() + where[k], static_cast<int>(k));
  }
  std::string context;
  const int64_t total = static_cast<int64_t>(lines.size());
  for (int64_t i = 0; i < total; ++i) {
    if (i > 0) context.push_back('\n');
    if (is_needle[i] >= 0) {
      offsets->push_back(static_cast<int64_t>(context.size()));
      depths->push_back(
          absl::StrFormat("%.1f", 100.0 * static_cast<double>(i) / static_cast<double>(total)));
    }
    absl::StrAppend(&context, lines[i]);
  }
  return context;
}

absl::StatusOr<Candidate> NiahGenerator::Render(int64_t index, int64_t units) const {
  PyRandom r(SampleSeed(options_.seed, task_.name, index));
  const int num_keys = std::max(task_.num_keys, task_.num_queries);
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  std::vector<Needle> needles;
  for (int k = 0; k < num_keys; ++k) {
    std::string key = Draw(r, task_.key_type);
    while (std::find(keys.begin(), keys.end(), key) != keys.end()) key = Draw(r, task_.key_type);
    keys.push_back(std::move(key));
    values.emplace_back();
    for (int v = 0; v < task_.num_values; ++v) {
      values.back().push_back(Draw(r, task_.value_type));
      needles.push_back({NeedleText(keys.back(), values.back().back()), k});
    }
  }
  PyRandom fixed(options_.seed);  // RULER: random.Random(args.random_seed).shuffle(needles)
  Shuffle(fixed, needles);

  std::vector<std::string> depths;
  std::vector<int64_t> offsets;
  const std::string context = task_.haystack == Haystack::kEssay
                                  ? EssayContext(r, needles, units, &depths, &offsets)
                                  : LineContext(r, needles, keys, units, &depths, &offsets);

  std::vector<std::string> query_keys, answers;
  std::vector<int64_t> queried;
  for (int64_t k : r.Sample(num_keys, task_.num_queries)) {
    queried.push_back(k);
    query_keys.push_back(keys[k]);
    for (const std::string& v : values[k]) answers.push_back(v);
  }
  std::string query = query_keys.back();
  if (query_keys.size() > 1) {
    query = absl::StrCat(absl::StrJoin(query_keys.begin(), query_keys.end() - 1, ", "), ", and ",
                         query_keys.back());
  }

  std::string tmpl = absl::StrCat(kNiahTemplate, kNiahAnswerPrefix);
  std::string type_needle_v(TypeName(task_.value_type));
  if (task_.num_queries * task_.num_values == 1) {  // one value asked: singular
    // One str.replace at a time, in RULER's order.
    static constexpr std::pair<absl::string_view, absl::string_view> kSingular[] = {
        {"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}};
    for (const auto& [from, to] : kSingular) tmpl = absl::StrReplaceAll(tmpl, {{from, to}});
    type_needle_v.pop_back();
  }
  size_t context_at = 0;
  Candidate c;
  c.input = FormatTemplate(
      tmpl, {{"type_needle_v", type_needle_v}, {"context", context}, {"query", query}},
      &context_at);
  for (int64_t& o : offsets) o += static_cast<int64_t>(context_at);
  c.outputs = answers;

  std::vector<std::string> value_groups;
  for (const auto& v : values) value_groups.push_back(absl::StrJoin(v, ","));
  c.meta["haystack"] = task_.haystack == Haystack::kEssay   ? "essay"
                       : task_.haystack == Haystack::kNoise ? "noise"
                                                            : "needle";
  c.meta["keys"] = absl::StrJoin(keys, ",");
  c.meta["values"] = absl::StrJoin(value_groups, ";");
  c.meta["query_keys"] = absl::StrJoin(query_keys, ",");
  c.meta["needle_depths"] = absl::StrJoin(depths, ",");
  c.meta["needle_offsets"] = JoinInts(offsets);
  // Byte spans of the queried needles in `input` (their text is unique:
  // keys are distinct and distractors never reuse one), for the attention
  // diagnostics.
  std::vector<std::string> spans;
  for (const Needle& nd : needles) {
    if (std::find(queried.begin(), queried.end(), nd.key) == queried.end()) continue;
    const size_t at = c.input.find(nd.text);
    if (at == std::string::npos) continue;
    spans.push_back(absl::StrCat(at, "-", at + nd.text.size()));
  }
  c.meta["query_needle_spans"] = absl::StrJoin(spans, ",");
  if (task_.haystack == Haystack::kEssay) {
    c.meta["haystack_repeated"] = units > static_cast<int64_t>(essay_.size()) ? "true" : "false";
  }
  return c;
}

}  // namespace

absl::StatusOr<std::vector<GenerationSample>> MakeNiahSamples(const TaskConfig& task,
                                                              int64_t length,
                                                              const GeneratorOptions& options) {
  WordList words;
  if (task.key_type == NeedleType::kWords || task.value_type == NeedleType::kWords) {
    FOCAL_ASSIGN_OR_RETURN(words, LoadWordList(options));
  }
  std::vector<std::string> essay;
  if (task.haystack == Haystack::kEssay) {
    FOCAL_ASSIGN_OR_RETURN(essay, LoadEssayWords(options));
  }
  const NiahGenerator gen(task, options, std::move(words), std::move(essay));
  FamilyPlan plan;
  plan.render = [&](int64_t index, int64_t units) { return gen.Render(index, units); };
  // RULER's search starts at its step size: 500 words, 25 lines.
  const bool essay_haystack = task.haystack == Haystack::kEssay;
  plan.min_units = [&](int64_t) -> int64_t { return essay_haystack ? 1 : 4; };
  plan.probe_units = essay_haystack ? 500 : 25;
  plan.unit_name = essay_haystack ? "essay words" : "haystack lines";
  return BuildSamples(task, length, options, plan);
}

}  // namespace focal::datasets::ruler
