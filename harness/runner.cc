// SPDX-License-Identifier: Apache-2.0
#include "harness/runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/file_util.h"
#include "base/json_writer.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "base/thread_pool.h"
#include "datasets/catalog.h"
#include "datasets/reader.h"
#include "engine/long_context_runner.h"
#include "engine/progress.h"
#include "harness/commands.h"
#include "harness/task_data.h"
#include "kernels/backend.h"
#include "model/language_model.h"
#include "reports/results_writer.h"
#include "tasks/metric_registry.h"
#include "tasks/task_registry.h"

#ifndef FOCAL_GIT_COMMIT
#define FOCAL_GIT_COMMIT "unknown"
#endif

namespace focal::harness {
namespace {

constexpr char kHarnessVersion[] = "0.2.0";

struct TaskData {
  const tasks::Task* task;
  std::string path;
  std::string reader;
  datasets::DataOrigin origin = datasets::DataOrigin::kSample;
  std::string note;  // the resolution's (sample, user file not the reference's)
  std::string sha256;
  std::string fewshot_path;
  int64_t total_docs = 0;
  std::vector<datasets::Doc> docs;                                 // after --limit and --shard
  std::vector<std::vector<tasks::LoglikelihoodRequest>> requests;  // per doc
};

// The non-empty notes, "; " between them.
std::string JoinNotes(std::initializer_list<std::string> notes) {
  std::string out;
  for (const std::string& n : notes) {
    if (!n.empty()) absl::StrAppend(&out, out.empty() ? "" : "; ", n);
  }
  return out;
}

absl::StatusOr<TaskData> LoadTask(const RunOptions& o, const tasks::Task& task,
                                  const datasets::DataCatalog& catalog) {
  TaskData td;
  td.task = &task;
  FOCAL_ASSIGN_OR_RETURN(datasets::ResolvedData rd, ResolveData(o, task.spec(), catalog));
  td.path = rd.path;
  td.reader = rd.reader;
  td.origin = rd.origin;
  td.note = rd.note;
  td.sha256 = rd.sha256;
  // Reader options from the spec; file names in them are relative to the
  // data file's directory. (PIQA's labels default to <stem>-labels.lst beside
  // the data, which fits both ../shared/data and the bundled samples.)
  std::map<std::string, std::string> opts(task.spec().reader_options().begin(),
                                          task.spec().reader_options().end());
  auto docs = datasets::ReadDocs(td.reader, td.path, opts);
  if (!docs.ok()) return Annotate(docs.status(), absl::StrCat("task ", task.name()));
  td.total_docs = static_cast<int64_t>(docs->size());
  // Few-shot pool: --fewshot-data, else the evaluated file itself; which
  // draws drop the current document: task_spec.proto, fewshot_excludes_doc.
  std::vector<datasets::Doc> separate_pool;
  const bool separate = o.fewshot_data.count(task.name()) > 0;
  if (o.num_fewshot > 0 && separate) {
    const std::string& fpath = o.fewshot_data.at(task.name());
    auto pool = datasets::ReadDocs(td.reader, fpath, opts);
    if (!pool.ok()) return Annotate(pool.status(), absl::StrCat("task ", task.name(), " few-shot"));
    separate_pool = std::move(*pool);
    td.fewshot_path = fpath;
  } else if (o.num_fewshot > 0) {
    td.fewshot_path = td.path;
  }
  const std::vector<datasets::Doc>& pool = separate ? separate_pool : *docs;
  // One generator per task, used for documents in file order (lm-eval's
  // fewshot_random_seed), so every earlier document's draw is replayed even
  // when --limit or --shard skips scoring it.
  tasks::PyRandom rnd(o.seed);
  // --limit takes the first N documents, then --shard keeps every N-th of
  // those, so the shards of a limited run merge into that run exactly.
  const int64_t end = o.limit > 0 ? std::min<int64_t>(o.limit, td.total_docs) : td.total_docs;
  for (int64_t n = 0; n < end; ++n) {
    const datasets::Doc& d = (*docs)[n];
    std::string prefix;
    if (o.num_fewshot > 0) {
      auto p = task.FewshotPrefix(d, pool, o.num_fewshot,
                                  /*exclude_doc=*/task.spec().fewshot_excludes_doc() ||
                                      (!separate && !task.spec().fewshot_from_eval_split()),
                                  rnd);
      if (!p.ok()) return Annotate(p.status(), td.path);
      prefix = std::move(*p);
    }
    if (n % o.shard_count != o.shard_index) continue;
    auto reqs = task.BuildRequests(d, prefix);
    if (!reqs.ok()) return Annotate(reqs.status(), td.path);
    td.docs.push_back(d);
    td.requests.push_back(std::move(*reqs));
  }
  return td;
}

// The selected tasks by how they run: loglikelihood requests through the
// scorer, generation tasks through the long-context runner.
struct TaskSelection {
  std::vector<const tasks::Task*> loglikelihood;
  std::vector<const tasks::Task*> generation;
};

absl::StatusOr<TaskSelection> SelectTasks(const RunOptions& o,
                                          const tasks::TaskRegistry& registry) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<const tasks::Task*> all, registry.Resolve(o.tasks));
  TaskSelection sel;
  for (const tasks::Task* t : all) {
    (t->spec().output_type() == tasks::GENERATE_UNTIL ? sel.generation : sel.loglikelihood)
        .push_back(t);
  }
  for (const auto* m : {&o.data, &o.fewshot_data}) {
    for (const auto& [name, path] : *m) {
      const tasks::Task* t = registry.Find(name);
      const char* flag = m == &o.data ? "--data" : "--fewshot-data";
      if (t == nullptr) {
        return absl::NotFoundError(absl::StrCat(flag, " names unknown task '", name, "'"));
      }
      if (t->spec().output_type() == tasks::GENERATE_UNTIL) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, " ", name, ": a generation task reads its files from --data-dir"));
      }
    }
  }
  return sel;
}

