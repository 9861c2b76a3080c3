// SPDX-License-Identifier: Apache-2.0
// "helmet_rag_hotpotqa": HELMET's HotpotQA RAG (configs/rag*.yaml,
// kilt_hotpotqa; data.py load_qa), an APPROXIMATION built from the fetched
// HotpotQA dev set (distractor setting, RULER's hotpotqa.json). HELMET reads
// pre-built KILT files (Wikipedia passages its retriever ranked for each
// question, gold passages included); neither those files nor their builder
// are public, so:
//  * test questions: HELMET's key draw over the usable questions' ids
//    (random.seed(seed); random.sample(sorted(ids), 100)), in file order;
//  * two demonstrations: HELMET shuffles its train file with seed
//    sha256(id) % 2^31 (HF's shuffle: a NumPy permutation) and takes the first
//    two; we apply the same seed and permutation to the other dev questions.
//    Each shows three documents, as HELMET's demonstration file does: its two
//    gold paragraphs and its first own distractor;
//  * context: the question's two gold paragraphs (context order, adjacent)
//    at --gold-depth among distractors. Fill order: the question's own eight
//    distractors first (HotpotQA's bigram TF-IDF retrievals, the nearest
//    thing here to HELMET's retrieved passages), then other questions'
//    paragraphs in a seeded order (none titled like one of the question's
//    own or a demonstration's). As many whole passages as fit (length - 20) tokens; the chosen
//    ones are laid out by seeded random keys drawn per fill position, so a
//    longer context keeps a shorter one's relative order;
//  * HELMET's RAG prompt, passages "Document (Title: t): text" (text =
//    "".join(sentences)); 20 new tokens, no stop; gold = the answer; scored by
//    helmet_rag_substring_match (raw and parsed output, as HELMET).
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/np_random.h"
#include "base/py_random.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/helmet.h"
#include "datasets/helmet_internal.h"
#include "datasets/hotpotqa_pool.h"
#include "datasets/long_context.h"
#include "datasets/ruler_common.h"

