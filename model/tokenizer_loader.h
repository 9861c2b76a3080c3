// SPDX-License-Identifier: Apache-2.0
// LoadTokenizer: the tokenizer of a checkpoint directory, its implementation
// chosen by the files present.
#ifndef FOCAL_MODEL_TOKENIZER_LOADER_H_
#define FOCAL_MODEL_TOKENIZER_LOADER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/gguf.h"
#include "model/tokenizer.h"

namespace focal::model {

// MODEL_DIR/tokenizer.model gives a SentencePieceTokenizer (preferred when
// tokenizer.json is there too: HF's Llama tokenizer.json is converted from it,
// and it is what results so far were scored with); otherwise
// MODEL_DIR/tokenizer.json gives a BpeTokenizer (with tokenizer_config.json
// beside it when present), Unimplemented when it uses a component that is not
// implemented. A directory with neither is NotFound. Errors name the
// directory or file.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(absl::string_view model_dir);

// The tokenizer embedded in a GGUF file (its tokenizer.ggml.* keys, see
// ReadGgufTokenizer): model "gpt2" is a byte-level BpeTokenizer with the
// pre-tokenizer of tokenizer.ggml.pre, control tokens (type 3) special and
// user-defined ones (type 4) added, BOS prepended by convention only with
// tokenizer.ggml.add_bos_token. Model "llama" (sentencepiece: tokens,
// scores, token types) is a BpeTokenizer encoding as transformers 5.24's
// AutoTokenizer.from_pretrained(dir, gguf_file=...) does: merges derived from
// the scores, Metaspace with "▁" prepended to the text's start (whatever
// tokenizer.ggml.add_space_prefix says), byte fallback, BOS added unless
// tokenizer.ggml.add_bos_token is false (see LoadGgufLlama in the .cc).
// Other models, and "llama" vocabularies of gemma/phi3 architectures or with
// a tokenizer.ggml.pre, are Unimplemented naming the file; NotFound when the
// file has no tokenizer; InvalidArgument for bad metadata (missing scores, a
// NaN score, a token type outside 0-6, duplicate tokens). sha256() covers
// the vocabulary, merges or scores, token types, special ids and flags.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& gguf);

}  // namespace focal::model

#endif  // FOCAL_MODEL_TOKENIZER_LOADER_H_