// --build-ahead: "auto" builds long-context samples beside the model when
// it leaves a CPU core free; with every core in the CPU backend's GEMMs the
// builder would only slow them.
bool BuildAhead(const RunOptions& o,
                const std::vector<std::unique_ptr<kernels::Backend>>& backends) {
  if (o.build_ahead != "auto") return o.build_ahead == "on";
  const int cores = UsableCores();
  bool all_cpu = true;  // CPU replicas share --threads between them
  for (const auto& b : backends) all_cpu = all_cpu && b->name() == "cpu";
  return !all_cpu || (o.threads > 0 && o.threads < cores);
}

reports::RunResults NewResults(const RunOptions& o, const TaskSelection& sel) {
  reports::RunResults results;
  reports::RunConfig* cfg = results.mutable_config();
  for (const tasks::Task* t : sel.loglikelihood) cfg->add_tasks(t->name());
  for (const tasks::Task* t : sel.generation) cfg->add_tasks(t->name());
  cfg->set_limit(o.limit);
  cfg->set_shard_index(o.shard_index);
  cfg->set_shard_count(o.shard_count);
  cfg->set_seed(o.seed);
  cfg->set_num_fewshot(o.num_fewshot);
  cfg->set_batch_tokens(o.batch_tokens);
  cfg->set_data_dir(o.data_dir);
  cfg->set_data_cache(o.data_cache);
  cfg->set_harness_version(kHarnessVersion);
  cfg->set_git_commit(FOCAL_GIT_COMMIT);
  return results;
}

// One model loaded for the run, with its identity recorded in `run`.
struct LoadedModel {
  std::string dir;
  std::unique_ptr<model::LanguageModel> model;
  // --device with several entries: the model's forward pass on each further
  // device. One that can read the first device's buffers (a CPU beside a
  // CPU) shares its weights; any other loads the model again.
  std::vector<std::unique_ptr<model::Transformer>> shared;
  std::vector<std::unique_ptr<model::LanguageModel>> copies;
  std::vector<model::Transformer*> replicas;  // in --device order, the first's excluded
  const model::Tokenizer* tok = nullptr;
  bool add_bos = true;
  int64_t max_length = 0;
  std::string cache_path;  // the scores' resume log; empty = none
  reports::ModelRun* run = nullptr;
};

}  // namespace

std::string CacheIdentity(const reports::ModelRun& run) {
  return Sha256Hex(absl::StrCat("weights=", run.weights_sha256(), "\nconfig=", run.config_sha256(),
                                "\nvariant=", run.variant(), "\ntokenizer=", run.tokenizer_sha256(),
                                "\nbackend=", run.backend(), "\nbos=", run.bos_policy(),
                                "\nmax_length=", run.max_length(),
                                "\nscoring_version=", kScoringVersion, "\n"));
}

