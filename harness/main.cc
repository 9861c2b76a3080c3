// SPDX-License-Identifier: Apache-2.0
// focal-eval: command-line entry point. Parses flags, runs one subcommand,
// prints any error to stderr and exits non-zero.
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "harness/commands.h"

namespace {

void AddModelFlags(CLI::App* cmd, focal::harness::ModelFlags& f, bool with_model_flag) {
  if (with_model_flag) {
    cmd->add_option("--model", f.model_dir,
                    "HF-format model directory (default: the bundled stories260K)");
  }
  cmd->add_option("--focal-temperature", f.focal_temperature,
                  "evaluate as constant-temperature focal attention with this t "
                  "(replaces the checkpoint's own setting)");
  cmd->add_option("--device", f.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--threads", f.threads, "CPU threads (0: all cores)")->capture_default_str();
}

int Finish(const absl::Status& s) {
  if (s.ok()) return 0;
  std::cerr << "focal-eval: error: " << s.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"focal-eval: evaluate base and focal-attention LLaMA models"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  focal::harness::ModelFlags inspect_flags;
  std::string inspect_dir;
  CLI::App* inspect = app.add_subcommand("inspect", "summarise a model directory");
  inspect->add_option("MODEL_DIR", inspect_dir, "HF-format model directory (default: bundled)");
  AddModelFlags(inspect, inspect_flags, false);

  focal::harness::ModelFlags gen_flags;
  std::string prompt;
  int64_t max_new_tokens = 256;
  CLI::App* gen = app.add_subcommand("generate", "greedy text generation");
  AddModelFlags(gen, gen_flags, true);
  gen->add_option("--prompt", prompt, "prompt text (default: empty, i.e. start from BOS)");
  gen->add_option("--max-new-tokens", max_new_tokens, "tokens to generate")->capture_default_str();

  focal::harness::ModelFlags score_flags;
  std::string text;
  bool no_bos = false;
  CLI::App* score = app.add_subcommand(
      "score", "per-token log-probabilities of a text, one JSON object per line");
  AddModelFlags(score, score_flags, true);
  score->add_option("--text", text, "text to score")->required();
  score->add_flag("--no-bos", no_bos, "do not prepend BOS");

  std::string bin, tok, out_dir;
  CLI::App* conv = app.add_subcommand(
      "convert-llama2c", "convert a llama2.c checkpoint into an HF-format directory");
  conv->add_option("MODEL_BIN", bin, "llama2.c checkpoint (legacy format)")->required();
  conv->add_option("TOKENIZER_MODEL", tok, "sentencepiece tokenizer.model")->required();
  conv->add_option("OUT_DIR", out_dir, "output directory")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (inspect->parsed()) {
    inspect_flags.model_dir = inspect_dir;
    return Finish(focal::harness::RunInspect(inspect_flags, std::cout));
  }
  if (gen->parsed()) {
    return Finish(focal::harness::RunGenerate(gen_flags, prompt, max_new_tokens, std::cout));
  }
  if (score->parsed()) {
    return Finish(focal::harness::RunScore(score_flags, text, !no_bos, std::cout));
  }
  if (conv->parsed()) {
    return Finish(focal::harness::RunConvertLlama2c(bin, tok, out_dir, std::cout));
  }
  return 2;
}
