// SPDX-License-Identifier: Apache-2.0
// Finished generations by request key, kept in a JSONL log so an interrupted
// long-context run resumes without generating them again.
#ifndef FOCAL_ENGINE_GENERATION_CACHE_H_
#define FOCAL_ENGINE_GENERATION_CACHE_H_

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "engine/generator.h"
#include "engine/jsonl_log.h"

namespace focal::engine {

struct CachedGeneration {
  std::string text;
  std::string finish;
};

class GenerationCache {
 public:
  // Reads the log at `path` (created when missing), keeping its entries.
  absl::Status Open(const std::string& path);
  const CachedGeneration* Find(const std::string& k) const;
  // Records a generation, appended to the log when one is open.
  absl::Status Add(const std::string& k, const CachedGeneration& g);

 private:
  std::optional<JsonlLog> log_;
  absl::flat_hash_map<std::string, CachedGeneration> map_;
};

// The SHA-256 of a request's prompt ids, token budget and stop strings.
std::string RequestKey(const GenerationRequest& r);

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_GENERATION_CACHE_H_
