// SPDX-License-Identifier: Apache-2.0
// config.json (model/config.h), focal_attention object included.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "model/config.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = focal::model::ParseModelConfig(focal::fuzz::AsText(data, size), "config.json");
  if (!c.ok()) return 0;
  volatile double sink = static_cast<double>(c->Variant().size());
  // What loading does with a config once the weights have matched it (the
  // weights bound head_dim and the layer count, so do not go further here).
  for (int64_t l = 0; l < std::min<int64_t>(c->num_layers, 64); ++l)
    sink = sink + c->ConstantScale(l);
  if (c->head_dim <= 4096) {
    for (float f : focal::model::RopeInvFreq(*c)) sink = sink + f;
  }
  // LanguageModel::Load checks the weights against the config next: with no
  // tensors that fails at the first one, after the sizes are worked out.
  const auto empty = focal::model::TensorStore::FromTensors({}, {}, nullptr);
  sink = sink + focal::model::LoadLlamaWeights(*c, empty, nullptr).ok();
  if (focal::model::OverrideFocalTemperature(*c, 0.5).ok()) sink = sink + c->Variant().size();
  (void)sink;
  return 0;
}
