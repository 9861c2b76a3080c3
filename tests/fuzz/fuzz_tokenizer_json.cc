// SPDX-License-Identifier: Apache-2.0
// An HF tokenizer.json (model/bpe_tokenizer.h), loaded as a checkpoint
// directory's tokenizer by LoadTokenizer (model/tokenizer_loader.h). Input:
// tokenizer.json, optionally followed by kFileSeparator and the
// tokenizer_config.json that sits beside it.
#include <cstddef>
#include <cstdint>

#include "model/tokenizer_loader.h"
#include "tests/fuzz/fuzz_tokenizer_util.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto files = focal::fuzz::SplitFiles(focal::fuzz::AsText(data, size), 2);
  focal::fuzz::WriteScratch("tokenizer.json", files[0]);
  if (files.size() > 1) {
    focal::fuzz::WriteScratch("tokenizer_config.json", files[1]);
  } else {
    focal::fuzz::RemoveScratch("tokenizer_config.json");
  }
  auto tok = focal::model::LoadTokenizer(focal::fuzz::ScratchDir());
  if (tok.ok()) focal::fuzz::ExerciseTokenizer(**tok);
  return 0;
}
