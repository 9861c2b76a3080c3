// SPDX-License-Identifier: Apache-2.0
// Converts a llama2.c checkpoint (legacy format: 7 int32 header, fp32 weights)
// plus its sentencepiece tokenizer into an HF-format LlamaForCausalLM
// directory that both focal-eval and HF transformers load.
#ifndef FOCAL_MODEL_TOOLS_LLAMA2C_CONVERTER_H_
#define FOCAL_MODEL_TOOLS_LLAMA2C_CONVERTER_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace focal::model {

// Writes OUT_DIR/{config.json, model.safetensors, tokenizer.model,
// tokenizer_config.json, special_tokens_map.json}. q/k rows are permuted from
// Meta's interleaved RoPE pairs to HF's rotate-half order.
absl::Status ConvertLlama2c(absl::string_view model_bin, absl::string_view tokenizer_model,
                            absl::string_view out_dir);

}  // namespace focal::model

#endif  // FOCAL_MODEL_TOOLS_LLAMA2C_CONVERTER_H_
