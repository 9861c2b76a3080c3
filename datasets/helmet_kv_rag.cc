// SPDX-License-Identifier: Apache-2.0
// HELMET's JSON KV recall and NQ RAG tasks ("helmet_json_kv", "helmet_rag_nq";
// datasets/helmet.h). HELMET ships both as pre-built files whose generator is
// not in its repository; here the samples are built per length from the
// lost-in-the-middle data and seeded draws, with HELMET's prompts and
// scoring (differences: docs/long-context.md).
//
// helmet_json_kv: a JSON object of random UUID4 keys and values rendered as
// "JSON data:\n" + json.dumps(obj, indent=4), as many pairs as fit (length -
// 100) tokens; the queried pair at a seeded random position; two other
// pairs of the object as demonstrations; HELMET's prompt; 100 new tokens.
//
// helmet_rag_nq: NQ-open questions (100 drawn as HELMET draws them:
// random.seed(seed); random.sample(sorted(set(questions)), 100), kept in file
// order) with their gold passage among distractors (other questions' gold
// passages, a seeded order), as many as fit (length - 20) tokens, the gold at
// --gold-depth; two demonstrations from the other questions (HELMET's
// per-question sha256 seed and HF shuffle), each with its gold passage and
// two others; HELMET's RAG prompt; 20 new tokens; golds = all answers.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json.h"
#include "base/np_random.h"
#include "base/py_random.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/helmet.h"
#include "datasets/helmet_internal.h"
#include "datasets/long_context.h"
#include "datasets/reader_util.h"
#include "datasets/ruler_common.h"

namespace focal::datasets {
namespace {

using ruler::SampleSeed;
using ruler::Shuffle;

constexpr int64_t kKvMaxNewTokens = 100;

// str(uuid.UUID(int=random.getrandbits(128), version=4)).
std::string RandomUuid4(PyRandom& rng) {
  uint32_t w[4];
  for (uint32_t& x : w) x = rng.NextU32();  // getrandbits(128): least significant word first
  uint8_t b[16];
  for (int i = 0; i < 16; ++i) b[i] = static_cast<uint8_t>(w[3 - i / 4] >> (24 - 8 * (i % 4)));
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    absl::StrAppendFormat(&out, "%02x", b[i]);
  }
  return out;
}

std::string KvContext(const std::vector<std::pair<std::string, std::string>>& kv, size_t n) {
  std::string out = "JSON data:\n{";
  for (size_t i = 0; i < n; ++i) {
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    \"", kv[i].first, "\": \"", kv[i].second,
                    "\"");
  }
  absl::StrAppend(&out, n == 0 ? "}" : "\n}");
  return out;
}

absl::StatusOr<std::vector<GenerationSample>> MakeJsonKv(const GeneratorRequest& req) {
  const GeneratorOptions& o = req.settings;
  const int64_t budget = req.length - kKvMaxNewTokens;
  const int64_t n_samples = std::min<int64_t>(o.num_samples, kHelmetTestSamples);
  std::vector<GenerationSample> out;
  for (int64_t i = 0; i < n_samples; ++i) {
    PyRandom rng(SampleSeed(o.seed, req.task, i));
    // Enough pairs for the length: a UUID pair is >= 30 tokens in every
    // tokenizer we know; more are drawn than can fit, the fit picks a prefix.
    const int64_t max_pairs = std::max<int64_t>(4, req.length / 20);
    std::vector<std::pair<std::string, std::string>> kv;
    kv.reserve(static_cast<size_t>(max_pairs));
    for (int64_t k = 0; k < max_pairs; ++k) kv.emplace_back(RandomUuid4(rng), RandomUuid4(rng));
    // The query position and two demonstration pairs are drawn as fractions
    // so they do not depend on how many pairs fit.
    const double q_at = rng.Random(), d1 = rng.Random(), d2 = rng.Random();
    const std::string instruction_tail =
        "\n\nExtract the value corresponding to the specified key in the JSON object below.\n\n";
    auto render = [&](int64_t n, std::string* question) {
      const auto pick = [&](double f) { return static_cast<size_t>(f * static_cast<double>(n)); };
      size_t q = pick(q_at), a = pick(d1), b = pick(d2);
      // Demonstrations are pairs other than the queried one (and each other).
      if (a == q) a = (a + 1) % n;
      if (b == q || b == a) b = (b + 1) % n;
      if (b == q || b == a) b = (b + 1) % n;
      *question = absl::StrCat("Key: ", kv[a].first, "\nCorresponding value: ", kv[a].second,
                               "\n\nKey: ", kv[b].first, "\nCorresponding value: ", kv[b].second,
                               "\n\nKey: ", kv[q].first, "\nCorresponding value:");
      return q;
    };
    std::string question;
    FOCAL_ASSIGN_OR_RETURN(const int64_t bos, o.count_tokens(""));
    auto count = [&](int64_t k) -> absl::StatusOr<int64_t> {
      render(k, &question);
      return o.count_tokens(KvContext(kv, k) + instruction_tail + question);
    };
    auto pair_tokens = [&](int64_t k) {
      return PieceTokens(o, absl::StrCat(",\n    \"", kv[k].first, "\": \"", kv[k].second, "\""),
                         bos);
    };
    FOCAL_ASSIGN_OR_RETURN(int64_t n, FitItems(3, max_pairs, budget, count, pair_tokens));
    if (n < 3) {
      return absl::OutOfRangeError(
          absl::StrCat(req.task, ": ", req.length, " tokens cannot hold three key-value pairs"));
    }
    const size_t q = render(n, &question);
    GenerationSample s;
    s.task = req.task;
    s.length = req.length;
    s.index = i;
    s.meta["num_kvs"] = absl::StrCat(n);
    s.meta["key_index"] = absl::StrCat(q);
    s.meta["key_depth"] = absl::StrFormat("%.4f", n > 1 ? static_cast<double>(q) / (n - 1) : 0.0);
    auto input =
        FitHelmetPrompt(KvContext(kv, n), "", instruction_tail + question, budget, o, s.meta);
    if (!input.ok()) return Annotate(input.status(), absl::StrCat(req.task, " sample ", i));
    s.input = *std::move(input);
    s.outputs = {kv[q].second};
    s.max_new_tokens = kKvMaxNewTokens;  // no stop: HELMET scores the whole output
    out.push_back(std::move(s));
  }
  return out;
}

