// SPDX-License-Identifier: Apache-2.0
// A sentencepiece tokenizer.model (model/sentencepiece_tokenizer.h), loaded
// as a checkpoint directory's tokenizer by LoadTokenizer.
#include <cstddef>
#include <cstdint>

#include "model/tokenizer_loader.h"
#include "tests/fuzz/fuzz_tokenizer_util.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  focal::fuzz::WriteScratch("tokenizer.model", focal::fuzz::AsText(data, size));
  auto tok = focal::model::LoadTokenizer(focal::fuzz::ScratchDir());
  if (tok.ok()) focal::fuzz::ExerciseTokenizer(**tok);
  return 0;
}
