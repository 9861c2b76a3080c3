// SPDX-License-Identifier: Apache-2.0
#include "harness/task_data.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/status_macros.h"

namespace focal::harness {

absl::StatusOr<tasks::TaskRegistry> LoadRegistry(const RunOptions& o) {
  std::vector<std::string> dirs = {o.spec_dir.empty() ? absl::StrCat(AssetRoot(), "/tasks/specs")
                                                      : o.spec_dir};
  dirs.insert(dirs.end(), o.extra_spec_dirs.begin(), o.extra_spec_dirs.end());
  return tasks::TaskRegistry::Load(dirs);
}

datasets::DataLocations Locations(const RunOptions& o, const std::string& task) {
  datasets::DataLocations where;
  if (auto it = o.data.find(task); it != o.data.end()) where.user_file = it->second;
  where.data_dir = o.data_dir;
  where.cache_dir = o.data_cache;
  where.asset_root = AssetRoot();
  return where;
}

absl::StatusOr<datasets::ResolvedData> ResolveData(const RunOptions& o, const tasks::TaskSpec& s,
                                                   const datasets::DataCatalog& catalog) {
  datasets::TaskDataSpec spec;
  spec.task = s.name();
  spec.reader = s.reader();
  spec.data_path = s.data_path();
  spec.sample_path = s.sample_path();
  spec.fetched_path = s.fetched_path();
  spec.fetched_reader = s.fetched_reader();
  spec.reference_sha256 = s.reference_sha256();
  spec.reference_name = s.reference_name();
  return datasets::ResolveTaskData(spec, Locations(o, s.name()), catalog);
}

absl::StatusOr<datasets::ResolvedFiles> ResolveGeneratorFiles(
    const RunOptions& o, const tasks::TaskSpec& s, const datasets::DataCatalog& catalog) {
  datasets::GeneratorDataSpec spec;
  spec.task = s.name();
  spec.data_files.insert(s.data_files().begin(), s.data_files().end());
  spec.fetched_data_files.insert(s.fetched_data_files().begin(), s.fetched_data_files().end());
  return datasets::ResolveGeneratorData(spec, Locations(o, s.name()), catalog);
}

absl::StatusOr<engine::LongContextOptions> MakeLongContextOptions(
    const RunOptions& o, const std::vector<const tasks::Task*>& generation,
    const datasets::DataCatalog& catalog) {
  engine::LongContextOptions lco;
  if (generation.empty()) return lco;
  lco.tasks = generation;
  for (const tasks::Task* t : generation) {
    FOCAL_ASSIGN_OR_RETURN(lco.task_data[t->name()], ResolveGeneratorFiles(o, t->spec(), catalog));
  }
  FOCAL_ASSIGN_OR_RETURN(lco.lengths, ParseLengths(o.lengths));
  FOCAL_ASSIGN_OR_RETURN(lco.gold_depths, ParseGoldDepths(o.gold_depth));
  lco.samples = o.limit > 0 ? o.limit : 500;
  lco.seed = o.long_seed;
  lco.data_dir = o.data_dir;
  lco.allow_length_extrapolation = o.allow_length_extrapolation;
  lco.prefill_chunk = o.prefill_chunk;
  lco.max_batch = o.gen_batch;
  lco.threads = o.threads;
  lco.progress = o.progress;
  lco.progress_interval = o.progress_interval;
  lco.attention_samples = o.attention_samples;
  lco.shard_index = o.shard_index;
  lco.shard_count = o.shard_count;
  return lco;
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

}  // namespace focal::harness
