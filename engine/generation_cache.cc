// SPDX-License-Identifier: Apache-2.0
#include "engine/generation_cache.h"

#include <cstdint>
#include <utility>

#include "base/json.h"
#include "base/json_writer.h"
#include "base/sha256.h"
#include "base/status_macros.h"

namespace focal::engine {

absl::Status GenerationCache::Open(const std::string& path) {
  FOCAL_ASSIGN_OR_RETURN(JsonlLog log, JsonlLog::Open(path, [&](const JsonValue& v) {
                           const JsonValue* k = v.Find("k");
                           const JsonValue* t = v.Find("text");
                           const JsonValue* f = v.Find("finish");
                           if (k && k->is_string() && t && t->is_string() && f && f->is_string()) {
                             map_[k->string_value()] = {t->string_value(), f->string_value()};
                           }
                         }));
  log_ = std::move(log);
  return absl::OkStatus();
}

const CachedGeneration* GenerationCache::Find(const std::string& k) const {
  auto it = map_.find(k);
  return it == map_.end() ? nullptr : &it->second;
}

absl::Status GenerationCache::Add(const std::string& k, const CachedGeneration& g) {
  map_[k] = g;
  // A generation cut by the model's positions depends on
  // --allow-length-extrapolation, which the key does not hold: kept for this
  // run, not logged, so a resumed run generates it again under its own flag.
  if (!log_.has_value() || g.finish == "context") return absl::OkStatus();
  return log_->Append(JsonObjectWriter(/*compact=*/true)
                          .String("k", k)
                          .String("text", g.text)
                          .String("finish", g.finish)
                          .Finish() +
                      "\n");
}

std::string RequestKey(const GenerationRequest& r) {
  Sha256 h;
  h.Update(r.prompt.data(), r.prompt.size() * sizeof(int32_t));
  h.Update(&r.max_new_tokens, sizeof(r.max_new_tokens));
  for (const std::string& s : r.stop) {
    h.Update(s);
    h.Update("\x00", 1);
  }
  return h.HexDigest();
}

}  // namespace focal::engine
