// SPDX-License-Identifier: Apache-2.0
// The shared loglikelihood scheduler: tokenizes requests exactly as lm-eval
// does, answers repeats from a resume cache, computes each distinct context
// once (and the stem that several contexts begin with once per batch) and
// scores every continuation against a copy of its KV cache, packing work
// under a token budget. Results never depend on batch size or order.
#ifndef FOCAL_ENGINE_SCORER_H_
#define FOCAL_ENGINE_SCORER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/jsonl_log.h"
#include "model/language_model.h"
#include "tasks/task.h"

namespace focal::engine {

enum class BosPolicy { kAuto, kAlways, kNever };

// A request after tokenization: `input` is what the model reads (context plus
// continuation minus its last token, left-truncated to the model's length);
// the last continuation.size() positions are scored against `continuation`.
struct TokenizedRequest {
  std::vector<int32_t> input;
  std::vector<int32_t> continuation;
  bool truncated = false;               // anything cut on the left
  bool continuation_truncated = false;  // the continuation itself was cut
  std::string Key() const;              // hex SHA-256 of the exact token sequences
};

// Whether requests get BOS under `policy`: always, never, or (auto) the
// tokenizer's own convention (Tokenizer::adds_bos), as lm-eval's HF backend
// encodes with add_special_tokens=True by default.
bool ResolveAddBos(BosPolicy policy, const model::Tokenizer& tok);

// lm-eval's request encoding (0.4.13 HFLM: loglikelihood, _encode_pair,
// tok_encode): trailing whitespace of the context moves to the continuation;
// the continuation is encode(context + continuation) minus the
// encode(context) prefix. BOS goes first when `add_bos`, except on a string
// that already starts with the prefix token's text (lm-eval's
// has_bos_prefix). An empty context becomes [prefix token] (BOS, else EOS)
// and the continuation is encoded without BOS; when that encoding itself
// starts with the prefix token, that token is the context instead. Then
// lm-eval's left truncation to `max_length`.
absl::StatusOr<TokenizedRequest> TokenizeRequest(const model::Tokenizer& tok, bool add_bos,
                                                 int64_t max_length,
                                                 const tasks::LoglikelihoodRequest& req);

// Finished results by request key, persisted as JSON lines so an interrupted
// run resumes where it stopped. A torn last line (crash mid-write) is ignored.
class ResultCache {
 public:
  // An empty path keeps the cache in memory only.
  static absl::StatusOr<ResultCache> Open(const std::string& path);
  const tasks::LoglikelihoodResult* Find(const std::string& key) const;
  // Appends and flushes to disk before returning.
  absl::Status Add(const std::vector<std::pair<std::string, tasks::LoglikelihoodResult>>& items);
  size_t size() const { return map_.size(); }

 private:
  explicit ResultCache(JsonlLog log) : log_(std::move(log)) {}
  JsonlLog log_;
  absl::flat_hash_map<std::string, tasks::LoglikelihoodResult> map_;
};

struct ScoreStats {
  int64_t tokens_processed = 0;  // tokens run through the model
  int64_t cached = 0;            // requests answered from the cache
  int64_t unique = 0;            // distinct requests computed
};

struct ScorerOptions {
  int64_t batch_tokens = 4096;  // tokens per forward call (one oversized unit runs alone)
  // Contexts that begin with the same tokens, at least this many, compute
  // them once per batch (0: never). Scores are the same either way.
  int64_t min_stem_tokens = 16;
  // Called after each forward batch with (requests done, total, tokens so far).
  std::function<void(int64_t, int64_t, int64_t)> progress;
};

// Scores `requests` (results in the same order).
absl::StatusOr<std::vector<tasks::LoglikelihoodResult>> ScoreRequests(
    model::Transformer& tf, absl::Span<const TokenizedRequest> requests, ResultCache& cache,
    const ScorerOptions& options, ScoreStats* stats);

// The same on several replicas of one model (one per device, identical
// weights): packed chunks go to whichever replica is free. Every score is
// batch-invariant, so the results are bit-identical to one replica's.
absl::StatusOr<std::vector<tasks::LoglikelihoodResult>> ScoreRequests(
    absl::Span<model::Transformer* const> replicas, absl::Span<const TokenizedRequest> requests,
    ResultCache& cache, const ScorerOptions& options, ScoreStats* stats);

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_SCORER_H_
