// SPDX-License-Identifier: Apache-2.0
// focal-eval: command-line entry point. Parses flags, runs one subcommand,
// prints any error to stderr and exits non-zero.
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/asset_root.h"
#include "harness/commands.h"
#include "harness/compare.h"
#include "harness/data_command.h"
#include "harness/prompts_command.h"
#include "harness/runner.h"

namespace {

constexpr const char* kPrecisionHelp =
    "fp32 (exact) or bf16 (BF16 weights and GEMM inputs, F32 accumulation; docs/benchmarks.md "
    "says what it changes); default: fp32 on the CPU, bf16 on CUDA";

void AddModelFlags(CLI::App* cmd, focal::harness::ModelFlags& f, bool with_model_flag) {
  if (with_model_flag) {
    cmd->add_option("--model", f.model_dir,
                    "HF-format model directory or .gguf file (default: SmolLM2-135M-Instruct, see "
                    "scripts/fetch_default_model.sh)");
  }
  cmd->add_option("--focal-temperature", f.focal_temperature,
                  "evaluate as constant-temperature focal attention with this t "
                  "(replaces the checkpoint's own setting)");
  cmd->add_option("--device", f.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--precision", f.precision, kPrecisionHelp)
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_option("--threads", f.threads, "CPU threads (0: every core this process may run on)")
      ->capture_default_str();
}

int Finish(const absl::Status& s) {
  if (s.ok()) return 0;
  std::cerr << "focal-eval: error: " << s.message() << "\n";
  return 1;
}

// Flags shared by `run` and `compare`.
struct RunFlags {
  focal::harness::RunOptions opts;
  std::string shard = "0/1", add_bos = "auto";
  std::vector<std::string> data_overrides, fewshot_overrides;
  bool list_tasks = false, no_progress = false;
};

// Where tasks find their data (`run`, `compare`, `data`).
void AddDataFlags(CLI::App* cmd, RunFlags& f) {
  cmd->add_option("--task-specs", f.opts.extra_spec_dirs,
                  "directory of extra task specs (*.textproto); repeatable");
  cmd->add_option("--data-dir", f.opts.data_dir,
                  "data directory in the ../shared/data layout (default: the fetched data, "
                  "else the bundled samples)");
  cmd->add_option("--data", f.data_overrides, "TASK=PATH: read one task's data from PATH");
  f.opts.data_cache = focal::DataCacheDir();
  cmd->add_option("--data-cache", f.opts.data_cache,
                  "the real data scripts/fetch_data.sh fetched (none: the bundled samples only)")
      ->capture_default_str();
}

void AddRunFlags(CLI::App* cmd, RunFlags& f) {
  cmd->add_option("--tasks", f.opts.tasks, "comma-separated task or group names, or all")
      ->capture_default_str();
  cmd->add_flag("--list-tasks", f.list_tasks, "list the tasks and groups, then exit");
  AddDataFlags(cmd, f);
  cmd->add_option("--limit", f.opts.limit, "first N documents per task (0: all)")
      ->capture_default_str();
  cmd->add_option("--shard", f.shard,
                  "I/N: evaluate every N-th document from the I-th; auto: I/N of a Slurm job "
                  "array; auto/N: I of a Kubernetes Indexed Job")
      ->capture_default_str();
  cmd->add_option("--batch-tokens", f.opts.batch_tokens, "tokens per forward batch")
      ->capture_default_str();
  cmd->add_option("--add-bos", f.add_bos, "auto (as the tokenizer), always or never")
      ->capture_default_str();
  cmd->add_option("--num-fewshot", f.opts.num_fewshot,
                  "few-shot examples per question, drawn as lm-eval draws them")
      ->capture_default_str();
  cmd->add_option("--fewshot-data", f.fewshot_overrides,
                  "TASK=PATH: draw few-shot examples from PATH (default: the evaluated file; "
                  "which draws drop the question: docs/tasks.md)");
  cmd->add_option("--seed", f.opts.seed, "few-shot sampling seed (lm-eval's default 1234)")
      ->capture_default_str();
  cmd->add_option("--samples", f.opts.samples, "per-document JSONL log");
  cmd->add_option("--cache-dir", f.opts.cache_dir,
                  "resume cache directory (default: <out>.cache when --out is given)");
  cmd->add_option("--device", f.opts.device,
                  "auto, cpu, cuda or cuda:N; a list (cuda:0,cuda:1 or cpu,cpu) puts one model "
                  "replica on each")
      ->capture_default_str();
  cmd->add_option("--precision", f.opts.precision, kPrecisionHelp)
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_option("--threads", f.opts.threads,
                  "CPU threads (0: every core this process may run on)")
      ->capture_default_str();
  cmd->add_flag("--no-progress", f.no_progress, "no progress line on stderr");
  cmd->add_option("--progress-interval", f.opts.progress_interval,
                  "seconds between progress lines when stderr is not a terminal (0: every "
                  "update)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--lengths", f.opts.lengths,
                  "long-context tasks: context lengths in model tokens, e.g. 4096,8192")
      ->capture_default_str();
  cmd->add_option("--gold-depth", f.opts.gold_depth,
                  "hotpotqa_long: relative depth of the gold passages (0-1) or 'sweep'")
      ->capture_default_str();
  cmd->add_option("--long-seed", f.opts.long_seed, "long-context sample seed (RULER's 42)")
      ->capture_default_str();
  cmd->add_flag("--allow-length-extrapolation", f.opts.allow_length_extrapolation,
                "allow lengths past max_position_embeddings (RoPE simply extended; recorded)");
  cmd->add_option("--prefill-chunk", f.opts.prefill_chunk,
                  "prompt tokens per prefill step (bounds activation memory)")
      ->capture_default_str();
  cmd->add_option("--gen-batch", f.opts.gen_batch, "sequences decoded together")
      ->capture_default_str();
  cmd->add_option("--build-ahead", f.opts.build_ahead,
                  "build the next long-context group on another thread while the model works "
                  "(auto: when a core is free)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
}

// Applies the string flags to f.opts; returns an exit code, or -1 to go on.
int FinishRunFlags(RunFlags& f) {
  auto split = [](const std::vector<std::string>& in, const char* flag,
                  std::map<std::string, std::string>& out) {
    for (const std::string& d : in) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "focal-eval: error: " << flag << " '" << d << "' must be TASK=PATH\n";
        return false;
      }
      out[d.substr(0, eq)] = d.substr(eq + 1);
    }
    return true;
  };
  if (!split(f.data_overrides, "--data", f.opts.data) ||
      !split(f.fewshot_overrides, "--fewshot-data", f.opts.fewshot_data)) {
    return 2;
  }
  if (f.opts.data_cache == "none") f.opts.data_cache.clear();
  if (f.add_bos == "auto") {
    f.opts.bos = focal::engine::BosPolicy::kAuto;
  } else if (f.add_bos == "always") {
    f.opts.bos = focal::engine::BosPolicy::kAlways;
  } else if (f.add_bos == "never") {
    f.opts.bos = focal::engine::BosPolicy::kNever;
  } else {
    std::cerr << "focal-eval: error: --add-bos must be auto, always or never\n";
    return 2;
  }
  std::string shard_source;
  if (absl::Status s = focal::harness::ParseShard(f.shard, &f.opts.shard_index, &f.opts.shard_count,
                                                  nullptr, &shard_source);
      !s.ok()) {
    return Finish(s);
  }
  if (!shard_source.empty()) {
    std::cerr << "shard " << f.opts.shard_index << "/" << f.opts.shard_count << " (from "
              << shard_source << ")\n";
  }
  f.opts.progress = !f.no_progress;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"focal-eval: evaluate base and focal-attention LLaMA models"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  focal::harness::ModelFlags inspect_flags;
  std::string inspect_dir;
  CLI::App* inspect = app.add_subcommand("inspect", "summarise a model directory or GGUF file");
  inspect->add_option("MODEL_DIR", inspect_dir,
                      "HF-format model directory or .gguf file (default: SmolLM2-135M-Instruct)");
  AddModelFlags(inspect, inspect_flags, false);

  focal::harness::ModelFlags gen_flags;
  std::string prompt;
  int64_t max_new_tokens = 256;
  CLI::App* gen = app.add_subcommand("generate", "greedy text generation");
  AddModelFlags(gen, gen_flags, true);
  gen->add_option("--prompt", prompt,
                  "prompt text (default: empty, i.e. start from BOS, or EOS without one)");
  gen->add_option("--max-new-tokens", max_new_tokens, "tokens to generate")->capture_default_str();

  focal::harness::ModelFlags score_flags;
  std::string text;
  bool no_bos = false;
  CLI::App* score = app.add_subcommand(
      "score", "per-token log-probabilities of a text, one JSON object per line");
  AddModelFlags(score, score_flags, true);
  score->add_option("--text", text, "text to score")->required();
  score->add_flag("--no-bos", no_bos,
                  "do not prepend BOS (default: prepended when the tokenizer adds one)");

  std::vector<std::string> merge_files;
  std::string merge_out;
  CLI::App* merge = app.add_subcommand(
      "merge", "join the --shard I/N results of one run into the unsharded result");
  merge->add_option("SHARD_JSON", merge_files, "results of every shard")->required();
  merge->add_option("--out", merge_out, "merged results JSON (written atomically)")->required();

  std::vector<std::string> report_files;
  std::string report_format = "md", report_baseline, report_out;
  CLI::App* report = app.add_subcommand(
      "report", "saved results of any models as one benchmark table (best value in bold)");
  report->add_option("RESULTS_JSON", report_files, "results files of `run`")->required();
  report->add_option("--format", report_format, "md, csv, html, latex or json")
      ->capture_default_str();
  report->add_option("--baseline", report_baseline,
                     "column to show deltas against: one of the results files, or a column label "
                     "such as 'SmolLM2-135M-Instruct.Q4_1.gguf base'");
  report->add_option("--out", report_out, "write here (atomically) instead of stdout");

  std::string bin, tok, out_dir;
  CLI::App* conv = app.add_subcommand("convert-llama2c",
                                      "convert a llama2.c checkpoint into an HF-format directory");
  conv->add_option("MODEL_BIN", bin, "llama2.c checkpoint (legacy format)")->required();
  conv->add_option("TOKENIZER_MODEL", tok, "sentencepiece tokenizer.model")->required();
  conv->add_option("OUT_DIR", out_dir, "output directory")->required();

  RunFlags run_flags;
  CLI::App* run = app.add_subcommand(
      "run", "evaluate models on tasks (lm-eval scoring), write results and samples");
  run->add_option("--model", run_flags.opts.models,
                  "HF-format model directory or .gguf file; repeat for several (default: "
                  "SmolLM2-135M-Instruct)");
  run->add_option("--focal-temperature", run_flags.opts.focal_temperature,
                  "evaluate every model as constant-temperature focal attention with this t");
  run->add_option("--out", run_flags.opts.out, "results JSON (written atomically)");
  AddRunFlags(run, run_flags);

  RunFlags cmp_flags;
  std::string base_spec, report_dir;
  std::vector<std::string> focal_specs;
  focal::harness::CompareSettings cmp;
  CLI::App* compare = app.add_subcommand(
      "compare", "base vs focal model(s) on identical requests: paired statistics and reports");
  compare->add_option("--base", base_spec,
                      "base model directory or .gguf file, DIR@bf16 for its precision "
                      "(default: SmolLM2-135M-Instruct)");
  compare->add_option("--focal", focal_specs,
                      "focal model DIR, DIR@t=T (a retrofit), DIR@bf16 or DIR@fp32 (its "
                      "precision; both: DIR@t=T@bf16; DIR 'default': the default model); "
                      "repeatable (default: the default model @t=0.4)");
  compare->add_option("--out", report_dir, "report directory")->required();
  compare->add_option("--bootstrap", cmp.bootstrap_iters, "paired bootstrap resamples")
      ->capture_default_str();
  compare->add_option("--bootstrap-seed", cmp.bootstrap_seed, "bootstrap seed")
      ->capture_default_str();
  compare->add_flag("--logit-agreement,!--no-logit-agreement", cmp.logit_agreement,
                    "compare every focal model's next-token distributions with the base's on "
                    "the scored continuations (KL divergence, same top-1; default on)");
  compare
      ->add_option("--attention-stats", cmp.attention_samples,
                   "attention entropy per layer and head (and needle mass on RULER NIAH) "
                   "on the first N documents of each task (per length); 0: off")
      ->check(CLI::NonNegativeNumber);
  std::vector<std::string> from_shards;
  compare->add_option("--from-shards", from_shards,
                      "report directories of `compare --shard I/N` (every shard): merge them and "
                      "pair their per-document values instead of running models");
  AddRunFlags(compare, cmp_flags);

  RunFlags data_flags;
  CLI::App* data = app.add_subcommand(
      "data", "where each task's data comes from (fetched, your files, samples) and its check");
  data->require_subcommand(1);
  CLI::App* data_list = data->add_subcommand(
      "list", "per task: source, file, documents and hash check; then the fetched files");
  CLI::App* data_verify =
      data->add_subcommand("verify", "as list, failing when a fetched file is missing or changed");
  AddDataFlags(data_list, data_flags);
  AddDataFlags(data_verify, data_flags);

  RunFlags prompts_flags;
  focal::harness::PromptsOptions prompts_opts;
  CLI::App* prompts = app.add_subcommand(
      "prompts",
      "write the long-context samples a run would use (RULER's jsonl layout), no weights loaded");
  prompts_flags.opts.tasks = "ruler";
  prompts
      ->add_option("--tasks", prompts_flags.opts.tasks,
                   "comma-separated long-context task or group names")
      ->capture_default_str();
  prompts->add_option("--model", prompts_opts.model,
                      "HF-format model directory or .gguf file whose tokenizer counts (default: "
                      "SmolLM2-135M-Instruct)");
  prompts->add_option("--tokenizer", prompts_opts.tokenizer,
                      "or a tokenizer alone: a directory, .gguf file or tokenizer.model");
  prompts->add_option("--out", prompts_opts.out_dir,
                      "directory for OUT/<length>/<task>/validation.jsonl (default: every line "
                      "to stdout)");
  AddDataFlags(prompts, prompts_flags);
  prompts->add_option("--lengths", prompts_flags.opts.lengths, "context lengths in model tokens")
      ->capture_default_str();
  prompts->add_option("--limit", prompts_flags.opts.limit, "samples per task and length (0: 500)")
      ->capture_default_str();
  prompts->add_option("--long-seed", prompts_flags.opts.long_seed, "sample seed (RULER's 42)")
      ->capture_default_str();
  prompts
      ->add_option("--gold-depth", prompts_flags.opts.gold_depth,
                   "hotpotqa_long: relative depth of the gold passages (0-1) or 'sweep'")
      ->capture_default_str();
  prompts
      ->add_option("--add-bos", prompts_flags.add_bos, "auto (as the tokenizer), always or never")
      ->capture_default_str();
  prompts->add_option("--shard", prompts_flags.shard, "I/N: every N-th sample from the I-th")
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
    if (run_flags.list_tasks) return Finish(focal::harness::ListTasks(run_flags.opts, std::cout));
    if (int rc = FinishRunFlags(run_flags); rc >= 0) return rc;
    return Finish(focal::harness::RunEvaluation(run_flags.opts, std::cout).status());
  }
  if (compare->parsed()) {
    if (!from_shards.empty()) {
      if (!base_spec.empty() || !focal_specs.empty()) {
        std::cerr << "focal-eval: error: --from-shards takes the models from the shards; "
                     "drop --base and --focal\n";
        return 2;
      }
      // The shards' bootstrap settings unless given again.
      if (compare->count("--bootstrap") == 0) cmp.bootstrap_iters = 0;
      if (compare->count("--bootstrap-seed") == 0) cmp.bootstrap_seed_from_shards = true;
      return Finish(focal::harness::RunCompareFromShards(from_shards, report_dir, cmp, std::cout));
    }
    if (int rc = FinishRunFlags(cmp_flags); rc >= 0) return rc;
    return Finish(focal::harness::RunCompare(cmp_flags.opts, base_spec, focal_specs, report_dir,
                                             cmp, std::cout));
  }
  if (data->parsed()) {
    if (int rc = FinishRunFlags(data_flags); rc >= 0) return rc;
    return Finish(focal::harness::RunDataList(data_flags.opts, data_verify->parsed(), std::cout));
  }
  if (prompts->parsed()) {
    if (int rc = FinishRunFlags(prompts_flags); rc >= 0) return rc;
    prompts_opts.run = prompts_flags.opts;
    return Finish(focal::harness::RunPrompts(prompts_opts, std::cout));
  }
  if (report->parsed()) {
    return Finish(focal::harness::RunReport(report_files, report_format, report_baseline,
                                            report_out, std::cout));
  }
  if (merge->parsed()) {
    return Finish(focal::harness::RunMerge(merge_files, merge_out, std::cout));
  }
  if (conv->parsed()) {
    return Finish(focal::harness::RunConvertLlama2c(bin, tok, out_dir, std::cout));
  }
  return 2;
}