namespace {

absl::StatusOr<LoadedModel> LoadModel(
    const RunOptions& o, size_t index, const std::string& dir,
    const std::vector<std::unique_ptr<kernels::Backend>>& backends, reports::RunResults& results) {
  kernels::Backend& backend = *backends[0];
  LoadedModel lm;
  lm.dir = dir;
  model::LoadOptions lo;
  lo.focal_temperature = o.focal_temperature;
  if (index < o.model_temperatures.size() && o.model_temperatures[index].has_value()) {
    lo.focal_temperature = o.model_temperatures[index];
  }
  lo.transformer.allow_length_extrapolation = o.allow_length_extrapolation;
  FOCAL_ASSIGN_OR_RETURN(lm.model, model::LanguageModel::Load(dir, backend, lo));
  for (size_t r = 1; r < backends.size(); ++r) {
    absl::StatusOr<std::unique_ptr<model::Transformer>> shared =
        lm.model->TransformerOn(*backends[r]);
    if (shared.ok()) {
      lm.shared.push_back(*std::move(shared));
      lm.replicas.push_back(lm.shared.back().get());
      continue;
    }
    absl::StatusOr<std::unique_ptr<model::LanguageModel>> copy =
        model::LanguageModel::Load(dir, *backends[r], lo);
    if (!copy.ok()) {
      return Annotate(copy.status(), absl::StrCat("replica on ", backends[r]->name()));
    }
    lm.copies.push_back(*std::move(copy));
    lm.replicas.push_back(&lm.copies.back()->transformer());
  }
  lm.tok = lm.model->tokenizer();
  FOCAL_ASSIGN_OR_RETURN(std::string weights_sha, model::WeightsSha256(lm.model->store()));
  const std::string tok_sha = lm.tok->sha256();
  // auto: the tokenizer's own convention, as lm-eval's HF backend.
  lm.add_bos = engine::ResolveAddBos(o.bos, *lm.tok);
  lm.max_length = lm.model->config().max_position_embeddings;
  lm.run = results.add_models();
  lm.run->set_model_path(dir);
  lm.run->set_weights_sha256(weights_sha);
  lm.run->set_config_sha256(Sha256Hex(lm.model->config().Fingerprint()));
  lm.run->set_variant(lm.model->config().Variant());
  lm.run->set_tokenizer(lm.tok->path());
  lm.run->set_tokenizer_sha256(tok_sha);
  lm.run->set_bos_policy(lm.add_bos ? "bos" : "no-bos");
  lm.run->set_backend(backend.name());
  lm.run->set_max_length(lm.max_length);
  if (!o.cache_dir.empty() || !o.out.empty()) {
    const std::string cdir = o.cache_dir.empty() ? o.out + ".cache" : o.cache_dir;
    std::error_code ec;
    std::filesystem::create_directories(cdir, ec);
    // Everything that can change a number besides the request itself:
    // results of another backend, precision or code version are never reused.
    // Shards keep their own logs: array tasks sharing a --cache-dir run at
    // once, and a resubmitted task resumes from its own.
    const std::string shard =
        o.shard_count > 1 ? absl::StrCat("-shard", o.shard_index, "of", o.shard_count) : "";
    lm.cache_path = absl::StrCat(cdir, "/", weights_sha.substr(0, 16), "-",
                                 CacheIdentity(*lm.run).substr(0, 16), shard, ".jsonl");
  }
  return lm;
}

// The model's transformer on every device, the first device's first.
std::vector<model::Transformer*> Replicas(const LoadedModel& lm) {
  std::vector<model::Transformer*> tfs = {&lm.model->transformer()};
  tfs.insert(tfs.end(), lm.replicas.begin(), lm.replicas.end());
  return tfs;
}

// Every loglikelihood request of every task, scored in one scorer call.
struct ScoredRequests {
  std::vector<engine::TokenizedRequest> all;
  std::vector<std::vector<std::vector<int64_t>>> index;  // task -> doc -> request ids in `all`
  std::vector<int64_t> truncated;                        // per task
  std::vector<tasks::LoglikelihoodResult> results;       // parallel to `all`
  engine::ScoreStats stats;
};

absl::StatusOr<ScoredRequests> ScoreTasks(const RunOptions& o, LoadedModel& lm,
                                          const std::vector<TaskData>& data) {
  ScoredRequests s;
  s.index.resize(data.size());
  s.truncated.assign(data.size(), 0);
  for (size_t ti = 0; ti < data.size(); ++ti) {
    for (const auto& doc_reqs : data[ti].requests) {
      std::vector<int64_t> ids;
      for (const tasks::LoglikelihoodRequest& r : doc_reqs) {
        auto tr = engine::TokenizeRequest(*lm.tok, lm.add_bos, lm.max_length, r);
        if (!tr.ok()) return Annotate(tr.status(), absl::StrCat("task ", data[ti].task->name()));
        s.truncated[ti] += tr->truncated;
        ids.push_back(static_cast<int64_t>(s.all.size()));
        s.all.push_back(std::move(*tr));
      }
      s.index[ti].push_back(std::move(ids));
    }
  }
  FOCAL_ASSIGN_OR_RETURN(engine::ResultCache cache, engine::ResultCache::Open(lm.cache_path));
  engine::ProgressLine progress(o.progress, ::isatty(2), o.progress_interval, std::cerr);
  engine::ScorerOptions so;
  so.batch_tokens = o.batch_tokens;
  const auto score_start = std::chrono::steady_clock::now();
  so.progress = [&](int64_t d, int64_t t, int64_t tokens) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - score_start).count();
    progress.Update(std::filesystem::path(lm.dir).filename().string(), "requests", d, t,
                    absl::StrFormat("%.0f tok/s", secs > 0 ? tokens / secs : 0.0));
  };
  FOCAL_ASSIGN_OR_RETURN(s.results,
                         engine::ScoreRequests(Replicas(lm), s.all, cache, so, &s.stats));
  return s;
}

