// SPDX-License-Identifier: Apache-2.0
// The resume logs (engine/jsonl_log.h): the loglikelihood cache of a run
// (engine/scorer.h ResultCache) and, with the same fields checks as
// engine/long_context_runner.cc's generation cache, the long-context one.
// Opening repairs a torn last line and appends afterwards, as a rerun does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/jsonl_log.h"
#include "engine/scorer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace focal;
  const std::string text(reinterpret_cast<const char*>(data), size);
  volatile size_t sink = 0;
  {
    const std::string path = fuzz::WriteScratch("cache.jsonl", text);
    auto cache = engine::ResultCache::Open(path);
    if (cache.ok()) {
      sink = sink + cache->size() + (cache->Find("k") != nullptr);
      sink = sink + cache->Add({{"new", {-1.0, true}}}).ok();
    }
  }
  {
    const std::string path = fuzz::WriteScratch("generations.jsonl", text);
    auto log = engine::JsonlLog::Open(path, [&](const JsonValue& v) {
      const JsonValue* k = v.Find("k");
      const JsonValue* t = v.Find("text");
      const JsonValue* f = v.Find("finish");
      if (k && k->is_string() && t && t->is_string() && f && f->is_string()) {
        sink =
            sink + k->string_value().size() + t->string_value().size() + f->string_value().size();
      }
    });
    if (log.ok())
      sink = sink + log->Append("{\"k\":\"x\",\"text\":\"y\",\"finish\":\"stop\"}\n").ok();
  }
  (void)sink;
  return 0;
}
