// SPDX-License-Identifier: Apache-2.0
// RULER's aggregation tasks: common words extraction (cwe,
// scripts/data/synthetic/common_words_extraction.py) and frequent words
// extraction (fwe, freq_words_extraction.py).
//
// cwe, per sample with generator r (haystack unit: distinct words n):
//  * words: the word list's single words, sorted, shuffled once with
//    random.Random(seed) (RULER: wonderwords nouns+adjectives+verbs);
//  * one example, then the question, each from get_example(k, cr, ur): k
//    words drawn with r.sample from the single words (when n exceeds them:
//    all single words and n - #singles adjective-noun pairs "adj-noun",
//    shuffled with r; RULER switches to a larger English list instead), the
//    first 10 common (repeated cr times), the rest
//    uncommon (ur times), the list shuffled with a fresh random.Random(seed)
//    and numbered "1. w 2. w ...". Below 4096 tokens: example (20, 3, 1),
//    question (n, 6, 1); else example (40, 10, 3), question (n, 30, 3);
//  * the example is the full prompt + " " + its 10 common words numbered;
//    input = example + "\n" + prompt. Golds: the question's 10 common words.
//
// fwe, per sample with generator r (haystack unit: n, the zeta "num_words"):
//  * vocab_size = (length - 50) // 50 coded words of 6 random lowercase
//    letters (r), deduplicated and sorted, shuffled with a fresh
//    random.Random(seed); vocab[0] becomes "..." (noise, the most frequent);
//  * word k (1-based rank) appears int(n * k^-2 / zeta(2)) times; the word
//    list is shuffled with a fresh random.Random(seed) and joined by " ";
//  * golds: vocab[1:4], the three most frequent coded words.
// RULER grows fwe's n linearly by length // 32 and shrinks it per sample; we
// fit n like every other task.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "datasets/ruler_common.h"

namespace focal::datasets::ruler {
namespace {

constexpr int64_t kNumCommon = 10;  // RULER num_cw

// --- cwe -----------------------------------------------------------------------

struct CweExample {
  std::string context;
  std::vector<std::string> common;
};

class CweGenerator {
 public:
  CweGenerator(const TaskConfig& task, int64_t length, const GeneratorOptions& options,
               WordList words)
      : task_(task), length_(length), options_(options), words_(std::move(words)) {
    shuffled_ = words_.singles;
    PyRandom fixed(options_.seed);
    Shuffle(fixed, shuffled_);
  }

  int64_t max_units() const { return static_cast<int64_t>(shuffled_.size()) + words_.num_pairs(); }

  absl::StatusOr<Candidate> Render(int64_t index, int64_t units) const {
    PyRandom r(SampleSeed(options_.seed, task_.name, index));
    const bool small = length_ < 4096;
    const CweExample shot = Example(r, small ? 20 : 40, small ? 3 : 10, small ? 1 : 3);
    const int64_t common_repeats = small ? 6 : 30;
    const int64_t uncommon_repeats = small ? 1 : 3;
    const CweExample question = Example(r, units, common_repeats, uncommon_repeats);
    const std::string tmpl = absl::StrCat(kCweTemplate, kCweAnswerPrefix);
    Candidate c;
    c.input = absl::StrCat(FormatTemplate(tmpl, {{"context", shot.context}, {"query", ""}}), " ",
                           Numbered(shot.common), "\n",
                           FormatTemplate(tmpl, {{"context", question.context}, {"query", ""}}));
    c.outputs = question.common;
    c.meta["num_words"] = absl::StrCat(units);
    c.meta["common_repeats"] = absl::StrCat(common_repeats);
    c.meta["uncommon_repeats"] = absl::StrCat(uncommon_repeats);
    c.meta["word_pool"] =
        units <= static_cast<int64_t>(shuffled_.size()) ? "singles" : "singles+pairs";
    return c;
  }

 private:
  // "1. w 2. w ..."
  static std::string Numbered(const std::vector<std::string>& words) {
    std::string out;
    for (size_t i = 0; i < words.size(); ++i) {
      absl::StrAppend(&out, i == 0 ? "" : " ", i + 1, ". ", words[i]);
    }
    return out;
  }

  // RULER's get_example(num_words, common_repeats, uncommon_repeats, 10).
  CweExample Example(PyRandom& r, int64_t num_words, int64_t common_repeats,
                     int64_t uncommon_repeats) const {
    std::vector<std::string> drawn;
    const int64_t singles = static_cast<int64_t>(shuffled_.size());
    if (num_words <= singles) {
      for (int64_t i : SampleIndices(r, singles, num_words)) drawn.push_back(shuffled_[i]);
    } else {
      // Every single word plus random pairs, shuffled: the prompt grows
      // smoothly with num_words (pairs alone would jump by a token or two per
      // entry at this point).
      for (int64_t i : SampleIndices(r, singles, singles)) drawn.push_back(shuffled_[i]);
      for (int64_t i : SampleIndices(r, words_.num_pairs(), num_words - singles)) {
        drawn.push_back(words_.Pair(i));
      }
      Shuffle(r, drawn);
    }
    CweExample ex;
    ex.common.assign(drawn.begin(), drawn.begin() + kNumCommon);
    std::vector<std::string> list;
    list.reserve(kNumCommon * common_repeats + (num_words - kNumCommon) * uncommon_repeats);
    for (int64_t k = 0; k < common_repeats; ++k) {
      list.insert(list.end(), drawn.begin(), drawn.begin() + kNumCommon);
    }
    for (int64_t k = 0; k < uncommon_repeats; ++k) {
      list.insert(list.end(), drawn.begin() + kNumCommon, drawn.end());
    }
    PyRandom fixed(options_.seed);
    Shuffle(fixed, list);
    ex.context = Numbered(list);
    return ex;
  }

