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
// and it is what results so far were scored with). A directory with only
// tokenizer.json is Unimplemented (that loader is not written yet); one with
// neither is NotFound. Errors name the directory or file.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(absl::string_view model_dir);

// The tokenizer embedded in a GGUF file (its tokenizer.ggml.* keys, see
// ReadGgufTokenizer). Not implemented yet: Unimplemented naming the file and
// its tokenizer.ggml.model; NotFound when the file has no tokenizer.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const GgufFile& gguf);

}  // namespace focal::model

#endif  // FOCAL_MODEL_TOKENIZER_LOADER_H_
