// SPDX-License-Identifier: Apache-2.0
// A GGUF checkpoint (model/gguf.h, model/gguf_model.h, the GGUF tokenizer
// of model/tokenizer_loader.h), read as LanguageModel::Load reads one:
// header, metadata and tensor infos, then the model config, the embedded
// tokenizer and the tensors (dequantized) checked against the config.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "model/gguf.h"
#include "model/gguf_model.h"
#include "model/tokenizer_loader.h"
#include "model/weights.h"
#include "tests/fuzz/fuzz_tokenizer_util.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace focal::model;
  const std::string path = focal::fuzz::WriteScratch("model.gguf", focal::fuzz::AsText(data, size));
  auto opened = GgufFile::Open(path);
  if (!opened.ok()) return 0;
  std::shared_ptr<const GgufFile> f = std::move(*opened);
  volatile size_t sink = 0;
  // Every typed getter on every key: each either fits or is an error.
  for (const auto& [key, v] : f->metadata()) {
    sink = sink + v.TypeString().size() + f->GetU32(key).ok() + f->GetU64(key).ok() +
           f->GetInt(key).ok() + f->GetFloat(key).ok() + f->GetBool(key).ok() +
           f->GetString(key).ok() + f->GetStringArray(key).ok() + f->GetF32Array(key).ok() +
           f->GetI32Array(key).ok() + f->GetIntArray(key).ok();
    if (v.type() == GgufValueType::kArray && v.size() > 0) {
      sink = sink + v.Element(0).TypeString().size() + v.Element(v.size() - 1).AsInt().has_value();
    }
  }
  for (const GgufTensor& t : f->tensors()) {
    if (t.bytes > 0) sink = sink + t.data[0] + t.data[t.bytes - 1];
  }
  sink = sink + ReadGgufTokenizer(*f).ok();
  if (auto tok = LoadTokenizer(*f); tok.ok()) focal::fuzz::ExerciseTokenizer(**tok);
  auto config = GgufModelConfig(*f);
  if (config.ok()) {
    auto store = GgufTensorStore(f, *config, GgufData::kNow);
    if (store.ok()) sink = sink + LoadLlamaWeights(*config, *store, nullptr).ok();
  }
  (void)sink;
  return 0;
}
