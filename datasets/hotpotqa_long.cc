// SPDX-License-Identifier: Apache-2.0
#include "datasets/hotpotqa_long.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/asset_root.h"
#include "base/json_writer.h"
#include "base/py_random.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/hotpotqa_pool.h"
#include "datasets/reader_util.h"

namespace focal::datasets {
namespace {

// LongBench v1, config/dataset2prompt.json, "hotpotqa".
// First-fit scan after the longest fitting prefix of distractors: how many
// further candidates it looks at, how many exact counts may fail before it
// stops, and by how many tokens a per-passage estimate may undercount.
constexpr int64_t kFillWindow = 64;
constexpr int kMaxFailedCounts = 4;
constexpr int64_t kEstimateMargin = 4;

constexpr absl::string_view kInstruction =
    "Answer the question based on the given passages. Only give me the answer and do not "
    "output any other words.";

// Builds one sample: the distractor sequence in fill order and the prompt
// for a chosen subset of it (positions in fill order).
class SampleBuilder {
 public:
  SampleBuilder(const HotpotQaPool& pool, const HotpotQaQuestion& q,
                const GeneratorOptions& options, uint32_t order_seed, uint32_t layout_seed,
                std::vector<int64_t>* cost_cache)
      : pool_(pool), q_(q), options_(options), layout_rng_(layout_seed), cost_cache_(cost_cache) {
    // Other records' paragraphs: the deduplicated pool in a seeded order
    // (random.shuffle), minus any whose title is in this record's context
    // (gold titles included), so no passage appears twice unless repeated.
    std::vector<int64_t> order(pool.unique.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    PyRandom rng(order_seed);
    for (int64_t i = static_cast<int64_t>(order.size()) - 1; i > 0; --i) {
      std::swap(order[i], order[rng.RandBelow(i + 1)]);
    }
    for (int64_t u : order) {
      const HotpotQaParagraph& p = pool.paragraphs[pool.unique[u]];
      if (!q.titles.count(p.title)) others_.push_back(pool.unique[u]);
    }
  }

  // Number of distractors available; infinite (max int64) once other records'
  // paragraphs can be repeated.
  int64_t Available() const {
    if (others_.empty()) return static_cast<int64_t>(q_.own.size());
    return std::numeric_limits<int64_t>::max();
  }

  // Paragraph index of distractor j in fill order. Past the record's own and
  // all other paragraphs the others are used again, in the same order: the
  // pool is too small for the length, and meta reports the repetition.
  int64_t Candidate(int64_t j) const {
    const int64_t own = static_cast<int64_t>(q_.own.size());
    if (j < own) return q_.own[j];
    return others_[(j - own) % static_cast<int64_t>(others_.size())];
  }
  bool Repeated(int64_t j) const {
    return j >= static_cast<int64_t>(q_.own.size() + others_.size());
  }

  // Prompt with the distractors at fill-order positions `chosen`, laid out by
  // their keys, the gold block inserted at round(depth * chosen.size()).
  // Sets gold_start(), gold_char(), context_chars().
  std::string Render(const std::vector<int64_t>& chosen, double depth) {
    std::vector<int64_t> arranged = chosen;
    for (int64_t j : chosen) {
      while (static_cast<int64_t>(keys_.size()) <= j) keys_.push_back(layout_rng_.Random());
    }
    std::sort(arranged.begin(), arranged.end(), [&](int64_t a, int64_t b) {
      return keys_[a] != keys_[b] ? keys_[a] < keys_[b] : a < b;
    });
    const int64_t n = static_cast<int64_t>(arranged.size());
    gold_start_ = std::llround(depth * static_cast<double>(n));
    std::vector<int64_t> passages;
    passages.reserve(n + q_.gold.size());
    for (int64_t j = 0; j < gold_start_; ++j) passages.push_back(Candidate(arranged[j]));
    passages.insert(passages.end(), q_.gold.begin(), q_.gold.end());
    for (int64_t j = gold_start_; j < n; ++j) passages.push_back(Candidate(arranged[j]));
    std::string context;
    for (size_t i = 0; i < passages.size(); ++i) {
      if (i > 0) context += "\n";
      if (i == static_cast<size_t>(gold_start_)) gold_char_ = static_cast<int64_t>(context.size());
      const HotpotQaParagraph& p = pool_.paragraphs[passages[i]];
      context += RenderHotpotQaPassage(static_cast<int64_t>(i) + 1, p.title, p.text);
    }
    context_chars_ = static_cast<int64_t>(context.size());
    return RenderHotpotQaPrompt(context, q_.question);
  }

  absl::StatusOr<int64_t> Count(const std::vector<int64_t>& chosen, double depth) {
    return options_.count_tokens(Render(chosen, depth));
  }

  // Exact token count of the prompt with the first n distractors (memoised).
  absl::StatusOr<int64_t> CountPrefix(int64_t n, double depth) {
    if (auto it = prefix_counts_.find(n); it != prefix_counts_.end()) return it->second;
    std::vector<int64_t> chosen(n);
    for (int64_t j = 0; j < n; ++j) chosen[j] = j;
    FOCAL_ASSIGN_OR_RETURN(int64_t c, Count(chosen, depth));
    prefix_counts_[n] = c;
    return c;
  }

  // Approximate tokens distractor j adds (its passage counted alone).
  absl::StatusOr<int64_t> Cost(int64_t j, int64_t empty_count) {
    const HotpotQaParagraph& p = pool_.paragraphs[Candidate(j)];
    int64_t& cached = (*cost_cache_)[p.unique_id];
    if (cached >= 0) return cached;
    FOCAL_ASSIGN_OR_RETURN(
        int64_t c, options_.count_tokens(RenderHotpotQaPassage(99, p.title, p.text) + "\n"));
    cached = std::max<int64_t>(c - empty_count, 1);
    return cached;
  }

  int64_t gold_start() const { return gold_start_; }
  int64_t gold_char() const { return gold_char_; }
  int64_t context_chars() const { return context_chars_; }
  int64_t others() const { return static_cast<int64_t>(others_.size()); }

 private:
  const HotpotQaPool& pool_;
  const HotpotQaQuestion& q_;
  const GeneratorOptions& options_;
  std::vector<int64_t> others_;
  PyRandom layout_rng_;
  std::vector<double> keys_;          // layout key of each fill-order position
  std::vector<int64_t>* cost_cache_;  // unique paragraph -> tokens, -1 = not yet
  std::map<int64_t, int64_t> prefix_counts_;
  int64_t gold_start_ = 0;
  int64_t gold_char_ = 0;
  int64_t context_chars_ = 0;
};

}  // namespace

std::vector<double> HotpotQaSweepDepths() { return {0.0, 0.25, 0.5, 0.75, 1.0}; }

std::string RenderHotpotQaPassage(int64_t number, absl::string_view title, absl::string_view text) {
  return absl::StrCat("Passage ", number, ":\n", title, "\n", text);
}

std::string RenderHotpotQaPrompt(absl::string_view context, absl::string_view question) {
  return absl::StrCat(kInstruction, "\n\nThe following are given passages.\n", context, "\n\n",
                      kInstruction, "\n\nQuestion: ", question, "\nAnswer:");
}

absl::StatusOr<std::vector<GenerationSample>> MakeHotpotQaLongSamples(
    int64_t length, double gold_depth, const GeneratorOptions& options) {
  if (length <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hotpotqa_long: length ", length, " must be positive"));
  }
  if (!(gold_depth >= 0.0 && gold_depth <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("hotpotqa_long: gold depth ", gold_depth, " must be in [0, 1]"));
  }
  if (options.num_samples <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hotpotqa_long: num_samples ", options.num_samples, " must be positive"));
  }
  if (!options.count_tokens) {
    return absl::InvalidArgumentError("hotpotqa_long: no token counter given");
  }
  if (options.hotpotqa.empty()) {
    return absl::InvalidArgumentError("hotpotqa_long: no HotpotQA file given");
  }
  FOCAL_ASSIGN_OR_RETURN(const std::shared_ptr<const HotpotQaPool> shared,
                         SharedHotpotQaPool(options.hotpotqa));
  const HotpotQaPool& pool = *shared;
  if (pool.questions.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.hotpotqa, ": no record has all its supporting-fact paragraphs in its context (",
        pool.skipped_missing_gold, " records skipped)"));
  }
  const int64_t budget = length - kHotpotQaLongMaxNewTokens;  // for count_tokens(input)
  FOCAL_ASSIGN_OR_RETURN(const int64_t empty_count, options.count_tokens(""));
  std::vector<int64_t> cost_cache(pool.unique.size(), -1);  // unique paragraph -> tokens

