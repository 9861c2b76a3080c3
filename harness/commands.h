// SPDX-License-Identifier: Apache-2.0
// The focal-eval subcommands. Each returns a Status; main() prints errors and
// maps them to the exit code.
#ifndef FOCAL_HARNESS_COMMANDS_H_
#define FOCAL_HARNESS_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/asset_root.h"

namespace focal::harness {

struct ModelFlags {
  std::string model_dir;                    // empty: the embedded default model
  std::optional<double> focal_temperature;  // --focal-temperature
  std::string device = "auto";
  std::string precision;  // --precision; empty: the device's default
  int threads = 0;
};

absl::Status RunInspect(const ModelFlags& flags, std::ostream& out);
// Greedy decoding from the prompt, BOS first when the tokenizer adds one; an
// empty prompt without BOS starts from EOS (lm-eval's empty-context token).
absl::Status RunGenerate(const ModelFlags& flags, const std::string& prompt, int64_t max_new_tokens,
                         std::ostream& out);
// Per-token log-probabilities of `text`; BOS first when `add_bos` (false for
// --no-bos) and the tokenizer adds one (Tokenizer::adds_bos).
absl::Status RunScore(const ModelFlags& flags, const std::string& text, bool add_bos,
                      std::ostream& out);
// `focal-eval merge`: joins --shard I/N results into the unsharded result.
absl::Status RunMerge(const std::vector<std::string>& shard_files, const std::string& out_file,
                      std::ostream& out);
// `focal-eval report`: saved results as one benchmark table.
absl::Status RunReport(const std::vector<std::string>& files, const std::string& format,
                       const std::string& baseline, const std::string& out_file, std::ostream& out);
absl::Status RunConvertLlama2c(const std::string& model_bin, const std::string& tokenizer,
                               const std::string& out_dir, std::ostream& out);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_COMMANDS_H_