// One document's line in the per-sample log.
std::string SampleLine(const LoadedModel& lm, const TaskData& td, size_t di,
                       absl::Span<const tasks::LoglikelihoodResult> rs, const tasks::DocScore& ds) {
  const tasks::Task& task = *td.task;
  std::vector<std::string> continuations;
  std::vector<double> lls;
  std::vector<bool> greedy;
  for (size_t k = 0; k < rs.size(); ++k) {
    continuations.push_back(td.requests[di][k].continuation);
    lls.push_back(rs[k].ll);
    greedy.push_back(rs[k].is_greedy);
  }
  JsonObjectWriter line;
  line.String("model", lm.dir)
      .String("variant", lm.model->config().Variant())
      .String("task", task.name())
      .String("doc_id", td.docs[di].id)
      .Int("doc_index", td.docs[di].index)
      .String("context", td.requests[di][0].context)
      .StringArray("continuations", continuations)
      .DoubleArray("loglikelihoods", lls)
      .BoolArray("is_greedy", greedy)
      .Int("prediction", ds.prediction);
  if (task.spec().output_type() == tasks::MULTIPLE_INPUT) {
    std::vector<std::string> contexts;
    for (const auto& r : td.requests[di]) contexts.push_back(r.context);
    line.StringArray("contexts", contexts);
  }
  if (task.spec().output_type() == tasks::MULTIPLE_CHOICE ||
      task.spec().output_type() == tasks::MULTIPLE_INPUT) {
    line.Int("gold", td.docs[di].gold);
  } else {
    line.String("gold", td.requests[di][0].continuation);
  }
  line.DoubleMap("metrics", ds.metrics);
  return line.Finish() + "\n";
}

// The last context token of each document's first request, for the first
// `limit` documents: the position that predicts the answer.
std::vector<engine::ProbeInput> AnswerProbes(const ScoredRequests& s, size_t ti, int64_t limit) {
  std::vector<engine::ProbeInput> probes;
  for (size_t di = 0; di < s.index[ti].size() && static_cast<int64_t>(probes.size()) < limit;
       ++di) {
    if (s.index[ti][di].empty()) continue;
    const engine::TokenizedRequest& r = s.all[s.index[ti][di][0]];
    if (r.input.size() < r.continuation.size()) continue;  // context cut away
    const int64_t ctx = static_cast<int64_t>(r.input.size() - r.continuation.size());
    engine::ProbeInput p;
    p.tokens.assign(r.input.begin(), r.input.begin() + ctx + 1);
    p.row = ctx;
    probes.push_back(std::move(p));
  }
  return probes;
}