  const int64_t num =
      std::min<int64_t>(options.num_samples, static_cast<int64_t>(pool.questions.size()));
  PyRandom master(options.seed);
  std::vector<GenerationSample> samples;
  samples.reserve(num);
  for (int64_t i = 0; i < num; ++i) {
    const HotpotQaQuestion& q = pool.questions[i];
    const uint32_t order_seed = master.NextU32();  // random.getrandbits(32)
    const uint32_t layout_seed = master.NextU32();
    SampleBuilder b(pool, q, options, order_seed, layout_seed, &cost_cache);

    // Phase 1: f(n) = tokens of the prompt with the first n distractors; find
    // the largest n with f(n) <= budget. An estimate from per-passage counts
    // gives the start, then exact counts gallop and bisect (f grows with n).
    FOCAL_ASSIGN_OR_RETURN(const int64_t f0, b.CountPrefix(0, gold_depth));
    if (f0 > budget) {
      return absl::InvalidArgumentError(
          absl::StrCat("hotpotqa_long: length ", length, " is too small for question ", q.id,
                       ": its ", q.gold.size(), " gold passages and the question take ", f0,
                       " tokens, plus ", kHotpotQaLongMaxNewTokens, " to generate"));
    }
    const int64_t available = b.Available();
    int64_t estimate = 0;
    for (int64_t acc = f0; estimate < available;) {
      FOCAL_ASSIGN_OR_RETURN(const int64_t c, b.Cost(estimate, empty_count));
      if (acc + c > budget) break;
      acc += c;
      ++estimate;
    }
    int64_t lo = 0;             // largest n known to fit
    std::optional<int64_t> hi;  // smallest n known not to fit
    if (estimate > 0) {
      FOCAL_ASSIGN_OR_RETURN(const int64_t f, b.CountPrefix(estimate, gold_depth));
      if (f <= budget) {
        lo = estimate;
      } else {
        hi = estimate;
        for (int64_t step = 1;; step *= 2) {  // gallop down
          const int64_t cand = std::max<int64_t>(*hi - step, 0);
          if (cand == 0) break;
          FOCAL_ASSIGN_OR_RETURN(const int64_t fc, b.CountPrefix(cand, gold_depth));
          if (fc <= budget) {
            lo = cand;
            break;
          }
          hi = cand;
        }
      }
    }
    for (int64_t step = 1; !hi.has_value() && lo < available; step *= 2) {  // gallop up
      const int64_t cand = available - lo <= step ? available : lo + step;
      FOCAL_ASSIGN_OR_RETURN(const int64_t fc, b.CountPrefix(cand, gold_depth));
      if (fc <= budget) {
        lo = cand;
      } else {
        hi = cand;
      }
    }
    if (!hi.has_value()) {
      // Only a pool with no other record's paragraph ends here.
      return absl::FailedPreconditionError(absl::StrCat(
          "hotpotqa_long: cannot fill ", length, " tokens for question ", q.id, ": ",
          options.hotpotqa, " has no paragraphs of other records and its own ", available,
          " distractors give only ", b.CountPrefix(lo, gold_depth).value_or(-1), " tokens"));
    }
    while (*hi - lo > 1) {
      const int64_t mid = lo + (*hi - lo) / 2;
      FOCAL_ASSIGN_OR_RETURN(const int64_t fm, b.CountPrefix(mid, gold_depth));
      if (fm <= budget) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const int64_t prefix = lo;
    FOCAL_ASSIGN_OR_RETURN(int64_t tokens, b.CountPrefix(prefix, gold_depth));
    FOCAL_ASSIGN_OR_RETURN(const int64_t tokens_next, b.CountPrefix(prefix + 1, gold_depth));

    // Phase 2 (first fit): distractor `prefix` does not fit; later, shorter
    // ones may. Scan the next kFillWindow candidates in fill order and add
    // each one that still fits: those the per-passage estimate rules out are
    // skipped without a count, the others are counted exactly. The smallest
    // cost of a candidate left out bounds the remaining slack from above
    // (meta smallest_unused_passage_tokens).
    std::vector<int64_t> chosen(prefix);
    for (int64_t j = 0; j < prefix; ++j) chosen[j] = j;
    int64_t smallest_unused = tokens_next - tokens;
    int failed_counts = 0;
    const int64_t window_end =
        available - prefix - 1 <= kFillWindow ? available : prefix + 1 + kFillWindow;
    for (int64_t j = prefix + 1; j < window_end && failed_counts < kMaxFailedCounts; ++j) {
      FOCAL_ASSIGN_OR_RETURN(const int64_t c, b.Cost(j, empty_count));
      if (c > budget - tokens + kEstimateMargin) {
        smallest_unused = std::min(smallest_unused, c - kEstimateMargin);
        continue;
      }
      chosen.push_back(j);
      FOCAL_ASSIGN_OR_RETURN(const int64_t t, b.Count(chosen, gold_depth));
      if (t <= budget) {
        tokens = t;
      } else {
        chosen.pop_back();
        smallest_unused = std::min(smallest_unused, t - tokens);
        ++failed_counts;
      }
    }
    const int64_t n = static_cast<int64_t>(chosen.size());

    GenerationSample s;
    s.task = kHotpotQaLongTask;
    s.length = length;
    s.index = i;
    s.input = b.Render(chosen, gold_depth);  // also sets gold_start() etc.
    s.outputs = {q.answer};
    s.max_new_tokens = kHotpotQaLongMaxNewTokens;
    s.stop = {"\n"};
    int64_t own = 0;
    for (int64_t j : chosen) own += j < static_cast<int64_t>(q.own.size()) ? 1 : 0;
    std::vector<std::string> titles, numbers;
    for (size_t g = 0; g < q.gold.size(); ++g) {
      titles.push_back(JsonQuote(pool.paragraphs[q.gold[g]].title));
      numbers.push_back(absl::StrCat(b.gold_start() + static_cast<int64_t>(g) + 1));
    }
    auto& m = s.meta;
    m["id"] = q.id;
    if (!q.type.empty()) m["type"] = q.type;
    m["gold_titles"] = absl::StrCat("[", absl::StrJoin(titles, ", "), "]");
    m["gold_passages"] = absl::StrJoin(numbers, ",");
    m["gold_depth"] = absl::StrCat(gold_depth);
    m["gold_depth_achieved"] = absl::StrFormat(
        "%.4f", n > 0 ? static_cast<double>(b.gold_start()) / static_cast<double>(n) : 0.0);
    m["gold_char_depth"] = absl::StrFormat(
        "%.4f", static_cast<double>(b.gold_char()) / static_cast<double>(b.context_chars()));
    m["num_passages"] = absl::StrCat(n + static_cast<int64_t>(q.gold.size()));
    m["num_distractors"] = absl::StrCat(n);
    m["own_distractors"] = absl::StrCat(own);
    m["other_distractors"] = absl::StrCat(n - own);
    m["used_other_questions"] = n > own ? "true" : "false";
    m["distractors_repeated"] = n > 0 && b.Repeated(chosen.back()) ? "true" : "false";
    m["pool_paragraphs"] = absl::StrCat(static_cast<int64_t>(q.own.size()) + b.others());
    m["input_tokens"] = absl::StrCat(tokens);
    m["slack_tokens"] = absl::StrCat(budget - tokens);
    m["prefix_distractors"] = absl::StrCat(prefix);
    m["smallest_unused_passage_tokens"] = absl::StrCat(smallest_unused);
    m["questions_usable"] = absl::StrCat(pool.questions.size());
    m["questions_skipped_missing_gold"] = absl::StrCat(pool.skipped_missing_gold);
    samples.push_back(std::move(s));
  }
  return samples;
}

namespace {

// The "hotpotqa_long" generator: built per gold depth; data_files role
// "hotpotqa" (HotpotQA dev-distractor jsonl), by default the bundled sample.
absl::StatusOr<std::vector<GenerationSample>> MakeFromRequest(const GeneratorRequest& r) {
  if (!r.options.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task '", r.task, "': the hotpotqa_long generator takes no generator_options"));
  }
  GeneratorOptions o = r.settings;
  auto it = r.files.find("hotpotqa");
  o.hotpotqa = it != r.files.end()
                   ? it->second
                   : absl::StrCat(AssetRoot(), "/datasets/samples/hotpotqa_sample.jsonl");
  return MakeHotpotQaLongSamples(r.length, r.gold_depth, o);
}

FOCAL_REGISTER_GENERATOR(hotpotqa_long,
                         {.id = "hotpotqa_long", .uses_gold_depth = true, .make = MakeFromRequest});

}  // namespace

}  // namespace focal::datasets
