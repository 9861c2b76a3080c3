// SPDX-License-Identifier: Apache-2.0
// The vt, cwe and fwe families of RULER's generator, draw for draw
// (see ruler_exact.h); niah and qa are in ruler_exact_niah.cc and
// ruler_exact_qa.cc.
#include "datasets/ruler_exact.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
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
using ruler::Field;
using ruler::FormatTemplate;

const Spec kSpecs[] = {
    {"niah_single_1", Spec::kNiah, 128, "repeat", "words", "numbers"},
    {"niah_single_2", Spec::kNiah, 128, "essay", "words", "numbers"},
    {"niah_single_3", Spec::kNiah, 128, "essay", "words", "uuids"},
    {"niah_multikey_1", Spec::kNiah, 128, "essay", "words", "numbers", 4},
    {"niah_multikey_2", Spec::kNiah, 128, "needle", "words", "numbers"},
    {"niah_multikey_3", Spec::kNiah, 128, "needle", "uuids", "uuids"},
    {"niah_multivalue", Spec::kNiah, 128, "essay", "words", "numbers", 1, 4},
    {"niah_multiquery", Spec::kNiah, 128, "essay", "words", "numbers", 1, 1, 4},
    {"vt", Spec::kVt, 30},
    {"cwe", Spec::kCwe, 120},
    {"fwe", Spec::kFwe, 50},
    {"qa_1", Spec::kQa, 32, "", "", "", 1, 1, 1, "squad"},
    {"qa_2", Spec::kQa, 32, "", "", "", 1, 1, 1, "hotpotqa"},
};

constexpr absl::string_view kVtTask =
    "Memorize and track the chain(s) of variable assignment hidden in the following "
    "text.\n\n{context}\nQuestion: Find all variables that are assigned the value {query} in "
    "the text above.";
// "assgined": RULER's spelling.
constexpr absl::string_view kVtPrefix =
    " Answer: According to the chain(s) of variable assignment in the text above, {num_v} "
    "variables are assgined the value {query}, they are: ";
constexpr absl::string_view kCwePrompt =
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most "
    "common words in the above list? Answer: The top 10 words that appear most often in the "
    "list are:";
constexpr absl::string_view kFwePrompt =
    "Read the following coded text and track the frequency of each coded word. Find the three "
    "most frequently appeared coded words. {context}\nQuestion: Do not provide any "
    "explanation. Please ignore the dots '....'. What are the three most frequently appeared "
    "words in the above coded text? Answer: According to the coded text above, the three most "
    "frequently appeared words are:";

// --- vt ---------------------------------------------------------------------

class Vt {
 public:
  explicit Vt(uint64_t seed) : rng_(seed), np_(static_cast<uint32_t>(seed)) {}

