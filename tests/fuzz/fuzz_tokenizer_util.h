// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets do with a tokenizer that loaded: encode and decode a
// few fixed texts (ASCII, whitespace runs, multi-byte UTF-8, special-token
// spellings, invalid UTF-8) and ids at and past the vocabulary's ends.
#ifndef FOCAL_TESTS_FUZZ_FUZZ_TOKENIZER_UTIL_H_
#define FOCAL_TESTS_FUZZ_FUZZ_TOKENIZER_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/bpe_tokenizer.h"
#include "model/tokenizer.h"

namespace focal::fuzz {

inline void ExerciseTokenizer(const model::Tokenizer& tok) {
  static const char* const kTexts[] = {
      "Hello world! It's 2024.",
      "  two  spaces\tand\nnewlines  ",
      "\xc3\xbc"
      "n"
      "\xc3\xaf"
      "c"
      "\xc3\xb6"
      "d"
      "\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa4\x96",
      "<s>a</s><unk><|endoftext|><pad>",
      "",
      "bad \xff\xfe utf-8",
  };
  volatile size_t sink = 0;
  const auto* bpe = dynamic_cast<const model::BpeTokenizer*>(&tok);
  for (const char* text : kTexts) {
    for (bool bos : {false, true}) {
      auto ids = tok.Encode(text, bos);
      if (!ids.ok()) continue;
      for (int32_t id : *ids) sink = sink + tok.IdToPiece(id).size();
      auto back = tok.Decode(*ids);
      if (back.ok()) sink = sink + back->size();
    }
    if (bpe != nullptr) {
      auto ids = bpe->EncodeWithSpecialTokens(text);
      if (ids.ok()) sink = sink + ids->size();
    }
  }
  const int32_t n = tok.vocab_size();
  std::vector<int32_t> all;
  for (int32_t id = 0; id < n && id < 64; ++id) all.push_back(id);
  for (int32_t id : {-1, n, n + 1, tok.bos_id(), tok.eos_id()}) {
    sink = sink + tok.IdToPiece(id).size();
    auto one = tok.Decode(std::vector<int32_t>{id});
    if (one.ok()) sink = sink + one->size();
  }
  auto text = tok.Decode(all);
  if (text.ok()) sink = sink + text->size();
  sink = sink + tok.adds_bos() + tok.name().size() + tok.path().size() + tok.sha256().size();
  (void)sink;
}

}  // namespace focal::fuzz

#endif  // FOCAL_TESTS_FUZZ_FUZZ_TOKENIZER_UTIL_H_
