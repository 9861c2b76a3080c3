// SPDX-License-Identifier: Apache-2.0
// The long-context evaluation loop: plan (task, length, depth) groups, build
// their samples (one group ahead on another thread when a core is free),
// generate what the resume cache lacks, score, and record per-length results.
#include "engine/long_context_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/json.h"
#include "base/json_writer.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "base/work_queue.h"
#include "datasets/generator.h"
#include "datasets/hotpotqa_long.h"
#include "engine/generation_cache.h"
#include "engine/generator.h"
#include "engine/jsonl_log.h"
#include "engine/progress.h"
#include "model/memory_estimate.h"
#include "reports/length_summary.h"
#include "tasks/metric_registry.h"

namespace focal::engine {
namespace {

std::string DetailsKey(const std::string& task, int64_t length, double depth) {
  std::string k = absl::StrCat(task, "@", length);
  if (depth >= 0) absl::StrAppend(&k, "@", depth);
  return k;
}

struct Job {
  const tasks::Task* task = nullptr;
  // The sample; its input text is dropped once encoded (kept only where the
  // attention probe needs it): at 128K tokens the text would double the
  // prompt ids' memory.
  datasets::GenerationSample sample;
  std::string prompt_sha256;
  double depth = -1;
  GenerationRequest request;
};

// Token positions [begin, end) of the byte spans "b-e,b-e" in a prompt:
// begin is the token count of the text before the span minus one (the
// separator before a needle may share its first token), end the count
// through the span.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SpanTokens(
    const std::string& input, const std::string& spans, const datasets::TokenCounter& count) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (absl::string_view sp : absl::StrSplit(spans, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> be = absl::StrSplit(sp, '-');
    size_t b = 0, e = 0;
    if (!absl::SimpleAtoi(be.first, &b) || !absl::SimpleAtoi(be.second, &e) || b > e ||
        e > input.size()) {
      return absl::InternalError(absl::StrCat("bad needle span '", sp, "'"));
    }
    FOCAL_ASSIGN_OR_RETURN(int64_t tb, count(absl::string_view(input).substr(0, b)));
    FOCAL_ASSIGN_OR_RETURN(int64_t te, count(absl::string_view(input).substr(0, e)));
    out.emplace_back(std::max<int64_t>(tb - 1, 0), te);
  }
  return out;
}

// The attention diagnostics of the first `attention_samples` prompts of each
// task and length: the last prompt token is probed (the position that starts
// the answer), with the queried needles as key ranges on RULER NIAH tasks.
absl::Status ProbeAttention(model::LanguageModel& model, const LongContextOptions& o,
                            const datasets::TokenCounter& count, const std::vector<Job>& jobs,
                            std::map<std::string, TaskDetails>& details) {
  std::map<std::string, std::vector<ProbeInput>> probes;
  for (const Job& j : jobs) {
    std::vector<ProbeInput>& ps = probes[DetailsKey(j.sample.task, j.sample.length, j.depth)];
    if (static_cast<int64_t>(ps.size()) >= o.attention_samples) continue;
    ProbeInput p;
    p.tokens = j.request.prompt;
    p.row = static_cast<int64_t>(p.tokens.size()) - 1;
    if (auto it = j.sample.meta.find("query_needle_spans"); it != j.sample.meta.end()) {
      FOCAL_ASSIGN_OR_RETURN(p.key_ranges, SpanTokens(j.sample.input, it->second, count));
    }
    ps.push_back(std::move(p));
  }
  for (const auto& [key, ps] : probes) {
    FOCAL_ASSIGN_OR_RETURN(details[key].attention,
                           MeasureAttention(model.transformer(), ps, o.prefill_chunk));
  }
  return absl::OkStatus();
}

// One (task, length, depth) group of samples, built when it is reached.
struct Group {
  const tasks::Task* task;
  const datasets::Generator* gen;
  datasets::GeneratorRequest req;
};

// Per task, length (and gold depth): each metric's per-sample values.
struct ScoreKey {
  std::string task;
  int64_t length;
  double depth;
  bool operator<(const ScoreKey& k) const {
    return std::tie(task, length, depth) < std::tie(k.task, k.length, k.depth);
  }
};
struct Scores {
  std::map<ScoreKey, std::map<std::string, std::vector<double>>> values;
  std::map<ScoreKey, std::vector<reports::DocValues>> shard_docs;  // sharded runs only
};

// Every group of the run, in order. Bad data fails here, before any compute:
// one sample per task at the shortest length is built.
absl::StatusOr<std::vector<Group>> PlanGroups(const LongContextOptions& o,
                                              const datasets::GeneratorOptions& lc) {
  std::vector<Group> groups;
  for (const tasks::Task* task : o.tasks) {
    const tasks::TaskSpec& spec = task->spec();
    const datasets::Generator* gen = datasets::FindGenerator(spec.generator());
    if (gen == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("task '", spec.name(), "': unknown generator '", spec.generator(),
                       "' (known: ", absl::StrJoin(datasets::GeneratorIds(), ", "), ")"));
    }
    datasets::GeneratorRequest req;
    req.task = spec.name();
    req.options.insert(spec.generator_options().begin(), spec.generator_options().end());
    if (auto it = o.task_data.find(spec.name()); it != o.task_data.end()) {
      req.files = it->second.files;
      req.fetched =
          it->second.origin == datasets::DataOrigin::kFetched ||
          (it->second.origin == datasets::DataOrigin::kSynthetic && it->second.fetched_set_present);
    } else if (!o.data_dir.empty()) {
      for (const auto& [role, rel] : spec.data_files()) {
        req.files[role] = absl::StrCat(o.data_dir, "/", rel);
      }
    }
    req.settings = lc;
    datasets::GeneratorRequest probe = req;
    probe.settings.num_samples = 1;
    probe.length = o.lengths.front();
    probe.gold_depth = gen->uses_gold_depth ? o.gold_depths.front() : -1.0;
    if (auto one = gen->make(probe); !one.ok()) {
      return Annotate(one.status(), absl::StrCat(spec.name(), " at ", probe.length, " tokens"));
    }
    for (int64_t len : o.lengths) {
      for (double depth : gen->uses_gold_depth ? o.gold_depths : std::vector<double>{-1.0}) {
        req.length = len;
        req.gold_depth = depth;
        groups.push_back({task, gen, req});
      }
    }
  }
  return groups;
}