  // generate_input_output(num_noises, 1 chain, 4 hops, is_icl): input, vars.
  absl::StatusOr<std::pair<std::string, std::vector<std::string>>> Make(int64_t num_noises,
                                                                        bool is_icl) {
    const int k = is_icl ? 3 : 5;
    const int hops = 4;  // min(10, 4) for the example too
    std::vector<std::string> vars;
    std::set<std::string> distinct;
    for (int i = 0; i < hops + 1; ++i) {
      vars.push_back(ruler::RandomLetters(rng_, 'A', k));
      distinct.insert(vars.back());
    }
    while (static_cast<int>(distinct.size()) < hops + 1) {
      vars.push_back(ruler::RandomLetters(rng_, 'A', k));
      distinct.insert(vars.back());
    }
    std::vector<std::string> chain;
    for (size_t i = 0; i < vars.size(); i += hops + 1) {
      const int64_t value = np_.RandInt(10000, 99999);
      if (i + hops + 1 > vars.size()) return PyError("list index out of range");
      if (i == 0) {
        chain.push_back(absl::StrCat("VAR ", vars[0], " = ", value));
        for (int j = 0; j < hops; ++j) {
          chain.push_back(absl::StrCat("VAR ", vars[j + 1], " = VAR ", vars[j], " "));
        }
      }
    }
    std::vector<std::string> sentences(std::max<int64_t>(0, num_noises),
                                       absl::StrCat(kNoise, "\n"));
    if (sentences.size() <= chain.size()) {
      std::vector<std::string> split;
      for (const std::string& s : sentences) {
        for (absl::string_view part : absl::StrSplit(s, '.')) {
          const bool blank = absl::StripAsciiWhitespace(part).empty();
          split.push_back(blank ? std::string(part) : absl::StrCat(part, "."));
        }
      }
      sentences = std::move(split);
      // RULER cuts the chain to fit; with no noise at all it cannot.
      if (sentences.empty()) return PyError("Sample larger than population");
      if (sentences.size() <= chain.size()) chain.resize(sentences.size() - 1);
    }
    std::vector<int64_t> pos = ruler::SampleIndices(rng_, static_cast<int64_t>(sentences.size()),
                                                    static_cast<int64_t>(chain.size()));
    std::sort(pos.begin(), pos.end());
    for (size_t j = 0; j < chain.size(); ++j) {
      sentences.insert(sentences.begin() + pos[j] + static_cast<int64_t>(j), chain[j]);
    }
    const std::string context =
        absl::StrReplaceAll(absl::StrJoin(sentences, " "), {{". \n", ".\n"}});
    const std::string value(
        absl::StripAsciiWhitespace(absl::string_view(chain[0]).substr(chain[0].rfind('=') + 1)));
    // The template given to the script is RULER's own, so is_icl keeps it.
    std::string input =
        FormatTemplate(absl::StrCat(kVtTask, kVtPrefix),
                       {{"context", context}, {"query", value}, {"num_v", absl::StrCat(hops + 1)}});
    vars.resize(hops + 1);
    return std::make_pair(std::move(input), std::move(vars));
  }

  // randomize_icl: each word of the example's answer replaced by new letters.
  std::string RandomizeIcl(std::string example) {
    const absl::string_view tail = absl::string_view(kVtPrefix).substr(kVtPrefix.size() - 10);
    const size_t cut = example.find(tail.data(), 0, tail.size());
    const std::vector<std::string> targets = absl::StrSplit(
        example.substr(cut + 10), absl::ByAnyChar(" \t\n\r\f\v"), absl::SkipWhitespace());
    for (const std::string& item : targets) {
      std::string fresh = ruler::RandomLetters(rng_, 'A', static_cast<int>(item.size()));
      example = absl::StrReplaceAll(example, {{item, fresh}});
    }
    return example;
  }

 private:
  PyRandom rng_;
  NumpyRandomState np_;
};