// Scores one task's documents, logs them, and adds its TaskResult (and its
// details for `compare`).
absl::Status RecordTask(const RunOptions& o, LoadedModel& lm, const TaskData& td,
                        const ScoredRequests& s, size_t ti, const engine::SampleSink& samples,
                        engine::ModelDetails* md) {
  const tasks::Task& task = *td.task;
  std::map<std::string, std::vector<double>> per_metric;
  std::string samples_text;
  for (size_t di = 0; di < td.docs.size(); ++di) {
    std::vector<tasks::LoglikelihoodResult> rs;
    for (int64_t id : s.index[ti][di]) rs.push_back(s.results[id]);
    FOCAL_ASSIGN_OR_RETURN(tasks::DocScore ds, task.Score(td.docs[di], rs));
    for (const auto& [k, v] : ds.metrics) per_metric[k].push_back(v);
    samples_text += SampleLine(lm, td, di, rs, ds);
  }
  FOCAL_RETURN_IF_ERROR(samples(samples_text));
  if (md != nullptr) {
    engine::TaskDetails& d = (*md)[task.name()];
    Sha256 h;
    for (const auto& ids : s.index[ti]) {
      for (int64_t id : ids) h.Update(s.all[id].Key());
    }
    d.requests_sha256 = h.HexDigest();
    d.per_doc = per_metric;
    if (o.keep_requests) {
      for (const auto& ids : s.index[ti]) {
        for (int64_t id : ids) d.requests.push_back(s.all[id]);
      }
    }
    if (o.attention_samples > 0) {
      FOCAL_ASSIGN_OR_RETURN(
          d.attention,
          engine::MeasureAttention(lm.model->transformer(),
                                   AnswerProbes(s, ti, o.attention_samples), o.prefill_chunk));
    }
  }
  reports::TaskResult* tr = lm.run->add_tasks();
  tr->set_task(task.name());
  tr->set_version(task.spec().version());
  tr->set_num_fewshot(o.num_fewshot);
  tr->set_num_docs(static_cast<int64_t>(td.docs.size()));
  tr->set_num_docs_total(td.total_docs);
  tr->set_data_path(td.path);
  tr->set_reader(td.reader);
  tr->set_note(JoinNotes({datasets::ReaderCaveat(td.reader), td.note}));
  tr->set_data_source(datasets::DataOriginName(td.origin));
  tr->set_data_sha256(td.sha256);
  tr->set_fewshot_path(td.fewshot_path);
  int64_t nreq = 0;
  for (const auto& r : td.requests) nreq += static_cast<int64_t>(r.size());
  tr->set_num_requests(nreq);
  tr->set_truncated_requests(s.truncated[ti]);
  if (o.shard_count > 1) {
    for (size_t di = 0; di < td.docs.size(); ++di) {
      reports::DocValues* dv = tr->add_docs();
      dv->set_doc_index(td.docs[di].index);
      for (const std::string& name : task.spec().metrics()) dv->add_values(per_metric[name][di]);
    }
  }
  for (const std::string& name : task.spec().metrics()) {
    const tasks::MetricDef& def = *tasks::FindMetric(name);
    const std::vector<double>& xs = per_metric[name];
    reports::MetricValue* mv = tr->add_metrics();
    mv->set_name(name);
    mv->set_n(static_cast<int64_t>(xs.size()));
    mv->set_value(tasks::AggregateValue(def, xs));
    mv->set_stderr(tasks::AggregateStderr(def, xs));
    mv->set_higher_is_better(def.higher_is_better);
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// An environment variable that must be a non-negative integer when set.
absl::StatusOr<std::optional<int64_t>> EnvInt(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr) return std::nullopt;
  int64_t x = 0;
  if (!absl::SimpleAtoi(v, &x) || x < 0 || x > INT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard auto: ", name, "='", v, "' is not a non-negative integer"));
  }
  return x;
}

}  // namespace