// A group's samples (this shard's), their prompts encoded. Reads only its
// arguments, so it may run on another thread while the model works.
absl::StatusOr<std::vector<Job>> BuildJobs(const Group& group, const LongContextOptions& o,
                                           const model::Tokenizer& tok) {
  const std::string& name = group.task->spec().name();
  auto samples = group.gen->make(group.req);
  if (!samples.ok()) {
    return Annotate(samples.status(), absl::StrCat(name, " at ", group.req.length, " tokens"));
  }
  std::vector<Job> jobs;
  for (datasets::GenerationSample& s : *samples) {
    if (s.index % o.shard_count != o.shard_index) continue;
    Job j;
    FOCAL_ASSIGN_OR_RETURN(j.request.prompt, tok.Encode(s.input, o.add_bos));
    if (j.request.prompt.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " at ", group.req.length, " tokens: sample ", s.index, " has an empty prompt"));
    }
    j.prompt_sha256 = Sha256Hex(s.input);
    // ProbeAttention reads the first attention_samples' text.
    if (static_cast<int64_t>(jobs.size()) >= o.attention_samples) std::string().swap(s.input);
    j.request.max_new_tokens = s.max_new_tokens;
    j.request.stop = s.stop;
    j.sample = std::move(s);
    j.sample.task = name;
    j.task = group.task;
    j.depth = group.req.gold_depth;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// Generates what the cache does not hold yet, in slices so finished work