absl::StatusOr<std::vector<Sample>> GenerateVt(const Spec& spec, int64_t max_len, int64_t num,
                                               uint64_t seed, const CountTokens& count) {
  Vt vt(seed);
  const int64_t t = spec.tokens_to_generate;
  // sys_vartrack_w_noise_random(max_seq_length, incremental, icl_example).
  auto run = [&](int64_t n_samples, int64_t max_seq, int64_t inc,
                 const Sample* icl) -> absl::StatusOr<std::vector<Sample>> {
    int64_t example_tokens = 0;
    std::string icl_text;
    if (icl != nullptr) {
      icl_text = absl::StrCat(icl->input, " ", absl::StrJoin(icl->outputs, " "), "\n\n");
      FOCAL_ASSIGN_OR_RETURN(example_tokens, count(icl_text));
    }
    const bool is_icl = icl == nullptr;
    int64_t noises = inc, total = 0;
    while (total + t + example_tokens < max_seq) {
      FOCAL_ASSIGN_OR_RETURN(auto made, vt.Make(noises, is_icl));
      FOCAL_ASSIGN_OR_RETURN(total, count(absl::StrCat(made.first, " ", PyListRepr(made.second))));
      if (total + t + example_tokens > max_seq) {
        noises -= inc;
        break;
      }
      noises += inc;
    }
    std::vector<Sample> out;
    for (int64_t index = 0; index < n_samples; ++index) {
      Sample s;
      s.index = index;
      for (int attempt = 0;; ++attempt) {
        // RULER retries with the same num_noises (its used_noises is unused).
        auto made = vt.Make(noises, is_icl);
        if (made.ok()) {
          FOCAL_ASSIGN_OR_RETURN(int64_t n, count(made->first));
          s.length = n + t + example_tokens;
          if (s.length <= max_seq) {
            s.input = std::move(made->first);
            s.outputs = std::move(made->second);
            break;
          }
        } else if (!absl::IsOutOfRange(made.status())) {
          return made.status();
        }
        if (attempt > 1000) return TooShort(spec.name, max_seq, s.length);
      }
      if (icl != nullptr) {
        const size_t cut = s.input.find(kVtTask.data(), 0, 20);
        s.input = absl::StrCat(s.input.substr(0, cut), " ", vt.RandomizeIcl(icl_text), "\n\n",
                               s.input.substr(cut));
      }
      out.push_back(std::move(s));
    }
    return out;
  };
  FOCAL_ASSIGN_OR_RETURN(std::vector<Sample> icl, run(1, 500, 5, nullptr));
  return run(num, max_len, 10, &icl[0]);
}

// --- cwe ----------------------------------------------------------------------

absl::StatusOr<std::vector<Sample>> GenerateCwe(const Spec& spec, int64_t max_len, int64_t num,
                                                uint64_t seed, const Sources& src,
                                                const CountTokens& count) {
  std::vector<std::string> all = src.nouns;
  all.insert(all.end(), src.adjectives.begin(), src.adjectives.end());
  all.insert(all.end(), src.verbs.begin(), src.verbs.end());
  std::vector<std::string> words = SortedUnique(std::move(all));
  {
    PyRandom fresh(seed);
    ruler::Shuffle(fresh, words);
  }
  PyRandom rng(seed);
  const int64_t n_words = static_cast<int64_t>(words.size());
  auto example = [&](int64_t num_words, int common_repeats, int uncommon_repeats)
      -> absl::StatusOr<std::pair<std::string, std::vector<std::string>>> {
    if (num_words > n_words) return PyError("Sample larger than population");
    std::vector<std::string> full;
    for (int64_t i : ruler::SampleIndices(rng, n_words, num_words)) full.push_back(words[i]);
    const int64_t nc = std::min<int64_t>(10, num_words);
    std::vector<std::string> list;
    for (int r = 0; r < common_repeats; ++r)
      list.insert(list.end(), full.begin(), full.begin() + nc);
    for (int r = 0; r < uncommon_repeats; ++r)
      list.insert(list.end(), full.begin() + nc, full.end());
    PyRandom fresh(seed);
    ruler::Shuffle(fresh, list);
    return std::make_pair(Numbered(list),
                          std::vector<std::string>(full.begin(), full.begin() + nc));
  };
  auto make =
      [&](int64_t num_words) -> absl::StatusOr<std::pair<std::string, std::vector<std::string>>> {
    const bool small = max_len < 4096;
    FOCAL_ASSIGN_OR_RETURN(auto ex, small ? example(20, 3, 1) : example(40, 10, 3));
    FOCAL_ASSIGN_OR_RETURN(auto ctx, small ? example(num_words, 6, 1) : example(num_words, 30, 3));
    std::string input =
        absl::StrCat(FormatTemplate(kCwePrompt, {{"context", ex.first}}), Numbered(ex.second), "\n",
                     FormatTemplate(kCwePrompt, {{"context", ctx.first}}));
    return std::make_pair(std::move(input), std::move(ctx.second));
  };
  const int64_t inc = 10, t = spec.tokens_to_generate;
  int64_t num_words = inc, total = 0;
  while (total + t < max_len) {
    FOCAL_ASSIGN_OR_RETURN(auto made, make(num_words));
    FOCAL_ASSIGN_OR_RETURN(total, count(absl::StrCat(made.first, " ", Numbered(made.second))));
    if (total + t > max_len) {
      num_words -= inc;
      break;
    }
    num_words += inc;
    if (num_words > n_words) {
      num_words = n_words;
      break;
    }
  }
  return SampleLoop(spec.name, num, num_words, inc, max_len, t, make, count);
}