absl::Status ParseShard(const std::string& text, int* index, int* count, const EnvLookup& env_in,
                        std::string* source) {
  const EnvLookup env = env_in ? env_in : [](const char* name) { return std::getenv(name); };
  if (text == "auto" || absl::StartsWith(text, "auto/")) {
    int64_t want = 0;  // the count given after "auto/"; 0 = none
    if (text != "auto" &&
        (!absl::SimpleAtoi(text.substr(5), &want) || want < 1 || want > INT32_MAX)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shard '", text, "': the count after auto/ must be a positive integer"));
    }
    FOCAL_ASSIGN_OR_RETURN(auto task_id, EnvInt(env, "SLURM_ARRAY_TASK_ID"));
    FOCAL_ASSIGN_OR_RETURN(auto task_count, EnvInt(env, "SLURM_ARRAY_TASK_COUNT"));
    FOCAL_ASSIGN_OR_RETURN(auto task_min, EnvInt(env, "SLURM_ARRAY_TASK_MIN"));
    FOCAL_ASSIGN_OR_RETURN(auto task_max, EnvInt(env, "SLURM_ARRAY_TASK_MAX"));
    FOCAL_ASSIGN_OR_RETURN(auto k8s_index, EnvInt(env, "JOB_COMPLETION_INDEX"));
    int64_t i = 0, n = 0;
    std::string from;
    if (task_id.has_value() && want > 0) {
      // The count is given: the task id is the shard, so resubmitting some
      // tasks of an array (--array=2) runs those shards.
      i = *task_id;
      n = want;
      from = absl::StrCat("SLURM_ARRAY_TASK_ID=", i, " of ", n, " shards");
    } else if (task_id.has_value()) {
      if (!task_count.has_value()) {
        return absl::InvalidArgumentError(
            "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
      }
      const int64_t lo = task_min.value_or(0);
      n = *task_count;
      i = *task_id - lo;
      // Shards are every N-th document: the array's ids must be lo..lo+N-1.
      if (task_max.has_value() && *task_max - lo + 1 != n) {
        return absl::InvalidArgumentError(
            absl::StrCat("--shard auto: the Slurm array ", lo, "-", *task_max, " has ", n,
                         " tasks; shards need consecutive task ids (no step, e.g. --array=0-",
                         n - 1, "), or give the count as --shard auto/N"));
      }
      from = absl::StrCat("SLURM_ARRAY_TASK_ID=", *task_id, " of ", n);
    } else if (k8s_index.has_value()) {
      if (want == 0) {
        return absl::InvalidArgumentError(
            "--shard auto: JOB_COMPLETION_INDEX is set but the Job's completions are not "
            "visible to the pod: give them as --shard auto/N");
      }
      i = *k8s_index;
      n = want;
      from = absl::StrCat("JOB_COMPLETION_INDEX=", i, " of ", n);
    } else {
      return absl::InvalidArgumentError(
          "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
          "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --shard I/N");
    }
    if (i < 0 || i >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shard auto: shard ", i, " is outside 0..", n - 1, " (", from, ")"));
    }
    *index = static_cast<int>(i);
    *count = static_cast<int>(n);
    if (source != nullptr) *source = from;
    return absl::OkStatus();
  }
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], index) ||
      !absl::SimpleAtoi(parts[1], count) || *count < 1 || *index < 0 || *index >= *count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard '", text, "' must be I/N with 0 <= I < N (e.g. 0/4), auto or auto/N"));
  }
  if (source != nullptr) source->clear();
  return absl::OkStatus();
}

absl::Status ListTasks(const RunOptions& o, std::ostream& out) {
  FOCAL_ASSIGN_OR_RETURN(tasks::TaskRegistry registry, LoadRegistry(o));
  out << "tasks:\n";
  for (const std::string& n : registry.TaskNames()) {
    out << "  " << n << "  " << registry.Find(n)->spec().description() << "\n";
  }
  out << "groups:\n";
  for (const auto& [g, names] : registry.Groups()) {
    out << "  " << g << ": ";
    for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
    out << "\n";
  }
  return absl::OkStatus();
}