struct NqItem {
  std::string question;
  std::vector<std::string> answers;
  std::string title, text;  // the gold passage
};

absl::StatusOr<std::vector<NqItem>> ReadNq(const std::string& path) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> recs, ReadJsonl(path));
  std::vector<NqItem> out;
  for (const JsonRecord& r : recs) {
    NqItem it;
    FOCAL_ASSIGN_OR_RETURN(it.question, r.String("question"));
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* answers, r.Get("answers"));
    if (!answers->is_array() || answers->array().empty()) {
      return r.FieldError("answers", "must be a non-empty list of strings");
    }
    for (const JsonValue& a : answers->array()) {
      if (!a.is_string()) return r.FieldError("answers", "must be a list of strings");
      it.answers.push_back(a.string_value());
    }
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* ctxs, r.Get("ctxs"));
    if (!ctxs->is_array() || ctxs->array().empty()) {
      return r.FieldError("ctxs", "must hold the gold passage");
    }
    const JsonValue* gold = &ctxs->array()[0];
    for (const JsonValue& c : ctxs->array()) {  // the one marked isgold, else the first
      const JsonValue* g = c.Find("isgold");
      if (g != nullptr && g->is_bool() && g->bool_value()) {
        gold = &c;
        break;
      }
    }
    FOCAL_ASSIGN_OR_RETURN(it.title, r.String("title", gold, "ctxs[].title"));
    FOCAL_ASSIGN_OR_RETURN(it.text, r.String("text", gold, "ctxs[].text"));
    out.push_back(std::move(it));
  }
  if (out.size() < 8) return absl::InvalidArgumentError(absl::StrCat(path, ": too few questions"));
  return out;
}

std::string Passage(const NqItem& it) { return HelmetPassage(it.title, it.text); }