// reaches the cache as it goes; with replicas, each slice goes to whichever
// is free (greedy decoding is batch-invariant: the same text either way).
// `done` counts samples finished in the run.
absl::Status GenerateMissing(absl::Span<model::Transformer* const> models,
                             const model::Tokenizer& tok, const std::vector<Job>& jobs,
                             GenerationOptions go, int64_t max_batch, int64_t total,
                             ProgressLine& progress, GenerationCache& cache, int64_t& done,
                             int64_t& cached) {
  std::vector<GenerationRequest> todo;
  for (const Job& j : jobs) {
    if (cache.Find(RequestKey(j.request)) == nullptr) todo.push_back(j.request);
  }
  cached += static_cast<int64_t>(jobs.size() - todo.size());
  done += static_cast<int64_t>(jobs.size() - todo.size());
  const size_t slice = static_cast<size_t>(std::max<int64_t>(max_batch, 1)) * 4;
  std::mutex mu;                                    // the cache, the counts and the progress line
  std::vector<int64_t> in_slice(models.size(), 0);  // per replica: done in its slice
  const size_t slices = (todo.size() + slice - 1) / slice;
  return RunOnWorkers(models.size(), slices, [&](size_t r, size_t i) {
    GenerationOptions gr = go;
    gr.progress = [&, r](int64_t d, int64_t) {
      std::lock_guard<std::mutex> lock(mu);
      in_slice[r] = d;
      int64_t now = done;
      for (int64_t x : in_slice) now += x;
      progress.Update("generating", "samples", now, std::max(total, done), "");
    };
    const size_t b = i * slice, e = std::min(todo.size(), b + slice);
    absl::StatusOr<std::vector<GenerationResult>> res =
        GenerateGreedy(*models[r], tok, absl::MakeConstSpan(todo).subspan(b, e - b), gr);
    std::lock_guard<std::mutex> lock(mu);
    in_slice[r] = 0;
    FOCAL_RETURN_IF_ERROR(
        models.size() == 1
            ? res.status()
            : Annotate(res.status(),
                       absl::StrCat("replica ", r, " (", models[r]->backend().name(), ")")));
    for (size_t k = 0; k < res->size(); ++k) {
      FOCAL_RETURN_IF_ERROR(cache.Add(RequestKey(todo[b + k]), {(*res)[k].text, (*res)[k].finish}));
    }
    done += static_cast<int64_t>(e - b);
    return absl::OkStatus();
  });
}

// Scores a generated group into `scores` and `details` and returns its
// per-sample JSON lines.
std::string ScoreJobs(const std::vector<Job>& jobs, const GenerationCache& cache,
                      const LongContextOptions& o, const reports::ModelRun& run, Scores& scores,
                      std::map<std::string, TaskDetails>* details) {
  std::string lines;
  for (const Job& j : jobs) {
    const CachedGeneration& g = *cache.Find(RequestKey(j.request));
    const datasets::GenerationSample& s = j.sample;
    const ScoreKey key{s.task, s.length, j.depth};
    std::map<std::string, double> m;  // by name: the order of values in DocValues
    for (const std::string& name : j.task->spec().metrics()) {
      m[name] = tasks::FindMetric(name)->generation(
          s.score_prefix.empty() ? g.text : absl::StrCat(s.score_prefix, g.text), s.outputs);
    }
    for (const auto& [k, v] : m) scores.values[key][k].push_back(v);
    if (o.shard_count > 1) {
      reports::DocValues dv;
      dv.set_doc_index(s.index);
      dv.set_context_length(s.length);
      if (j.depth >= 0) dv.set_gold_depth(j.depth);
      for (const auto& [k, v] : m) dv.add_values(tasks::FindMetric(k)->scale * v);
      scores.shard_docs[key].push_back(std::move(dv));
    }
    if (details != nullptr) {
      TaskDetails& d = (*details)[DetailsKey(s.task, s.length, j.depth)];
      for (const auto& [k, v] : m) d.per_doc[k].push_back(v);
      // Paired comparisons need the very same prompts: chain their checksums.
      d.requests_sha256 = Sha256Hex(absl::StrCat(d.requests_sha256, RequestKey(j.request)));
    }
    JsonObjectWriter line;
    line.String("model", run.model_path())
        .String("variant", run.variant())
        .String("backend", run.backend())
        .String("task", s.task);
    line.Int("length", s.length).Int("index", s.index);
    if (j.depth >= 0) line.ShortDouble("gold_depth", j.depth);
    line.String("prompt_sha256", j.prompt_sha256)
        .Int("prompt_tokens", static_cast<int64_t>(j.request.prompt.size()))
        .Int("max_new_tokens", s.max_new_tokens)
        .StringMap("meta", s.meta)
        .StringArray("gold", s.outputs)
        .String("prediction", g.text)
        .String("finish", g.finish)
        .ShortDoubleMap("scores", m);
    absl::StrAppend(&lines, line.Finish(), "\n");
  }
  return lines;
}