absl::Status ParseModelSpec(const std::string& spec, std::string* dir,
                            std::optional<double>* temperature) {
  const size_t at = spec.rfind("@t=");
  if (at == std::string::npos) {
    *dir = spec;
    temperature->reset();
    return absl::OkStatus();
  }
  double t;
  if (!absl::SimpleAtod(spec.substr(at + 3), &t) || !(t > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", spec, "': the temperature after '@t=' must be a number > 0"));
  }
  *dir = spec.substr(0, at);
  *temperature = t;
  return absl::OkStatus();
}

absl::StatusOr<reports::RunResults> RunEvaluation(const RunOptions& o, std::ostream& out,
                                                  std::vector<engine::ModelDetails>* details) {
  if (o.num_fewshot < 0) return absl::InvalidArgumentError("--num-fewshot must be >= 0");
  if (o.batch_tokens < 1) return absl::InvalidArgumentError("--batch-tokens must be >= 1");
  FOCAL_ASSIGN_OR_RETURN(tasks::TaskRegistry registry, LoadRegistry(o));
  FOCAL_ASSIGN_OR_RETURN(TaskSelection selection, SelectTasks(o, registry));
  FOCAL_ASSIGN_OR_RETURN(const datasets::DataCatalog catalog, datasets::DataCatalog::LoadDefault());
  // Read every task's data before loading any model: bad data fails fast.
  std::vector<TaskData> data;
  std::vector<std::string> on_samples;
  for (const tasks::Task* t : selection.loglikelihood) {
    FOCAL_ASSIGN_OR_RETURN(TaskData td, LoadTask(o, *t, catalog));
    if (td.origin == datasets::DataOrigin::kSample) on_samples.push_back(t->name());
    if (!td.note.empty())
      std::cerr << "focal-eval: warning: task " << t->name() << ": " << td.note << "\n";
    data.push_back(std::move(td));
  }
  FOCAL_ASSIGN_OR_RETURN(engine::LongContextOptions lco,
                         MakeLongContextOptions(o, selection.generation, catalog));
  for (const auto& [name, files] : lco.task_data) {
    if (files.origin == datasets::DataOrigin::kSample) on_samples.push_back(name);
  }
  reports::RunResults results = NewResults(o, selection);
  if (!on_samples.empty()) {
    results.mutable_config()->set_data_warning(
        absl::StrCat(datasets::kSampleWarning, " (", absl::StrJoin(on_samples, ", "), ")"));
    std::cerr << "focal-eval: " << results.config().data_warning() << "\n";
  }

  std::string device_note;
  FOCAL_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<kernels::Backend>> backends,
                         kernels::CreateBackends(o.device, o.threads, &device_note));
  if (!device_note.empty()) std::cerr << device_note << "\n";
  lco.build_ahead = BuildAhead(o, backends);
  std::vector<std::string> models = o.models;
  if (models.empty()) {
    FOCAL_ASSIGN_OR_RETURN(std::string default_model, FindDefaultModel());
    models.push_back(std::move(default_model));
  }
  // Nothing else may write these while we run; the samples are streamed as
  // tasks and long-context groups finish, under their final name only at the end.
  std::vector<FileLock> locks;
  for (const std::string* path : {&o.out, &o.samples}) {
    if (path->empty() || (path == &o.samples && o.samples == o.out)) continue;
    FOCAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(*path));
    locks.push_back(std::move(lock));
  }
  std::optional<AtomicFileWriter> samples_file;
  if (!o.samples.empty()) {
    FOCAL_ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Open(o.samples));
    samples_file.emplace(std::move(w));
  }
  const engine::SampleSink samples = [&](absl::string_view lines) -> absl::Status {
    return samples_file.has_value() ? samples_file->Append(lines) : absl::OkStatus();
  };
  for (size_t mi = 0; mi < models.size(); ++mi) {
    const auto t0 = std::chrono::steady_clock::now();
    engine::ModelDetails* md = details != nullptr ? &details->emplace_back() : nullptr;
    FOCAL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(o, mi, models[mi], backends, results));
    FOCAL_ASSIGN_OR_RETURN(ScoredRequests scored, ScoreTasks(o, lm, data));
    for (size_t ti = 0; ti < data.size(); ++ti) {
      FOCAL_RETURN_IF_ERROR(RecordTask(o, lm, data[ti], scored, ti, samples, md));
    }
    lm.run->set_cached_requests(scored.stats.cached);  // RunLongContext adds its own
    if (!lco.tasks.empty()) {
      lco.add_bos = lm.add_bos;
      lco.cache_path =
          lm.cache_path.empty()
              ? ""
              : absl::StrCat(lm.cache_path.substr(0, lm.cache_path.size() - 6), "-gen.jsonl");
      lco.replicas = lm.replicas;
      FOCAL_RETURN_IF_ERROR(engine::RunLongContext(*lm.model, lco, *lm.run, samples, md));
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    lm.run->set_wall_seconds(secs);
    lm.run->set_tokens_processed(scored.stats.tokens_processed);
    lm.run->set_tokens_per_second(secs > 0 ? scored.stats.tokens_processed / secs : 0);
  }
  if (!o.out.empty()) {
    FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ResultsToJson(results));
    FOCAL_RETURN_IF_ERROR(WriteFileAtomic(o.out, json));
  }
  if (samples_file.has_value()) FOCAL_RETURN_IF_ERROR(samples_file->Commit());
  out << reports::SummaryTable(results);
  return results;
}

}  // namespace focal::harness
