// SPDX-License-Identifier: Apache-2.0
#include "engine/generator.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/cpu_backend.h"

namespace focal::engine {
namespace {

struct Active {
  size_t request;
  model::KvCache cache;
  std::vector<int32_t> generated;
  int32_t next = 0;  // the token to feed next
};

// Cuts `text` before the earliest stop string; true if one was found.
bool CutAtStop(std::string& text, const std::vector<std::string>& stop) {
  size_t cut = std::string::npos;
  for (const std::string& s : stop) {
    if (s.empty()) continue;
    cut = std::min(cut, text.find(s));
  }
  if (cut == std::string::npos) return false;
  text.resize(cut);
  return true;
}

}  // namespace

absl::StatusOr<std::vector<GenerationResult>> GenerateGreedy(
    model::Transformer& tf, const model::Tokenizer& tok,
    absl::Span<const GenerationRequest> requests, const GenerationOptions& options) {
  if (options.prefill_chunk < 1 || options.max_batch < 1) {
    return absl::InvalidArgumentError("prefill chunk and batch size must be >= 1");
  }
  std::vector<GenerationResult> results(requests.size());
  size_t next_request = 0;
  int64_t done = 0;
  std::vector<Active> active;
  std::vector<std::vector<model::TokenScore>> out;
  auto finish = [&](Active& a, const std::string& why) -> absl::Status {
    GenerationResult& r = results[a.request];
    r.tokens = a.generated;
    FOCAL_ASSIGN_OR_RETURN(r.text, tok.DecodeGenerated(a.generated));
    const bool cut = CutAtStop(r.text, requests[a.request].stop);
    r.finish = cut ? "stop" : why;
    ++done;
    if (options.progress) options.progress(done, static_cast<int64_t>(requests.size()));
    return absl::OkStatus();
  };
  while (next_request < requests.size() || !active.empty()) {
    // Admit new sequences: chunked prefill, one sequence at a time, so memory
    // holds one chunk of activations whatever the prompt length.
    while (static_cast<int64_t>(active.size()) < options.max_batch &&
           next_request < requests.size()) {
      const GenerationRequest& req = requests[next_request];
      if (req.prompt.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("generation request ", next_request, " has an empty prompt"));
      }
      Active a{next_request++, model::KvCache(0, 0), {}, 0};
      FOCAL_ASSIGN_OR_RETURN(
          a.cache, tf.NewCache(static_cast<int64_t>(req.prompt.size()) + req.max_new_tokens));
      if (req.max_new_tokens <= 0) {
        FOCAL_RETURN_IF_ERROR(finish(a, "length"));
        continue;
      }
      const int64_t n = static_cast<int64_t>(req.prompt.size());
      // A learned sequence_mean model reads its whole prompt in one call:
      // its tau is a mean over the sequence, so chunks would see other taus.
      const int64_t chunk = tf.config().focal.NeedsWholeSequence() ? n : options.prefill_chunk;
      for (int64_t b = 0; b < n; b += chunk) {
        const int64_t len = std::min(chunk, n - b);
        const bool last = b + len == n;
        const int64_t row = len - 1;
        const int32_t dummy = 0;
        model::SeqInput in{&a.cache, absl::MakeConstSpan(req.prompt).subspan(b, len),
                           last ? absl::MakeConstSpan(&row, 1) : absl::Span<const int64_t>(),
                           last ? absl::MakeConstSpan(&dummy, 1) : absl::Span<const int32_t>()};
        FOCAL_RETURN_IF_ERROR(tf.Forward(absl::MakeConstSpan(&in, 1), out));
        if (last) a.next = out[0][0].argmax;
      }
      active.push_back(std::move(a));
    }
    // Record each sequence's pending token, retire finished ones.
    std::vector<Active> still;
    for (Active& a : active) {
      const GenerationRequest& req = requests[a.request];
      if (std::find(options.stop_ids.begin(), options.stop_ids.end(), a.next) !=
          options.stop_ids.end()) {
        FOCAL_RETURN_IF_ERROR(finish(a, "eos"));
        continue;
      }
      a.generated.push_back(a.next);
      if (!req.stop.empty()) {
        FOCAL_ASSIGN_OR_RETURN(std::string text, tok.DecodeGenerated(a.generated));
        if (CutAtStop(text, req.stop)) {
          FOCAL_RETURN_IF_ERROR(finish(a, "stop"));
          continue;
        }
      }
      if (static_cast<int64_t>(a.generated.size()) >= req.max_new_tokens) {
        FOCAL_RETURN_IF_ERROR(finish(a, "length"));
        continue;
      }
      // The next step would feed this token at a position the model does not
      // have (a prompt plus max_new_tokens over max_position_embeddings, as
      // RULER's fwe builds at the model's own length): the context is full.
      if (!tf.FitsPositions(a.cache.length() + 1)) {
        FOCAL_RETURN_IF_ERROR(finish(a, "context"));
        continue;
      }
      still.push_back(std::move(a));
    }
    active = std::move(still);
    if (active.empty()) continue;
    // One decode step for every active sequence, packed into one call.
    std::vector<model::SeqInput> batch;
    const int64_t row = 0;
    const int32_t dummy = 0;
    for (Active& a : active) {
      batch.push_back({&a.cache, absl::MakeConstSpan(&a.next, 1), absl::MakeConstSpan(&row, 1),
                       absl::MakeConstSpan(&dummy, 1)});
    }
    FOCAL_RETURN_IF_ERROR(tf.Forward(batch, out));
    for (size_t k = 0; k < active.size(); ++k) active[k].next = out[k][0].argmax;
  }
  return results;
}

}  // namespace focal::engine