namespace focal::datasets {
namespace {

constexpr int kDemos = 2;

std::string Passage(const HotpotQaPool& pool, int64_t paragraph) {
  const HotpotQaParagraph& p = pool.paragraphs[paragraph];
  return HelmetPassage(p.title, p.text);
}

std::string Passages(const HotpotQaPool& pool, const std::vector<int64_t>& paragraphs) {
  std::string out;
  for (int64_t p : paragraphs) absl::StrAppend(&out, out.empty() ? "" : "\n\n", Passage(pool, p));
  return out;
}

absl::StatusOr<std::vector<GenerationSample>> MakeRagHotpotQa(const GeneratorRequest& req) {
  const GeneratorOptions& o = req.settings;
  auto f = req.files.find("hotpotqa");
  if (f == req.files.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(req.task,
                     " needs HotpotQA dev: 'ruler/hotpotqa.json', fetched by scripts/fetch_data.sh "
                     "(or --data-dir DIR holding hotpotqa/hotpot_dev_distractor_500.jsonl)"));
  }
  FOCAL_ASSIGN_OR_RETURN(const std::shared_ptr<const HotpotQaPool> shared,
                         SharedHotpotQaPool(f->second));
  const HotpotQaPool& pool = *shared;
  std::vector<std::string> ids;
  for (const HotpotQaQuestion& q : pool.questions) ids.push_back(q.id);
  const std::vector<std::string> keys = HelmetTestKeys(ids, o.seed);
  std::vector<size_t> test, others;  // others: demonstrations and their order
  for (size_t i = 0; i < pool.questions.size(); ++i) {
    (std::binary_search(keys.begin(), keys.end(), pool.questions[i].id) ? test : others)
        .push_back(i);
  }
  // HELMET draws up to 100 test questions; the demonstrations need 2 more.
  if (others.size() < kDemos || test.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(f->second, ": ", pool.questions.size(),
                     " questions with their supporting paragraphs (", pool.skipped_missing_gold,
                     " without); ", req.task, " needs at least ", kHelmetTestSamples + kDemos, " (",
                     kHelmetTestSamples, " drawn for the test, ", kDemos, " demonstrations)"));
  }
  const int64_t n_samples = std::min<int64_t>(o.num_samples, static_cast<int64_t>(test.size()));
  const double depth = req.gold_depth < 0 ? 0.5 : req.gold_depth;
  const int64_t budget = req.length - kHelmetRagMaxNewTokens;
  const std::string instruction(kHelmetRagInstruction);
  FOCAL_ASSIGN_OR_RETURN(const int64_t bos, o.count_tokens(""));
  std::vector<int64_t> unique_tokens(pool.unique.size(), -1);  // per unique paragraph
  std::vector<GenerationSample> out;
  for (int64_t si = 0; si < n_samples; ++si) {
    const HotpotQaQuestion& q = pool.questions[test[si]];
    const std::vector<int64_t> perm =
        NumpyPermutation(HelmetItemSeed(q.id, 0), static_cast<int64_t>(others.size()));
    std::string demos;
    std::set<std::string> shown = q.titles;  // never a second copy of a title in the prompt
    for (int d = 0; d < kDemos; ++d) {
      const HotpotQaQuestion& demo = pool.questions[others[perm[d]]];
      std::vector<int64_t> docs = demo.gold;
      if (!demo.own.empty()) docs.push_back(demo.own[0]);
      for (int64_t p : docs) shown.insert(pool.paragraphs[p].title);
      absl::StrAppend(&demos, Passages(pool, docs), "\n\nQuestion: ", demo.question,
                      "\nAnswer: ", demo.answer, "\n\n");
    }
    // Fill order: own distractors, then other questions' paragraphs (none
    // titled like the question's own or a demonstration's).
    PyRandom rng(ruler::SampleSeed(o.seed, req.task, si));
    std::vector<int64_t> other_paragraphs;
    for (int64_t u : pool.unique) {
      if (!shown.count(pool.paragraphs[u].title)) other_paragraphs.push_back(u);
    }
    ruler::Shuffle(rng, other_paragraphs);
    std::vector<int64_t> fill = q.own;
    fill.insert(fill.end(), other_paragraphs.begin(), other_paragraphs.end());
    std::vector<double> layout_key(fill.size());
    for (double& k : layout_key) k = rng.Random();
    const std::string question = absl::StrCat("\n\nQuestion: ", q.question, "\nAnswer:");
    auto layout = [&](int64_t n) {  // the first n of the fill order, laid out, gold inserted
      std::vector<int64_t> pos(static_cast<size_t>(n));
      std::iota(pos.begin(), pos.end(), 0);
      std::stable_sort(pos.begin(), pos.end(),
                       [&](int64_t a, int64_t b) { return layout_key[a] < layout_key[b]; });
      const int64_t at = std::llround(depth * static_cast<double>(n));
      std::vector<int64_t> paragraphs;
      for (int64_t k = 0; k <= n; ++k) {
        if (k == at) paragraphs.insert(paragraphs.end(), q.gold.begin(), q.gold.end());
        if (k < n) paragraphs.push_back(fill[pos[k]]);
      }
      return paragraphs;
    };
    auto count = [&](int64_t n) {
      return o.count_tokens(instruction + demos + Passages(pool, layout(n)) + question);
    };
    auto passage = [&](int64_t k) -> absl::StatusOr<int64_t> {
      int64_t& t = unique_tokens[pool.paragraphs[fill[k]].unique_id];
      if (t < 0) {
        FOCAL_ASSIGN_OR_RETURN(t, PieceTokens(o, "\n\n" + Passage(pool, fill[k]), bos));
      }
      return t;
    };
    FOCAL_ASSIGN_OR_RETURN(const int64_t n,
                           FitItems(0, static_cast<int64_t>(fill.size()), budget, count, passage));
    if (n < 0) {
      return absl::OutOfRangeError(absl::StrCat(
          req.task, " sample ", si, " (", q.id, "): ", req.length,
          " tokens cannot hold the demonstrations, the gold paragraphs and the question"));
    }
    GenerationSample s;
    s.task = req.task;
    s.length = req.length;
    s.index = si;
    s.meta["id"] = q.id;
    s.meta["num_passages"] = absl::StrCat(n + static_cast<int64_t>(q.gold.size()));
    s.meta["gold_index"] = absl::StrCat(std::llround(depth * static_cast<double>(n)));
    s.meta["own_distractors"] =
        absl::StrCat(std::min<int64_t>(n, static_cast<int64_t>(q.own.size())));
    s.meta["approximation"] =
        "HotpotQA's own and other questions' paragraphs, not HELMET's retrieved KILT passages";
    auto input = FitHelmetPrompt(instruction + demos, Passages(pool, layout(n)), question, budget,
                                 o, s.meta);
    if (!input.ok()) return Annotate(input.status(), absl::StrCat(req.task, " sample ", si));
    s.input = *std::move(input);
    s.outputs = {q.answer};
    s.max_new_tokens = kHelmetRagMaxNewTokens;  // no stop: HELMET scores the whole output
    out.push_back(std::move(s));
  }
  return out;
}

FOCAL_REGISTER_GENERATOR(helmet_rag_hotpotqa, {.id = "helmet_rag_hotpotqa",
                                               .uses_gold_depth = true,
                                               .make = MakeRagHotpotQa});

}  // namespace
}  // namespace focal::datasets