// --- fwe ----------------------------------------------------------------------

absl::StatusOr<std::vector<Sample>> GenerateFwe(const Spec& spec, int64_t max_len, int64_t num,
                                                uint64_t seed, const CountTokens& count) {
  PyRandom rng(seed);
  const int64_t vocab_size = max_len / 50, inc = max_len / 32;
  constexpr double kZeta2 = 1.6449340668482264;  // scipy.special.zeta(2.0)
  // generate_input_output(max_len, num_words, ...): text, answer, num_words.
  auto make = [&](int64_t num_words)
      -> absl::StatusOr<std::tuple<std::string, std::vector<std::string>, int64_t>> {
    std::vector<std::string> vocab;
    std::set<std::string> distinct;
    while (static_cast<int64_t>(vocab.size()) < vocab_size ||
           static_cast<int64_t>(distinct.size()) < vocab_size) {
      vocab.push_back(ruler::RandomLetters(rng, 'a', 6));
      distinct.insert(vocab.back());
    }
    vocab.assign(distinct.begin(), distinct.end());
    PyRandom fresh(seed);
    ruler::Shuffle(fresh, vocab);
    vocab[0] = "...";
    auto text = [&](int64_t n) {
      std::vector<absl::string_view> sampled;
      for (size_t k = 0; k < vocab.size(); ++k) {
        const double kd = static_cast<double>(k + 1);
        const double c = static_cast<double>(n) * std::pow(kd, -2.0) / kZeta2;
        for (int64_t r = 0; r < static_cast<int64_t>(c); ++r) sampled.push_back(vocab[k]);
      }
      PyRandom shuffle(seed);
      ruler::Shuffle(shuffle, sampled);
      return FormatTemplate(kFwePrompt, {{"context", absl::StrJoin(sampled, " ")}});
    };
    std::string s;
    if (num_words > 0) {
      s = text(num_words);
      for (;;) {
        FOCAL_ASSIGN_OR_RETURN(int64_t n, count(s));
        if (n <= max_len) break;
        num_words -= inc;
        if (num_words <= 0) return TooShort(spec.name, max_len, n);
        s = text(num_words);
      }
    } else {
      num_words = max_len / 6;
      s = text(num_words);
      for (;;) {
        FOCAL_ASSIGN_OR_RETURN(int64_t n, count(s));
        if (n >= max_len) break;
        num_words += inc;
        s = text(num_words);
      }
      num_words -= inc;
    }
    s = text(num_words);
    return std::make_tuple(
        std::move(s), std::vector<std::string>(vocab.begin() + 1, vocab.begin() + 4), num_words);
  };
  FOCAL_ASSIGN_OR_RETURN(auto first, make(-1));
  const int64_t num_words = std::get<2>(first);
  std::vector<Sample> out;
  for (int64_t index = 0; index < num; ++index) {
    FOCAL_ASSIGN_OR_RETURN(auto made, make(num_words));
    Sample s;
    s.index = index;
    FOCAL_ASSIGN_OR_RETURN(int64_t n, count(std::get<0>(made)));
    s.length = n + spec.tokens_to_generate;
    s.input = std::move(std::get<0>(made));
    s.outputs = std::move(std::get<1>(made));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string Numbered(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : " ", i + 1, ". ", words[i]);
  }
  return out;
}

absl::Status TooShort(absl::string_view task, int64_t max_len, int64_t tokens) {
  return absl::InvalidArgumentError(absl::StrCat(
      task, ": a sample does not fit in ", max_len, " tokens even with RULER's smallest haystack (",
      tokens, " tokens with the answer room); RULER would retry forever; use a longer length"));
}