absl::StatusOr<std::vector<GenerationSample>> MakeRagNq(const GeneratorRequest& req) {
  const GeneratorOptions& o = req.settings;
  auto f = req.files.find("nq");
  if (f == req.files.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        req.task,
        " needs its data file 'helmet/lost-in-the-middle/nq-open-oracle.jsonl.gz': pass "
        "--data-dir (a directory with the ../shared/data layout)"));
  }
  FOCAL_ASSIGN_OR_RETURN(std::vector<NqItem> items, ReadNq(f->second));
  // HELMET: random.seed(seed); keys = random.sample(sorted(set(q)), 100);
  // the items whose question is drawn, in file order.
  std::vector<std::string> questions;
  for (const NqItem& it : items) questions.push_back(it.question);
  const std::vector<std::string> keys = HelmetTestKeys(questions, o.seed);
  const int64_t n_draw = static_cast<int64_t>(keys.size());
  std::vector<size_t> test, pool;  // pool: the other questions (demonstrations, distractors)
  for (size_t i = 0; i < items.size(); ++i) {
    (std::binary_search(keys.begin(), keys.end(), items[i].question) ? test : pool).push_back(i);
  }
  // Two demonstrations with two other passages each come from the pool.
  if (pool.size() < 6) {
    return absl::InvalidArgumentError(
        absl::StrCat(f->second, ": ", items.size(), " questions; ", req.task, " needs at least ",
                     n_draw + 6, " (", n_draw, " evaluated, 6 for the demonstrations)"));
  }
  const int64_t n_samples = std::min<int64_t>(o.num_samples, static_cast<int64_t>(test.size()));
  const double depth = req.gold_depth < 0 ? 0.5 : req.gold_depth;
  const int64_t budget = req.length - kHelmetRagMaxNewTokens;
  const std::string instruction(kHelmetRagInstruction);
  FOCAL_ASSIGN_OR_RETURN(const int64_t bos, o.count_tokens(""));
  std::vector<int64_t> passage_tokens(items.size(), -1);  // per passage, counted once
  std::vector<GenerationSample> out;
  for (int64_t si = 0; si < n_samples; ++si) {
    const NqItem& item = items[test[si]];
    // Demonstrations: HELMET's shuffle of its demo file with seed
    // int(sha256(question)) % 2^31, the first two; each with its gold
    // passage and the next two shuffled questions' passages.
    const uint32_t h = HelmetItemSeed(item.question, 0);
    const std::vector<int64_t> perm = NumpyPermutation(h, static_cast<int64_t>(pool.size()));
    std::string demos;
    for (int d = 0; d < 2; ++d) {
      const NqItem& demo = items[pool[perm[d]]];
      absl::StrAppend(&demos, Passage(demo), "\n\n", Passage(items[pool[perm[2 + 2 * d]]]), "\n\n",
                      Passage(items[pool[perm[3 + 2 * d]]]), "\n\nQuestion: ", demo.question,
                      "\nAnswer: ", demo.answers[0], "\n\n");
    }
    // Distractors: the other questions' gold passages in a seeded order
    // (the demonstrations' own excluded).
    std::vector<size_t> distract;
    for (size_t k = 6; k < pool.size(); ++k) distract.push_back(pool[perm[k]]);
    PyRandom rng(SampleSeed(o.seed, req.task, si));
    Shuffle(rng, distract);
    const std::string question = absl::StrCat("\n\nQuestion: ", item.question, "\nAnswer:");
    auto context = [&](int64_t n) {
      const int64_t at = std::llround(depth * static_cast<double>(n));
      std::string c;
      for (int64_t k = 0; k <= n; ++k) {
        const NqItem& p = k == at ? item : items[distract[k < at ? k : k - 1]];
        absl::StrAppend(&c, k == 0 ? "" : "\n\n", Passage(p));
      }
      return c;
    };
    auto count = [&](int64_t k) {
      return o.count_tokens(instruction + demos + context(k) + question);
    };
    auto passage = [&](int64_t k) -> absl::StatusOr<int64_t> {
      int64_t& t = passage_tokens[distract[k]];
      if (t < 0) {
        FOCAL_ASSIGN_OR_RETURN(t, PieceTokens(o, "\n\n" + Passage(items[distract[k]]), bos));
      }
      return t;
    };
    FOCAL_ASSIGN_OR_RETURN(
        int64_t n, FitItems(0, static_cast<int64_t>(distract.size()), budget, count, passage));
    if (n < 0) {
      return absl::OutOfRangeError(
          absl::StrCat(req.task, " sample ", si, ": ", req.length,
                       " tokens cannot hold the demonstrations and the gold"
                       " passage"));
    }
    GenerationSample s;
    s.task = req.task;
    s.length = req.length;
    s.index = si;
    s.meta["num_passages"] = absl::StrCat(n + 1);
    s.meta["gold_index"] = absl::StrCat(std::llround(depth * static_cast<double>(n)));
    s.meta["approximation"] = "distractors are other questions' gold passages, not retrieved";
    auto input = FitHelmetPrompt(instruction + demos, context(n), question, budget, o, s.meta);
    if (!input.ok()) return Annotate(input.status(), absl::StrCat(req.task, " sample ", si));
    s.input = *std::move(input);
    s.outputs = item.answers;
    s.max_new_tokens = kHelmetRagMaxNewTokens;  // no stop: HELMET scores the whole output
    out.push_back(std::move(s));
  }
  return out;
}

FOCAL_REGISTER_GENERATOR(helmet_json_kv, {.id = "helmet_json_kv", .make = MakeJsonKv});
FOCAL_REGISTER_GENERATOR(helmet_rag_nq,
                         {.id = "helmet_rag_nq", .uses_gold_depth = true, .make = MakeRagNq});

}  // namespace
}  // namespace focal::datasets
