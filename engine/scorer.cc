// SPDX-License-Identifier: Apache-2.0
#include "engine/scorer.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json.h"
#include "base/json_writer.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "base/work_queue.h"
#include "model/unicode.h"

namespace focal::engine {
namespace {

// Python's str.isspace(): Unicode White_Space plus U+001C..U+001F.
bool IsPySpace(char32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
         c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000;
}

// The length of `s` after Python's str.rstrip(), which lm-eval applies to
// the context: a trailing no-break or ideographic space moves too.
size_t RstripLength(absl::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    size_t prefix = 0;
    if (Utf8WellFormedAt(s, start, &prefix) != end - start) break;  // not one code point
    size_t pos = start;
    if (!IsPySpace(model::DecodeUtf8(s, &pos))) break;
    end = start;
  }
  return end;
}

// Adds one scored token to a continuation's loglikelihood and greediness.
void Accumulate(const model::TokenScore& s, int32_t target, tasks::LoglikelihoodResult& res) {
  res.ll += s.logprob;
  res.is_greedy = res.is_greedy && s.argmax == target;
}

// A distinct request still to compute (owners: every request that is it).
struct Unit {
  std::vector<int32_t> feed;            // what follows the prefix: continuation[:-1]
  const std::vector<int32_t>* targets;  // the continuation
  std::string key;
  std::vector<int64_t> owners;             // indices into `requests`
  std::vector<int64_t> feed_rows;          // rows of `feed` that are scored
  absl::Span<const int32_t> feed_targets;  // and the tokens they predict
};
// The distinct requests that share one context (their prefix).
struct Group {
  std::vector<int32_t> prefix;
  std::vector<Unit> units;
  std::vector<int64_t> rows;    // the prefix's last row (past the stem), once per unit
  std::vector<int32_t> firsts;  // each unit's first target
  int64_t stem = 0;             // leading prefix tokens computed once for its cluster
  size_t cluster = 0;           // groups of a cluster share the stem; adjacent in `order`
  int64_t tokens = 0;           // prefix past the stem, plus every unit's feed
};

// Clusters: groups whose prefixes begin with the same stem of at least
// `min_stem` tokens (BoolQ's questions on one passage, HellaSwag's repeated
// captions, a few-shot block) compute it once per chunk, and each prefix
// continues from a copy of its cache. Scores are unchanged: a row's
// arithmetic does not depend on how its sequence is cut. Sets each group's
// stem; every group lands in one cluster.
std::vector<std::vector<Group*>> ClusterByStem(std::map<std::vector<int32_t>, Group>& groups,
                                               int64_t min_stem) {
  std::vector<std::vector<Group*>> clusters;
  std::vector<Group*> members;
  int64_t stem = 0;
  auto close = [&] {
    // Every member keeps at least its last prefix token to compute: its
    // row scores the continuations' first tokens.
    for (Group* g : members) g->stem = members.size() > 1 ? stem : 0;
    if (!members.empty()) clusters.push_back(std::move(members));
    members.clear();
  };
  // The map's order is lexicographic, so prefixes that begin alike sit
  // together; a group joins while that does not lose shared tokens.
  for (auto& [p, g] : groups) {
    if (!members.empty() && min_stem > 0) {
      const std::vector<int32_t>& head = members.front()->prefix;
      int64_t l = 0;
      const int64_t most = std::min<int64_t>(stem, static_cast<int64_t>(p.size()) - 1);
      while (l < most && head[l] == p[l]) ++l;
      const auto n = static_cast<int64_t>(members.size());
      if (l >= min_stem && n * l > (n - 1) * stem) {
        stem = l;
        members.push_back(&g);
        continue;
      }
    }
    close();
    members.push_back(&g);
    stem = static_cast<int64_t>(p.size()) - 1;
  }
  close();
  return clusters;
}

}  // namespace

std::string TokenizedRequest::Key() const {
  Sha256 h;
  const uint64_t n = input.size();
  h.Update(&n, sizeof(n));
  h.Update(input.data(), input.size() * sizeof(int32_t));
  h.Update(continuation.data(), continuation.size() * sizeof(int32_t));
  return h.HexDigest();
}