  const TaskConfig& task_;
  int64_t length_;
  const GeneratorOptions& options_;
  WordList words_;
  std::vector<std::string> shuffled_;
};

// --- fwe -----------------------------------------------------------------------

constexpr double kZeta2 = 1.6449340668482264;  // scipy.special.zeta(2.0) = pi^2 / 6
constexpr int kCodedWordLength = 6;

class FweGenerator {
 public:
  FweGenerator(const TaskConfig& task, int64_t length, const GeneratorOptions& options)
      : task_(task), options_(options), vocab_size_((length - task.tokens_to_generate) / 50) {}

  int64_t vocab_size() const { return vocab_size_; }

  absl::StatusOr<Candidate> Render(int64_t index, int64_t units) const {
    PyRandom r(SampleSeed(options_.seed, task_.name, index));
    std::vector<std::string> drawn;
    std::set<std::string> distinct;
    while (static_cast<int64_t>(distinct.size()) < vocab_size_) {
      drawn.push_back(RandomLetters(r, 'a', kCodedWordLength));
      distinct.insert(drawn.back());
    }
    std::vector<std::string> vocab(distinct.begin(), distinct.end());  // sorted(set(vocab))
    PyRandom fixed_vocab(options_.seed);
    Shuffle(fixed_vocab, vocab);
    vocab[0] = "...";
    std::vector<std::string> words;
    std::vector<int64_t> counts;
    for (int64_t k = 0; k < vocab_size_; ++k) {
      // RULER's alpha is 2.0: k ** -alpha as 1 / (k * k), an exactly rounded
      // division, so the counts are the same with every libm.
      const double rank = static_cast<double>(k + 1);
      const double expected = static_cast<double>(units) * (1.0 / (rank * rank)) / kZeta2;
      counts.push_back(static_cast<int64_t>(expected));
      for (int64_t j = 0; j < counts.back(); ++j) words.push_back(vocab[k]);
    }
    PyRandom fixed_words(options_.seed);
    Shuffle(fixed_words, words);
    Candidate c;
    c.input = FormatTemplate(absl::StrCat(kFweTemplate, kFweAnswerPrefix),
                             {{"context", absl::StrJoin(words, " ")}, {"query", ""}});
    c.outputs.assign(vocab.begin() + 1, vocab.begin() + 4);
    c.meta["num_words"] = absl::StrCat(units);
    c.meta["vocab_size"] = absl::StrCat(vocab_size_);
    c.meta["top_counts"] = absl::StrCat(counts[1], ",", counts[2], ",", counts[3], ",", counts[0]);
    return c;
  }

 private:
  const TaskConfig& task_;
  const GeneratorOptions& options_;
  int64_t vocab_size_;
};

// The smallest n for which the three answers (ranks 2-4) are strictly more
// frequent than rank 5: int(n/(16 z)) > int(n/(25 z)) holds for every
// n >= 74 (and not at 73).
constexpr int64_t kFweMinWords = 74;

}  // namespace

absl::StatusOr<std::vector<GenerationSample>> MakeCweSamples(const TaskConfig& task, int64_t length,
                                                             const GeneratorOptions& options) {
  FOCAL_ASSIGN_OR_RETURN(WordList words, LoadWordList(options));
  if (static_cast<int64_t>(words.singles.size()) < 40) {
    return absl::InvalidArgumentError(
        absl::StrCat("the word list has ", words.singles.size(),
                     " distinct words; cwe's one-shot example needs 40"));
  }
  const CweGenerator gen(task, length, options, std::move(words));
  FamilyPlan plan;
  plan.render = [&](int64_t index, int64_t units) { return gen.Render(index, units); };
  plan.min_units = [](int64_t) -> int64_t { return kNumCommon + 1; };
  plan.max_units = gen.max_units();
  plan.probe_units = 100;
  plan.unit_name = "distinct words";
  return BuildSamples(task, length, options, plan);
}

absl::StatusOr<std::vector<GenerationSample>> MakeFweSamples(const TaskConfig& task, int64_t length,
                                                             const GeneratorOptions& options) {
  const FweGenerator gen(task, length, options);
  if (gen.vocab_size() < 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(task.name, ": length ", length, " gives fewer than 5 coded words"));
  }
  FamilyPlan plan;
  plan.render = [&](int64_t index, int64_t units) { return gen.Render(index, units); };
  plan.min_units = [](int64_t) -> int64_t { return kFweMinWords; };
  plan.probe_units = std::max<int64_t>(kFweMinWords, length / 8);
  plan.unit_name = "zeta word count";
  return BuildSamples(task, length, options, plan);
}

}  // namespace focal::datasets::ruler
