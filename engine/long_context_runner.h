// SPDX-License-Identifier: Apache-2.0
// The long-context half of `focal-eval run`: generation tasks (GENERATE_UNTIL
// specs) whose samples a generator builds per context length with the
// model's tokenizer, run through greedy generation, scored per task and
// length by the specs' metrics.
#ifndef FOCAL_ENGINE_LONG_CONTEXT_RUNNER_H_
#define FOCAL_ENGINE_LONG_CONTEXT_RUNNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/catalog.h"
#include "datasets/generator.h"
#include "engine/task_details.h"
#include "model/language_model.h"
#include "reports/results.pb.h"
#include "tasks/task.h"

namespace focal::engine {

struct LongContextOptions {
  std::vector<const tasks::Task*> tasks;  // GENERATE_UNTIL tasks (specs outlive the run)
  std::vector<int64_t> lengths;           // ascending, > 0
  int64_t samples = 500;                  // per task and length (RULER's default)
  std::vector<double> gold_depths;        // hotpotqa_long; one or the sweep
  uint64_t seed = 42;                     // RULER's random_seed
  std::string data_dir;                   // specs' data_files are relative to it; empty = bundled
  // Each task's data files as the harness resolved them (--data-dir, the
  // fetched data, or the generator's bundled samples); tasks absent here read
  // their spec's data_files under data_dir.
  std::map<std::string, datasets::ResolvedFiles> task_data;
  bool allow_length_extrapolation = false;
  int64_t prefill_chunk = 2048;
  int64_t max_batch = 8;
  int threads = 0;
  bool add_bos = true;
  std::string cache_path;  // generation resume cache (JSONL); empty = none
  bool progress = true;
  double progress_interval = 30;  // seconds between progress lines when stderr is no TTY
  // Attention diagnostics on the first N samples of each task and length
  // (RULER needle tasks also report the mass on the queried needles).
  int64_t attention_samples = 0;
  // --shard I/N: every N-th sample (by index) of each task and length, with
  // per-sample values kept so `merge` recomputes every metric.
  int shard_index = 0;
  int shard_count = 1;
  // Build the next (task, length, depth) group's samples on another thread
  // while the model works on the current one. Results are the same either
  // way; it pays when the model leaves a core free (a GPU, or --threads
  // below the core count).
  bool build_ahead = false;
  // The same model's forward pass on further devices (--device cpu,cpu /
  // cuda:0,cuda:1): generation slices go to whichever replica is free. Not
  // owned.
  std::vector<model::Transformer*> replicas;
};

// Receives per-sample JSON lines (whole lines) as work finishes.
using SampleSink = std::function<absl::Status(absl::string_view lines)>;

// Generator options whose token counts and prefixes are `tok`'s: counts as
// prompts are encoded (BOS first when add_bos), prefixes without BOS. `tok`
// must outlive the options.
datasets::GeneratorOptions TokenizerGeneratorOptions(const model::Tokenizer& tok, bool add_bos);

// One (task, length, depth) group of samples as a run would build them.
struct PromptGroup {
  const tasks::Task* task = nullptr;
  int64_t length = 0;
  double depth = -1;                                // hotpotqa_long's gold depth; -1 elsewhere
  std::vector<datasets::GenerationSample> samples;  // this shard's, in index order
};
using PromptSink = std::function<absl::Status(PromptGroup group)>;

// The samples RunLongContext would generate from with these options and
// tokenizer, group by group, without a model (`focal-eval prompts`): the
// same plan, data checks and shard selection.
absl::Status BuildPrompts(const model::Tokenizer& tok, const LongContextOptions& options,
                          const PromptSink& sink);

// Runs the tasks for one loaded model, appending TaskResults (metrics keyed
// by context_length) and the per-length summary to `run`, and sending
// per-sample JSON lines to `samples` one (task, length, depth) group at a
// time. Samples are built group by group, so memory stays that of one group
// (two with build_ahead).
// `details` (optional) receives per-sample scores keyed "task@length" or
// "task@length@depth".
absl::Status RunLongContext(model::LanguageModel& model, const LongContextOptions& options,
                            reports::ModelRun& run, const SampleSink& samples,
                            std::map<std::string, TaskDetails>* details = nullptr);

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_LONG_CONTEXT_RUNNER_H_