// Per task, length (and gold depth): the mean of per-sample scores x 100.
void AddTaskResults(const LongContextOptions& o, Scores& scores, reports::ModelRun& run) {
  std::map<std::string, int32_t> versions;
  for (const tasks::Task* t : o.tasks) versions[t->name()] = t->spec().version();
  std::map<std::string, reports::TaskResult*> results;
  if (o.shard_count > 1) {
    // A shard can hold no sample of a task (fewer samples than shards). It
    // still lists every task, in the order the others do, so that merge sees
    // one run; the task has no metrics and no documents there.
    for (const auto& [name, version] : versions) {
      reports::TaskResult* tr = results[name] = run.add_tasks();
      tr->set_task(name);
      tr->set_version(version);
    }
  }
  for (const auto& [key, metrics] : scores.values) {
    reports::TaskResult*& tr = results[key.task];
    if (tr == nullptr) {
      tr = run.add_tasks();
      tr->set_task(key.task);
      tr->set_version(versions.at(key.task));
    }
    if (auto it = o.task_data.find(key.task);
        it != o.task_data.end() && tr->data_source().empty()) {
      const datasets::ResolvedFiles& f = it->second;
      tr->set_data_source(datasets::DataOriginName(f.origin));
      for (const auto& [role, path] : f.files) {
        tr->set_data_path(
            absl::StrCat(tr->data_path(), tr->data_path().empty() ? "" : ",", role, "=", path));
        tr->set_data_sha256(absl::StrCat(tr->data_sha256(), tr->data_sha256().empty() ? "" : ",",
                                         role, "=", f.sha256.at(role)));
      }
    }
    for (const auto& [name, xs] : metrics) {
      const tasks::MetricDef& def = *tasks::FindMetric(name);
      std::vector<double> scaled;
      for (double x : xs) scaled.push_back(def.scale * x);
      reports::MetricValue* mv = tr->add_metrics();
      mv->set_name(name);
      mv->set_value(tasks::AggregateValue(def, scaled));
      mv->set_stderr(tasks::AggregateStderr(def, scaled));
      mv->set_n(static_cast<int64_t>(xs.size()));
      mv->set_higher_is_better(def.higher_is_better);
      mv->set_context_length(key.length);
      if (key.depth >= 0) mv->set_gold_depth(key.depth);
    }
    for (reports::DocValues& dv : scores.shard_docs[key]) *tr->add_docs() = std::move(dv);
    tr->set_num_docs(tr->num_docs() + static_cast<int64_t>(metrics.begin()->second.size()));
    tr->set_num_requests(tr->num_docs());
  }
}

}  // namespace

datasets::GeneratorOptions TokenizerGeneratorOptions(const model::Tokenizer& tok, bool add_bos) {
  datasets::GeneratorOptions o;
  o.count_tokens = [&tok, add_bos](absl::string_view text) -> absl::StatusOr<int64_t> {
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(text, add_bos));
    return static_cast<int64_t>(ids.size());
  };
  o.count_text_tokens = [&tok](absl::string_view text) -> absl::StatusOr<int64_t> {
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(text, /*add_bos=*/false));
    return static_cast<int64_t>(ids.size());
  };
  o.token_prefix = [&tok](absl::string_view text, int64_t n) -> absl::StatusOr<std::string> {
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(text, /*add_bos=*/false));
    return datasets::PrefixOfTokens(text, ids, n,
                                    [&tok](absl::Span<const int32_t> p) { return tok.Decode(p); });
  };
  return o;
}

absl::Status BuildPrompts(const model::Tokenizer& tok, const LongContextOptions& o,
                          const PromptSink& sink) {
  datasets::GeneratorOptions lc = TokenizerGeneratorOptions(tok, o.add_bos);
  lc.seed = o.seed;
  lc.num_samples = o.samples;
  FOCAL_ASSIGN_OR_RETURN(const std::vector<Group> groups, PlanGroups(o, lc));
  for (const Group& g : groups) {
    const std::string& name = g.task->spec().name();
    auto samples = g.gen->make(g.req);
    if (!samples.ok()) {
      return Annotate(samples.status(), absl::StrCat(name, " at ", g.req.length, " tokens"));
    }
    PromptGroup pg{g.task, g.req.length, g.req.gold_depth, {}};
    for (datasets::GenerationSample& s : *samples) {
      if (s.index % o.shard_count != o.shard_index) continue;
      s.task = name;
      pg.samples.push_back(std::move(s));
    }
    FOCAL_RETURN_IF_ERROR(sink(std::move(pg)));
  }
  return absl::OkStatus();
}