bool ResolveAddBos(BosPolicy policy, const model::Tokenizer& tok) {
  return policy == BosPolicy::kAlways || (policy == BosPolicy::kAuto && tok.adds_bos());
}

absl::StatusOr<TokenizedRequest> TokenizeRequest(const model::Tokenizer& tok, bool add_bos,
                                                 int64_t max_length,
                                                 const tasks::LoglikelihoodRequest& req) {
  std::string context = req.context, continuation = req.continuation;
  std::vector<int32_t> ctx, cont;
  // lm-eval's prefix_token_id: what an empty context is, and whose text at
  // the start of a string turns its special tokens off.
  const int32_t prefix = tok.bos_id() >= 0 ? tok.bos_id() : tok.eos_id();
  const std::string prefix_text = prefix >= 0 ? tok.IdToPiece(prefix) : std::string();
  auto encode = [&](absl::string_view text) {
    const bool spelt = !prefix_text.empty() && absl::StartsWith(text, prefix_text);
    return tok.Encode(text, add_bos && !spelt);
  };
  if (context.empty()) {
    if (prefix < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "empty context before '", req.continuation.substr(0, 60),
          "': the tokenizer has neither BOS nor EOS to stand for it (", tok.path(), ")"));
    }
    FOCAL_ASSIGN_OR_RETURN(cont, tok.Encode(continuation, /*add_bos=*/false));
    ctx = {prefix};
    // The continuation's own leading prefix token is the context then.
    if (!cont.empty() && cont.front() == prefix) cont.erase(cont.begin());
  } else {
    const size_t keep = RstripLength(context);
    continuation = context.substr(keep) + continuation;
    context.resize(keep);
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> whole, encode(context + continuation));
    FOCAL_ASSIGN_OR_RETURN(ctx, encode(context));
    if (ctx.empty()) {
      // Whitespace only, and no BOS: nothing would precede the continuation's
      // first token (lm-eval's HF backend has no defined score here either).
      return absl::InvalidArgumentError(absl::StrCat(
          "context '", absl::CEscape(req.context.substr(0, 60)),
          "' is only whitespace and requests get no BOS: no token precedes continuation '",
          req.continuation.substr(0, 60), "'"));
    }
    if (whole.size() >= ctx.size()) cont.assign(whole.begin() + ctx.size(), whole.end());
  }
  if (cont.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("continuation '", req.continuation,
                                                   "' encodes to no tokens after context '",
                                                   req.context.substr(0, 60), "...'"));
  }
  TokenizedRequest out;
  if (static_cast<int64_t>(cont.size()) > max_length) {
    // The continuation alone overflows the window (e.g. a 624-token PIQA
    // solution at 512 positions): only its last max_length tokens can be
    // predicted from inside the window, so only they are scored, and the
    // request is counted as truncated. (lm-eval has no defined result here.)
    cont.erase(cont.begin(), cont.end() - max_length);
    out.continuation_truncated = true;
  }
  std::vector<int32_t> full = ctx;
  full.insert(full.end(), cont.begin(), cont.end());
  // lm-eval: (context + continuation)[-(max_length + 1):][:-1].
  const int64_t keep_from =
      std::max<int64_t>(0, static_cast<int64_t>(full.size()) - (max_length + 1));
  out.truncated = keep_from > 0 || out.continuation_truncated;
  out.input.assign(full.begin() + keep_from, full.end() - 1);
  out.continuation = std::move(cont);
  return out;
}

absl::StatusOr<ResultCache> ResultCache::Open(const std::string& path) {
  absl::flat_hash_map<std::string, tasks::LoglikelihoodResult> map;
  FOCAL_ASSIGN_OR_RETURN(JsonlLog log, JsonlLog::Open(path, [&](const JsonValue& v) {
                           const JsonValue* k = v.Find("k");
                           const JsonValue* ll = v.Find("ll");
                           const JsonValue* g = v.Find("g");
                           if (k && k->is_string() && ll && ll->is_number() && g && g->is_bool()) {
                             map[k->string_value()] = {ll->number(), g->bool_value()};
                           }
                         }));
  ResultCache c(std::move(log));
  c.map_ = std::move(map);
  return c;
}

