// SPDX-License-Identifier: Apache-2.0
// A sharded checkpoint's model.safetensors.index.json, read by
// TensorStore::OpenDir (model/safetensors.h). The input is the index; the
// directory also holds two small valid shards (written once):
//   model-00001-of-00002.safetensors  model.embed_tokens.weight F32 [4, 2],
//                                     model.norm.weight F32 [2]
//   model-00002-of-00002.safetensors  lm_head.weight BF16 [4, 2]
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::string Shard(const std::string& header, size_t data_bytes) {
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  return file + header + std::string(data_bytes, '\x01');
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  focal::fuzz::WriteScratch(
      "model-00001-of-00002.safetensors",
      Shard(R"({"__metadata__":{"format":"pt"},)"
            R"("model.embed_tokens.weight":{"dtype":"F32","shape":[4,2],"data_offsets":[0,32]},)"
            R"("model.norm.weight":{"dtype":"F32","shape":[2],"data_offsets":[32,40]}})",
            40));
  focal::fuzz::WriteScratch(
      "model-00002-of-00002.safetensors",
      Shard(R"({"lm_head.weight":{"dtype":"BF16","shape":[4,2],"data_offsets":[0,16]}})", 16));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  focal::fuzz::WriteScratch("model.safetensors.index.json", focal::fuzz::AsText(data, size));
  auto store = focal::model::TensorStore::OpenDir(focal::fuzz::ScratchDir());
  if (store.ok()) {
    volatile size_t sink = store->files().size();
    for (const auto& [name, t] : store->tensors()) {
      if (store->Find(name) == nullptr) __builtin_trap();
      sink = sink + t.bytes;
    }
    (void)sink;
  }
  return 0;
}