absl::StatusOr<std::vector<Sample>> SampleLoop(absl::string_view task, int64_t num, int64_t units,
                                               int64_t inc, int64_t max_len, int64_t t,
                                               const MakeFn& make, const CountTokens& count) {
  std::vector<Sample> out;
  for (int64_t index = 0; index < num; ++index) {
    int64_t used = units, stuck = 0;
    Sample s;
    s.index = index;
    for (;;) {
      auto made = make(used);
      if (made.ok()) {
        FOCAL_ASSIGN_OR_RETURN(int64_t n, count(made->first));
        s.length = n + t;
        if (s.length <= max_len) {
          s.input = std::move(made->first);
          s.outputs = std::move(made->second);
          break;
        }
      } else if (!absl::IsOutOfRange(made.status())) {
        return made.status();
      }
      // At the smallest size RULER redraws until a sample fits.
      if (used > inc) {
        used -= inc;
      } else if (++stuck > 1000) {
        return TooShort(task, max_len, s.length);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> RolesOf(absl::string_view task) {
  for (const Spec& s : kSpecs) {
    if (s.name != task) continue;
    std::vector<std::string> roles;
    const bool words = s.key_type == "words" || s.value_type == "words";
    if ((s.family == Spec::kNiah && words) || s.family == Spec::kCwe) {
      roles = {"nouns", "adjectives"};
    }
    if (s.family == Spec::kCwe) roles.push_back("verbs");
    if (s.haystack == "essay") {
      roles.push_back("haystack");
      roles.push_back("sentences");
    }
    if (s.family == Spec::kQa) roles.emplace_back(s.dataset);
    return roles;
  }
  return {};
}

const std::vector<std::string>& TaskNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const Spec& s : kSpecs) v->emplace_back(s.name);
    return v;
  }();
  return *names;
}

absl::StatusOr<std::vector<Sample>> Generate(absl::string_view task, int64_t max_seq_length,
                                             int64_t num_samples, uint64_t seed,
                                             const Sources& sources, const CountTokens& count) {
  const Spec* spec = nullptr;
  for (const Spec& s : kSpecs) {
    if (s.name == task) spec = &s;
  }
  if (spec == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown RULER task '", task, "'; valid: ", absl::StrJoin(TaskNames(), ", ")));
  }
  if (num_samples < 1 || max_seq_length < 1) {
    return absl::InvalidArgumentError("RULER needs num_samples >= 1 and a positive length");
  }
  for (const std::string& role : RolesOf(task)) {
    const bool empty = role == "nouns"        ? sources.nouns.empty()
                       : role == "adjectives" ? sources.adjectives.empty()
                       : role == "verbs"      ? sources.verbs.empty()
                       : role == "haystack"   ? sources.essay.empty()
                       : role == "sentences"  ? sources.essay_sentences.empty()
                       : role == "squad"      ? sources.squad_json.empty()
                                              : sources.hotpotqa_json.empty();
    if (empty) {
      return absl::InvalidArgumentError(absl::StrCat("RULER task ", task, " needs its ", role,
                                                     " data (bash scripts/fetch_data.sh)"));
    }
  }
  switch (spec->family) {
    case Spec::kNiah:
      return GenerateNiah(*spec, max_seq_length, num_samples, seed, sources, count);
    case Spec::kVt:
      return GenerateVt(*spec, max_seq_length, num_samples, seed, count);
    case Spec::kCwe:
      return GenerateCwe(*spec, max_seq_length, num_samples, seed, sources, count);
    case Spec::kFwe:
      return GenerateFwe(*spec, max_seq_length, num_samples, seed, count);
    case Spec::kQa:
      return GenerateQa(spec->name, spec->dataset == "squad", max_seq_length, num_samples, seed,
                        sources, count);
  }
  return absl::InternalError("unreachable");
}

}  // namespace focal::datasets::ruler_exact