absl::Status RunLongContext(model::LanguageModel& model, const LongContextOptions& o,
                            reports::ModelRun& run, const SampleSink& samples_log,
                            std::map<std::string, TaskDetails>* details) {
  const model::ModelConfig& cfg = model.config();
  const model::Tokenizer& tok = *model.tokenizer();
  const int64_t max_len = o.lengths.back();
  if (max_len > cfg.max_position_embeddings && !o.allow_length_extrapolation) {
    return absl::OutOfRangeError(absl::StrCat(
        "--lengths up to ", max_len, " exceed the model's max_position_embeddings (",
        cfg.max_position_embeddings, "); use shorter lengths or --allow-length-extrapolation"));
  }
  // Memory is computed before anything runs, per device, and a run that
  // cannot fit stops.
  std::vector<model::Transformer*> models = {&model.transformer()};
  models.insert(models.end(), o.replicas.begin(), o.replicas.end());
  std::map<std::string, int64_t> needs;  // by device: CPU replicas share the host's memory
  for (model::Transformer* m : models) {
    kernels::Backend& backend = m->backend();
    const int64_t one = model::EstimateGenerationBytes(
        cfg, max_len, cfg.focal.NeedsWholeSequence() ? max_len : o.prefill_chunk, o.max_batch,
        backend);
    if (m == models[0]) run.set_memory_estimate_bytes(one);
    const int64_t need = needs[backend.name()] += one;
    const int64_t avail = backend.AvailableMemoryBytes();
    std::cerr << absl::StrFormat(
        "long-context: lengths up to %d tokens need ~%.1f MiB (KV cache + one %d-token prefill "
        "chunk + workspaces) beside the weights; %.1f MiB available on %s\n",
        max_len, need / 1048576.0, o.prefill_chunk, avail / 1048576.0, backend.name());
    if (avail > 0 && need > avail) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the run needs ~%.0f MiB but %.0f MiB are available on %s: lower --lengths, "
          "--prefill-chunk or --gen-batch",
          need / 1048576.0, avail / 1048576.0, backend.name()));
    }
  }
  run.set_length_extrapolated(max_len > cfg.max_position_embeddings);

  datasets::GeneratorOptions lc = TokenizerGeneratorOptions(tok, o.add_bos);
  lc.seed = o.seed;
  lc.num_samples = o.samples;

  // Samples are built lazily, one (task, length, depth) group at a time, and
  // dropped once scored: memory does not grow with tasks x lengths x samples,
  // and results reach the cache and the samples file as groups finish. With
  // build_ahead the next group is built on another thread while the model
  // works on this one (two groups in memory at most).
  FOCAL_ASSIGN_OR_RETURN(const std::vector<Group> groups, PlanGroups(o, lc));

  GenerationCache cache;
  FOCAL_RETURN_IF_ERROR(cache.Open(o.cache_path));
  GenerationOptions go;
  go.prefill_chunk = o.prefill_chunk;
  go.max_batch = o.max_batch;
  go.stop_ids = model.StopIds();
  ProgressLine progress(o.progress, ::isatty(2), o.progress_interval, std::cerr);
  // This shard's samples per group (generators make num_samples each).
  const int64_t per_group =
      std::max<int64_t>(0, (o.samples - o.shard_index + o.shard_count - 1) / o.shard_count);
  const int64_t total = per_group * static_cast<int64_t>(groups.size());
  int64_t done = 0, cached = 0;
  Scores scores;
  // (Declared after everything the builder reads: an early return waits for
  // it in the future's destructor before those go.)
  std::future<absl::StatusOr<std::vector<Job>>> ahead;
  for (size_t i = 0; i < groups.size(); ++i) {
    absl::StatusOr<std::vector<Job>> jobs =
        ahead.valid() ? ahead.get() : BuildJobs(groups[i], o, tok);
    if (o.build_ahead && i + 1 < groups.size()) {
      ahead = std::async(std::launch::async,
                         [&, next = &groups[i + 1]] { return BuildJobs(*next, o, tok); });
    }
    if (!jobs.ok()) return jobs.status();
    FOCAL_RETURN_IF_ERROR(
        GenerateMissing(models, tok, *jobs, go, o.max_batch, total, progress, cache, done, cached));
    FOCAL_RETURN_IF_ERROR(samples_log(ScoreJobs(*jobs, cache, o, run, scores, details)));
    if (details != nullptr && o.attention_samples > 0) {
      FOCAL_RETURN_IF_ERROR(ProbeAttention(model, o, lc.count_tokens, *jobs, *details));
    }
  }
  run.set_cached_requests(run.cached_requests() + cached);
  AddTaskResults(o, scores, run);
  // RULER's headline: the mean over tasks per length, and the effective length.
  return reports::SetLengthSummaries(run);
}

}  // namespace focal::engine
