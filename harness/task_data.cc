// SPDX-License-Identifier: Apache-2.0
#include "harness/task_data.h"

#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
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
  FOCAL_ASSIGN_OR_RETURN(lco.lengths, engine::ParseLengths(o.lengths));
  FOCAL_ASSIGN_OR_RETURN(lco.gold_depths, engine::ParseGoldDepths(o.gold_depth));
  lco.samples = o.limit > 0 ? o.limit : 500;
  lco.seed = o.long_seed;
  lco.data_dir = o.data_dir;
  // RULER's fetched set (scripts/fetch_data.sh) marks the cache as in use.
  lco.data_cache_in_use = o.data_dir.empty() && !o.data_cache.empty() &&
                          std::filesystem::exists(o.data_cache + "/ruler/essay_sentences.json");
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

}  // namespace focal::harness
