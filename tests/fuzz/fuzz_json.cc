// SPDX-License-Identifier: Apache-2.0
// The strict JSON reader (base/json.h): config.json, safetensors headers,
// tokenizer.json, dataset records and the resume logs all go through it.
#include <cstddef>
#include <cstdint>

#include "base/json.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Touches every value through the accessors (each checks its type).
size_t Walk(const focal::JsonValue& v) {
  using T = focal::JsonValue::Type;
  switch (v.type()) {
    case T::kNull:
      return 1;
    case T::kBool:
      return v.bool_value() ? 1 : 2;
    case T::kNumber:
      return v.is_integer() ? static_cast<size_t>(v.integer() & 1) : v.number() > 0;
    case T::kString:
      return v.string_value().size();
    case T::kArray: {
      size_t n = 0;
      for (const focal::JsonValue& x : v.array()) n += Walk(x);
      return n;
    }
    case T::kObject: {
      size_t n = 0;
      for (const auto& [k, x] : v.members()) {
        if (v.members().size() <= 64 && v.Find(k) != &x) __builtin_trap();  // unique keys
        n += k.size() + Walk(x);
      }
      return n;
    }
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto v = focal::ParseJson(focal::fuzz::AsText(data, size), "fuzz.json");
  if (v.ok()) {
    volatile size_t sink = Walk(*v);
    (void)sink;
  }
  return 0;
}