const tasks::LoglikelihoodResult* ResultCache::Find(const std::string& key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

absl::Status ResultCache::Add(
    const std::vector<std::pair<std::string, tasks::LoglikelihoodResult>>& items) {
  std::string text;
  for (const auto& [k, r] : items) {
    map_[k] = r;
    absl::StrAppend(&text,
                    JsonObjectWriter(/*compact=*/true)
                        .String("k", k)
                        .Double("ll", r.ll)
                        .Bool("g", r.is_greedy)
                        .Finish(),
                    "\n");
  }
  return log_.Append(text);
}

absl::StatusOr<std::vector<tasks::LoglikelihoodResult>> ScoreRequests(
    model::Transformer& tf, absl::Span<const TokenizedRequest> requests, ResultCache& cache,
    const ScorerOptions& options, ScoreStats* stats) {
  model::Transformer* const one[] = {&tf};
  return ScoreRequests(one, requests, cache, options, stats);
}

absl::StatusOr<std::vector<tasks::LoglikelihoodResult>> ScoreRequests(
    absl::Span<model::Transformer* const> replicas, absl::Span<const TokenizedRequest> requests,
    ResultCache& cache, const ScorerOptions& options, ScoreStats* stats) {
  model::Transformer& tf = *replicas[0];
  const int64_t total = static_cast<int64_t>(requests.size());
  std::vector<tasks::LoglikelihoodResult> results(total);
  // Distinct requests still to compute, grouped by their shared prefix: the
  // whole context, so that its last row, which predicts the first token of
  // every continuation sharing it, runs once (Unit, Group above).
  // Learned sequence_mean models score each request in one forward call over
  // its whole input (an empty shared prefix): their tau is a mean over the
  // sequence, so a context scored apart would see another tau.
  const bool whole = tf.config().focal.NeedsWholeSequence();
  std::map<std::vector<int32_t>, Group> groups;
  // Whole-sequence requests share nothing: one group each, so that the token
  // budget still cuts them into chunks and the resume log fills as they end.
  std::deque<Group> solo;
  std::map<std::string, std::pair<Group*, size_t>> unit_of_key;
  int64_t done = 0;
  for (int64_t i = 0; i < total; ++i) {
    const TokenizedRequest& r = requests[i];
    std::string key = r.Key();
    if (const auto* hit = cache.Find(key)) {
      results[i] = *hit;
      ++done;
      if (stats) ++stats->cached;
      continue;
    }
    if (auto it = unit_of_key.find(key); it != unit_of_key.end()) {
      it->second.first->units[it->second.second].owners.push_back(i);
      continue;
    }
    // Input row `first` predicts the continuation's first token.
    const int64_t first =
        static_cast<int64_t>(r.input.size()) - static_cast<int64_t>(r.continuation.size());
    if (first < 0 || r.continuation.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, ": ", r.continuation.size(), " continuation tokens after ", r.input.size(),
          " input tokens; no token precedes the first one to predict it"));
    }
    const int64_t split = whole ? 0 : first + 1;
    std::vector<int32_t> prefix(r.input.begin(), r.input.begin() + split);
    Group& g = whole ? solo.emplace_back() : groups[prefix];
    g.prefix = prefix;
    const int64_t on_prefix = whole ? 0 : 1;
    std::vector<int64_t> feed_rows;
    for (int64_t t = on_prefix; t < static_cast<int64_t>(r.continuation.size()); ++t) {
      feed_rows.push_back(first + t - split);
    }
    Unit u{std::vector<int32_t>(r.input.begin() + split, r.input.end()),
           &r.continuation,
           key,
           {i},
           std::move(feed_rows),
           absl::MakeConstSpan(r.continuation).subspan(on_prefix)};
    if (!whole) {
      g.rows.push_back(split - 1);
      g.firsts.push_back(r.continuation.front());
    }
    g.units.push_back(std::move(u));
    unit_of_key[key] = {&g, g.units.size() - 1};
  }
  std::vector<std::vector<Group*>> clusters = ClusterByStem(groups, options.min_stem_tokens);
  for (Group& g : solo) clusters.push_back({&g});
  for (auto& members : clusters) {
    for (Group* g : members) {
      g->cluster = static_cast<size_t>(&members - clusters.data());
      for (int64_t& r : g->rows) r -= g->stem;
      g->tokens = static_cast<int64_t>(g->prefix.size()) - g->stem;
      for (const Unit& u : g->units) g->tokens += static_cast<int64_t>(u.feed.size());
    }
  }
  // Longest first (lm-eval's order): the biggest batch comes first, so a
  // memory problem shows at once and the ETA errs on the safe side. A
  // cluster goes where its longest request would, its groups together.
  auto length = [](const Group* g) { return g->prefix.size() + g->units[0].feed.size(); };
  for (auto& members : clusters) {
    std::stable_sort(members.begin(), members.end(),
                     [&](const Group* a, const Group* b) { return length(a) > length(b); });
  }
  std::vector<std::vector<Group*>*> by_length;
  for (auto& members : clusters) by_length.push_back(&members);
  std::stable_sort(by_length.begin(), by_length.end(), [&](const auto* a, const auto* b) {
    return length(a->front()) > length(b->front());
  });
  std::vector<Group*> order;
  for (const auto* members : by_length) order.insert(order.end(), members->begin(), members->end());
  // A group's stem is computed in a chunk unless the group before it in the
  // chunk has the same one.
  auto new_stem = [&order](size_t g, size_t first) {
    return order[g]->stem > 0 && (g == first || order[g - 1]->cluster != order[g]->cluster);
  };
  // Chunks of whole groups within the token budget (at least one group),
  // fixed before any runs: which replica computes a chunk changes nothing.
  struct Chunk {
    size_t begin, end;
    int64_t tokens;
  };
  std::vector<Chunk> chunks;
  for (size_t gi = 0; gi < order.size();) {
    size_t gj = gi;
    int64_t budget = 0;
    while (gj < order.size()) {
      const int64_t cost = order[gj]->tokens + (new_stem(gj, gi) ? order[gj]->stem : 0);
      if (gj > gi && budget + cost > options.batch_tokens) break;
      budget += cost;
      ++gj;
    }
    chunks.push_back({gi, gj, budget});
    gi = gj;
  }
  // One chunk on one replica: each continuation's unit and result.
  using Scored = std::vector<std::pair<const Unit*, tasks::LoglikelihoodResult>>;
  auto run_chunk = [&order, &new_stem](model::Transformer& replica, size_t gi,
                                       size_t gj) -> absl::StatusOr<Scored> {
    // Phase 0: each cluster's stem once, nothing scored.
    std::vector<model::KvCache> stem_caches;
    std::vector<model::SeqInput> batch;
    std::vector<std::vector<model::TokenScore>> out;
    for (size_t g = gi; g < gj; ++g) {
      if (!new_stem(g, gi)) continue;
      FOCAL_ASSIGN_OR_RETURN(model::KvCache c, replica.NewCache(order[g]->stem));
      stem_caches.push_back(std::move(c));
    }
    for (size_t g = gi, k = 0; g < gj; ++g) {
      if (!new_stem(g, gi)) continue;
      batch.push_back(
          {&stem_caches[k++], absl::MakeConstSpan(order[g]->prefix).first(order[g]->stem), {}, {}});
    }
    if (!batch.empty()) FOCAL_RETURN_IF_ERROR(replica.Forward(batch, out));
    // Phase 1: each distinct prefix once (past its stem, from a copy of the
    // stem's cache), packed together; its last row scores the first token of
    // each of its continuations.
    std::vector<model::KvCache> prefix_caches;
    prefix_caches.reserve(gj - gi);
    for (size_t g = gi, k = 0; g < gj; ++g) {
      // Phase 2 copies the prefix into caches sized for each continuation.
      const int64_t size = static_cast<int64_t>(order[g]->prefix.size());
      if (order[g]->stem == 0) {
        FOCAL_ASSIGN_OR_RETURN(model::KvCache c, replica.NewCache(size));
        prefix_caches.push_back(std::move(c));
        continue;
      }
      if (new_stem(g, gi)) ++k;
      FOCAL_ASSIGN_OR_RETURN(model::KvCache c, stem_caches[k - 1].Clone(replica.backend(), size));
      prefix_caches.push_back(std::move(c));
    }
    stem_caches.clear();
    batch.clear();
    for (size_t g = gi; g < gj; ++g) {
      const Group& grp = *order[g];
      if (grp.prefix.empty()) continue;
      batch.push_back({&prefix_caches[g - gi], absl::MakeConstSpan(grp.prefix).subspan(grp.stem),
                       grp.rows, grp.firsts});
    }
    if (!batch.empty()) FOCAL_RETURN_IF_ERROR(replica.Forward(batch, out));
    Scored scored;
    for (size_t g = gi, b = 0; g < gj; ++g) {
      const Group& grp = *order[g];
      for (size_t j = 0; j < grp.units.size(); ++j) {
        tasks::LoglikelihoodResult res{0.0, true};
        if (!grp.rows.empty()) Accumulate(out[b][j], grp.firsts[j], res);
        scored.emplace_back(&grp.units[j], res);
      }
      if (!grp.prefix.empty()) ++b;
    }
    // Phase 2: every continuation with tokens left to feed, against its own
    // copy of the prefix cache.
    std::vector<model::KvCache> caches;
    std::vector<size_t> fed;  // indices into `scored`
    for (size_t g = gi, k = 0; g < gj; ++g) {
      for (const Unit& u : order[g]->units) {
        if (!u.feed.empty()) {
          const int64_t length = static_cast<int64_t>(order[g]->prefix.size() + u.feed.size());
          FOCAL_ASSIGN_OR_RETURN(model::KvCache c,
                                 prefix_caches[g - gi].Clone(replica.backend(), length));
          caches.push_back(std::move(c));
          fed.push_back(k);
        }
        ++k;
      }
    }
    batch.clear();
    for (size_t f = 0; f < fed.size(); ++f) {
      const Unit& u = *scored[fed[f]].first;
      batch.push_back({&caches[f], u.feed, u.feed_rows, u.feed_targets});
    }
    if (!batch.empty()) FOCAL_RETURN_IF_ERROR(replica.Forward(batch, out));
    for (size_t f = 0; f < fed.size(); ++f) {
      auto& [u, res] = scored[fed[f]];
      for (size_t t = 0; t < out[f].size(); ++t) Accumulate(out[f][t], u->feed_targets[t], res);
    }
    return scored;
  };
  // Records a finished chunk (results, cache, stats, progress): one at a time.
  int64_t tokens = 0;
  auto record = [&](size_t c, const Scored& scored) -> absl::Status {
    const int64_t budget = chunks[c].tokens;
    std::vector<std::pair<std::string, tasks::LoglikelihoodResult>> fresh;
    for (const auto& [u, res] : scored) {
      for (int64_t owner : u->owners) results[owner] = res;
      done += static_cast<int64_t>(u->owners.size());
      fresh.emplace_back(u->key, res);
    }
    tokens += budget;
    if (stats) {
      stats->tokens_processed += budget;
      stats->unique += static_cast<int64_t>(scored.size());
    }
    FOCAL_RETURN_IF_ERROR(cache.Add(fresh));
    if (options.progress) options.progress(done, total, tokens);
    return absl::OkStatus();
  };
  if (replicas.size() == 1) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      FOCAL_ASSIGN_OR_RETURN(Scored scored, run_chunk(tf, chunks[c].begin, chunks[c].end));
      FOCAL_RETURN_IF_ERROR(record(c, scored));
    }
    return results;
  }
  // Several replicas: each takes the next chunk when free. The first error
  // stops them all; chunks finished before it are in the cache.
  std::mutex mu;  // results, stats, cache, progress
  FOCAL_RETURN_IF_ERROR(RunOnWorkers(replicas.size(), chunks.size(), [&](size_t r, size_t c) {
    absl::StatusOr<Scored> scored = run_chunk(*replicas[r], chunks[c].begin, chunks[c].end);
    std::lock_guard<std::mutex> lock(mu);
    absl::Status s = scored.ok() ? record(c, *scored) : scored.status();
    return Annotate(s, absl::StrCat("replica ", r, " (", replicas[r]->backend().name(), ")"));
  }));
  return results;
}

}  // namespace focal::engine
