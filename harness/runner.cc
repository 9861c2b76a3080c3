// SPDX-License-Identifier: Apache-2.0
// RunEvaluation: loads each model, scores the loglikelihood tasks, runs the
// long-context tasks and records results and samples. Finding the tasks'
// data: task_data.cc; parsing --shard and model specs: run_options.cc.
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

// The non-empty notes, "; " between them.
std::string JoinNotes(std::initializer_list<std::string> notes) {
  std::string out;
  for (const std::string& n : notes) {
    if (!n.empty()) absl::StrAppend(&out, out.empty() ? "" : "; ", n);
  }
  return out;
}

// --build-ahead: "auto" builds long-context samples beside the model when
// it leaves a CPU core free; with every core in the CPU backend's GEMMs the
// builder would only slow them.
bool BuildAhead(const RunOptions& o,
                const std::vector<std::unique_ptr<kernels::Backend>>& backends) {
  if (o.build_ahead != "auto") return o.build_ahead == "on";
  const int cores = UsableCores();
  bool all_cpu = true;  // CPU replicas share --threads between them
  for (const auto& b : backends) all_cpu = all_cpu && absl::StartsWith(b->name(), "cpu");
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
  // The backend tells a model's BF16 run from its exact run in one compare.
  line.String("model", lm.dir)
      .String("variant", lm.model->config().Variant())
      .String("backend", lm.run != nullptr ? lm.run->backend() : "")
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

  // Backends per precision: `compare` may put a model beside itself at
  // another precision ("DIR@bf16").
  std::map<std::string, std::vector<std::unique_ptr<kernels::Backend>>> backend_sets;
  auto backends_for =
      [&](size_t mi) -> absl::StatusOr<const std::vector<std::unique_ptr<kernels::Backend>>*> {
    const std::string key = mi < o.model_precisions.size() ? o.model_precisions[mi] : "";
    auto it = backend_sets.find(key);
    if (it == backend_sets.end()) {
      std::string device_note;
      FOCAL_ASSIGN_OR_RETURN(auto set, CreateModelBackends(o, mi, &device_note));
      if (!device_note.empty()) std::cerr << device_note << "\n";
      it = backend_sets.emplace(key, std::move(set)).first;
    }
    return &it->second;
  };
  {
    FOCAL_ASSIGN_OR_RETURN(auto first, backends_for(0));
    lco.build_ahead = BuildAhead(o, *first);
  }
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
    FOCAL_ASSIGN_OR_RETURN(auto backends, backends_for(mi));
    FOCAL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(o, mi, models[mi], *backends, results));
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
