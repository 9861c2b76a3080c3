// SPDX-License-Identifier: Apache-2.0
// `focal-eval run`: evaluates tasks for one or more models through the shared
// scorer and writes the results file, the per-sample log and a summary.
#ifndef FOCAL_HARNESS_RUNNER_H_
#define FOCAL_HARNESS_RUNNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/scorer.h"
#include "engine/task_details.h"
#include "kernels/backend.h"
#include "reports/results.pb.h"

namespace focal::harness {

struct RunOptions {
  std::vector<std::string> models;  // empty: the bundled model
  // Per-model --focal-temperature (same size as `models` when set; a model
  // may appear twice with different values: "DIR@t=0.4").
  std::vector<std::optional<double>> model_temperatures;
  // Per-model precision ("DIR@bf16"; same size as `models` when set; empty
  // entries take --precision).
  std::vector<std::string> model_precisions;
  std::optional<double> focal_temperature;
  std::string tasks = "commonsense,lambada_openai";
  std::string data_dir;  // the ../shared/data layout (specs' data_path)
  // The fetched data (scripts/fetch_data.sh; the CLI's default is
  // DataCacheDir()); empty: none, so tasks without --data / --data-dir run on
  // the bundled samples.
  std::string data_cache;
  std::map<std::string, std::string> data;          // --data TASK=PATH
  std::map<std::string, std::string> fewshot_data;  // --fewshot-data TASK=PATH
  std::string spec_dir;                             // empty: <asset root>/tasks/specs
  std::vector<std::string> extra_spec_dirs;         // --task-specs: the user's own specs
  int64_t limit = 0;                                // 0: all documents
  int shard_index = 0;
  int shard_count = 1;
  int64_t batch_tokens = 4096;
  engine::BosPolicy bos = engine::BosPolicy::kAuto;
  int num_fewshot = 0;
  uint64_t seed = 1234;   // few-shot sampling (lm-eval's fewshot seed)
  std::string out;        // results JSON (written atomically)
  std::string samples;    // per-sample JSONL (optional)
  std::string cache_dir;  // empty: "<out>.cache" (none without --out)
  std::string device = "auto";
  // --precision: fp32 or bf16; empty: each device's default (fp32 on the
  // CPU, bf16 on CUDA).
  std::string precision;
  int threads = 0;
  bool progress = true;           // on stderr (engine/progress.h)
  double progress_interval = 30;  // seconds between lines when stderr is no TTY
  // Long-context tasks (ruler, ruler_*, hotpotqa_long, long_context).
  std::string lengths = "4096";
  std::string gold_depth = "0.5";  // or "sweep"
  uint64_t long_seed = 42;         // RULER's random_seed
  bool allow_length_extrapolation = false;
  int64_t prefill_chunk = 2048;
  int64_t gen_batch = 8;
  // Build the next long-context group while the model works: "on", "off",
  // or "auto" (on when the model leaves a core free: a GPU, or --threads
  // below the core count).
  std::string build_ahead = "auto";
  // Diagnostics for `compare` (need `details`): keep each task's tokenized
  // requests, and probe the attention of the first N documents (or samples
  // per task and length) of every task.
  bool keep_requests = false;
  int64_t attention_samples = 0;
};

// Bumped whenever a change to the scoring or generation code can change a
// number: part of every resume-cache key, so old caches are never reused.
inline constexpr int kScoringVersion = 3;  // 3: the CPU attention's exp (vector_math)

// The resume-cache identity of a model run: everything besides the requests
// themselves that can change a score (weights, resolved config, variant,
// tokenizer, backend with its device and precision, BOS policy, max length,
// kScoringVersion).
// The scores' cache file is "<weights sha, 16>-<identity, 16>[-shardIofN].jsonl".
std::string CacheIdentity(const reports::ModelRun& run);

// Reads an environment variable; nullptr when unset (::getenv in the CLI).
using EnvLookup = std::function<const char*(const char*)>;

// Parses "I/N" (0 <= I < N), or takes I/N from a job scheduler:
//   "auto"    a whole Slurm job array: I = SLURM_ARRAY_TASK_ID -
//             SLURM_ARRAY_TASK_MIN, N = SLURM_ARRAY_TASK_COUNT (ids consecutive);
//   "auto/N"  I = SLURM_ARRAY_TASK_ID itself (so some tasks of an array can
//             be resubmitted alone), or a Kubernetes Indexed Job's
//             JOB_COMPLETION_INDEX (the pod is not told the Job's count).
// `source` (optional) receives where I/N came from, for the log.
absl::Status ParseShard(const std::string& text, int* index, int* count,
                        const EnvLookup& env = nullptr, std::string* source = nullptr);

// When `details` is non-null it receives one engine::ModelDetails per model.
absl::StatusOr<reports::RunResults> RunEvaluation(
    const RunOptions& options, std::ostream& out,
    std::vector<engine::ModelDetails>* details = nullptr);

// A model of `compare`: "DIR", "DIR@t=0.4" (a retrofit temperature for this
// model only), "DIR@bf16" or "DIR@fp32" (its precision), or both in either
// order; DIR "default" is the default model.
struct ModelSpec {
  std::string dir;
  std::optional<double> temperature;
  std::string precision;  // empty: --precision
};
absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& spec);

// The backends (one per --device entry) for model `index` of `o`, at its
// precision.
absl::StatusOr<std::vector<std::unique_ptr<kernels::Backend>>> CreateModelBackends(
    const RunOptions& o, size_t index, std::string* note);

// --lengths "4096,8192" (ascending, positive); --gold-depth "0.5" or "sweep".
absl::StatusOr<std::vector<int64_t>> ParseLengths(const std::string& text);
absl::StatusOr<std::vector<double>> ParseGoldDepths(const std::string& text);

// Prints the known tasks and groups.
absl::Status ListTasks(const RunOptions& options, std::ostream& out);

}  // namespace focal::harness

#endif  // FOCAL_HARNESS_RUNNER_H_
