// SPDX-License-Identifier: Apache-2.0
// `focal-eval prompts`: the long-context samples a run would generate from,
// written in RULER's jsonl layout without loading any weights: to see what a
// model will read, to feed other tools, and for cheap parity checks.
#ifndef FOCAL_HARNESS_PROMPTS_COMMAND_H_
#define FOCAL_HARNESS_PROMPTS_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "harness/runner.h"

namespace focal::harness {

struct PromptsOptions {
  RunOptions run;         // tasks, lengths, limit, long_seed, data flags, bos, shard
  std::string model;      // HF directory or .gguf whose tokenizer counts (default model)
  std::string tokenizer;  // or a tokenizer alone: directory, .gguf or tokenizer.model
  std::string out_dir;    // empty: every line to `out`
};

// One JSON object per sample: RULER's `index`, `input`, `outputs` and
// `length` (its count: the input's tokens without BOS plus the tokens to
// generate), then ours: task, context_length, gold_depth (hotpotqa_long),
// max_new_tokens, stop, prompt_tokens (as the model reads it, BOS included
// when added), prompt_sha256 (the per-sample log's) and meta. With out_dir,
// OUT/<context_length>/<task>/validation.jsonl per group (RULER's
// <save_dir>/<task>/validation.jsonl per length), each written atomically,
// and a line per file on `out`. Loglikelihood tasks are refused (their
// requests are the documents themselves).
absl::Status RunPrompts(const PromptsOptions& options, std::ostream& out);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_PROMPTS_COMMAND_H_
