// SPDX-License-Identifier: Apache-2.0
// focal-eval: command-line entry point. Parses flags, runs one subcommand,
// prints any error to stderr and exits non-zero.
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "harness/commands.h"
#include "harness/runner.h"

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

  focal::harness::RunOptions run_opts;
  std::string shard = "0/1", add_bos = "auto";
  std::vector<std::string> data_overrides;
  bool list_tasks = false, no_progress = false;
  CLI::App* run = app.add_subcommand(
      "run", "evaluate models on tasks (lm-eval scoring), write results and samples");
  run->add_option("--model", run_opts.models,
                  "HF-format model directory; repeat for several (default: bundled stories260K)");
  run->add_option("--focal-temperature", run_opts.focal_temperature,
                  "evaluate every model as constant-temperature focal attention with this t");
  run->add_option("--tasks", run_opts.tasks, "comma-separated task or group names, or all")
      ->capture_default_str();
  run->add_flag("--list-tasks", list_tasks, "list the tasks and groups, then exit");
  run->add_option("--task-specs", run_opts.extra_spec_dirs,
                  "directory of extra task specs (*.textproto); repeatable");
  run->add_option("--data-dir", run_opts.data_dir,
                  "data directory in the ../shared/data layout (default: bundled samples)");
  run->add_option("--data", data_overrides, "TASK=PATH: read one task's data from PATH");
  run->add_option("--limit", run_opts.limit, "first N documents per task (0: all)")
      ->capture_default_str();
  run->add_option("--shard", shard, "I/N: evaluate every N-th document from the I-th")
      ->capture_default_str();
  run->add_option("--batch-tokens", run_opts.batch_tokens, "tokens per forward batch")
      ->capture_default_str();
  run->add_option("--add-bos", add_bos, "auto (as the tokenizer), always or never")
      ->capture_default_str();
  run->add_option("--num-fewshot", run_opts.num_fewshot,
                  "few-shot examples per question, drawn as lm-eval draws them")
      ->capture_default_str();
  std::vector<std::string> fewshot_overrides;
  run->add_option("--fewshot-data", fewshot_overrides,
                  "TASK=PATH: draw few-shot examples from PATH (default: the evaluated file, "
                  "excluding the question itself)");
  run->add_option("--seed", run_opts.seed, "few-shot sampling seed (lm-eval's default 1234)")
      ->capture_default_str();
  run->add_option("--out", run_opts.out, "results JSON (written atomically)");
  run->add_option("--samples", run_opts.samples, "per-document JSONL log");
  run->add_option("--cache-dir", run_opts.cache_dir,
                  "resume cache directory (default: <out>.cache when --out is given)");
  run->add_option("--device", run_opts.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  run->add_option("--threads", run_opts.threads, "CPU threads (0: all cores)")
      ->capture_default_str();
  run->add_flag("--no-progress", no_progress, "no progress line on stderr");
  run->add_option("--lengths", run_opts.lengths,
                  "long-context tasks: context lengths in model tokens, e.g. 4096,8192")
      ->capture_default_str();
  run->add_option("--gold-depth", run_opts.gold_depth,
                  "hotpotqa_long: relative depth of the gold passages (0-1) or 'sweep'")
      ->capture_default_str();
  run->add_option("--long-seed", run_opts.long_seed, "long-context sample seed (RULER's 42)")
      ->capture_default_str();
  run->add_flag("--allow-length-extrapolation", run_opts.allow_length_extrapolation,
                "allow lengths past max_position_embeddings (RoPE simply extended; recorded)");
  run->add_option("--prefill-chunk", run_opts.prefill_chunk,
                  "prompt tokens per prefill step (bounds activation memory)")
      ->capture_default_str();
  run->add_option("--gen-batch", run_opts.gen_batch, "sequences decoded together")
      ->capture_default_str();

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
  if (run->parsed()) {
    if (list_tasks) return Finish(focal::harness::ListTasks(run_opts, std::cout));
    for (const std::string& d : data_overrides) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "focal-eval: error: --data '" << d << "' must be TASK=PATH\n";
        return 2;
      }
      run_opts.data[d.substr(0, eq)] = d.substr(eq + 1);
    }
    for (const std::string& d : fewshot_overrides) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "focal-eval: error: --fewshot-data '" << d << "' must be TASK=PATH\n";
        return 2;
      }
      run_opts.fewshot_data[d.substr(0, eq)] = d.substr(eq + 1);
    }
    if (add_bos == "auto") {
      run_opts.bos = focal::harness::BosPolicy::kAuto;
    } else if (add_bos == "always") {
      run_opts.bos = focal::harness::BosPolicy::kAlways;
    } else if (add_bos == "never") {
      run_opts.bos = focal::harness::BosPolicy::kNever;
    } else {
      std::cerr << "focal-eval: error: --add-bos must be auto, always or never\n";
      return 2;
    }
    if (absl::Status s = focal::harness::ParseShard(shard, &run_opts.shard_index,
                                                    &run_opts.shard_count);
        !s.ok()) {
      return Finish(s);
    }
    run_opts.progress = !no_progress;
    return Finish(focal::harness::RunEvaluation(run_opts, std::cout).status());
  }
  if (conv->parsed()) {
    return Finish(focal::harness::RunConvertLlama2c(bin, tok, out_dir, std::cout));
  }
  return 2;
}
