// SPDX-License-Identifier: Apache-2.0
// The "ruler" sample generator: RULER's synthetic families configured by a
// task spec. generator_options: `preset` (one of RULER's 13 configurations,
// e.g. "ruler_niah_single_2") and/or any field of ruler::TaskConfig:
// family (niah|vt|cwe|fwe|qa), haystack (noise|essay|needle), key_type and
// value_type (words|numbers|uuids), num_keys, num_values, num_queries,
// dataset (squad|hotpotqa), tokens_to_generate, min_length. data_files roles:
// haystack (essays json), squad, hotpotqa, words.
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/load_once.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/ruler.h"
#include "datasets/ruler_common.h"
#include "datasets/ruler_exact.h"

namespace focal::datasets::ruler {
namespace {

template <typename E>
absl::Status ParseEnum(const std::string& task, const std::string& key, const std::string& value,
                       const std::map<std::string, E>& names, E* out) {
  auto it = names.find(value);
  if (it == names.end()) {
    std::vector<std::string> known;
    for (const auto& [n, e] : names) known.push_back(n);
    return absl::InvalidArgumentError(absl::StrCat("task '", task, "': generator option ", key,
                                                   " '", value, "' is not one of ",
                                                   absl::StrJoin(known, ", ")));
  }
  *out = it->second;
  return absl::OkStatus();
}

template <typename I>
absl::Status ParseInt(const std::string& task, const std::string& key, const std::string& value,
                      I* out) {
  int64_t v;
  if (!absl::SimpleAtoi(value, &v) || v < 1) {
    return absl::InvalidArgumentError(absl::StrCat("task '", task, "': generator option ", key,
                                                   " '", value, "' must be a positive integer"));
  }
  *out = static_cast<I>(v);
  return absl::OkStatus();
}

absl::StatusOr<TaskConfig> ConfigFromOptions(const GeneratorRequest& r) {
  TaskConfig c{.name = r.task, .family = Family::kNiah, .tokens_to_generate = 0, .min_length = 0};
  if (auto p = r.options.find("preset"); p != r.options.end()) {
    const TaskConfig* preset = FindTask(p->second);
    if (preset == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("task '", r.task, "': unknown RULER preset '", p->second,
                       "'; known: ", absl::StrJoin(RulerTaskNames(), ", ")));
    }
    c = *preset;
    c.name = r.task;
  }
  const std::map<std::string, NeedleType> needle = {{"words", NeedleType::kWords},
                                                    {"numbers", NeedleType::kNumbers},
                                                    {"uuids", NeedleType::kUuids}};
  for (const auto& [key, value] : r.options) {
    absl::Status st;
    if (key == "preset") continue;
    if (key == "family") {
      st = ParseEnum<Family>(r.task, key, value,
                             {{"niah", Family::kNiah},
                              {"vt", Family::kVariableTracking},
                              {"cwe", Family::kCommonWords},
                              {"fwe", Family::kFreqWords},
                              {"qa", Family::kQa}},
                             &c.family);
    } else if (key == "haystack") {
      st = ParseEnum<Haystack>(
          r.task, key, value,
          {{"noise", Haystack::kNoise}, {"essay", Haystack::kEssay}, {"needle", Haystack::kNeedle}},
          &c.haystack);
    } else if (key == "key_type") {
      st = ParseEnum(r.task, key, value, needle, &c.key_type);
    } else if (key == "value_type") {
      st = ParseEnum(r.task, key, value, needle, &c.value_type);
    } else if (key == "dataset") {
      st = ParseEnum<QaDataset>(r.task, key, value,
                                {{"squad", QaDataset::kSquad}, {"hotpotqa", QaDataset::kHotpotQa}},
                                &c.dataset);
    } else if (key == "num_keys") {
      st = ParseInt(r.task, key, value, &c.num_keys);
    } else if (key == "num_values") {
      st = ParseInt(r.task, key, value, &c.num_values);
    } else if (key == "num_queries") {
      st = ParseInt(r.task, key, value, &c.num_queries);
    } else if (key == "tokens_to_generate") {
      st = ParseInt(r.task, key, value, &c.tokens_to_generate);
    } else if (key == "min_length") {
      st = ParseInt(r.task, key, value, &c.min_length);
    } else {
      st = absl::InvalidArgumentError(
          absl::StrCat("task '", r.task, "': unknown ruler generator option '", key, "'"));
    }
    FOCAL_RETURN_IF_ERROR(st);
  }
  if (c.tokens_to_generate < 1 || c.min_length < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("task '", r.task,
                     "': the ruler generator needs a preset or tokens_to_generate and "
                     "min_length"));
  }
  return c;
}

// RULER's own construction (ruler_exact.h) when the request is a plain preset
// and every file it reads resolved (the fetched layout has them all).
absl::StatusOr<std::vector<GenerationSample>> MakeExact(const GeneratorRequest& r,
                                                        const TaskConfig& config,
                                                        const std::string& ruler_task) {
  std::map<std::string, std::string> files;
  for (const std::string& role : ruler_exact::RolesOf(ruler_task)) files[role] = r.files.at(role);
  // Sources are read once per file set (hotpotqa.json alone is 46 MB).
  static auto* cache = new LoadOnce<std::map<std::string, std::string>, ruler_exact::Sources>();
  FOCAL_ASSIGN_OR_RETURN(std::shared_ptr<const ruler_exact::Sources> src,
                         cache->Get(files, [&] { return ruler_exact::LoadSources(files); }));
  if (!r.settings.count_text_tokens) {
    return absl::InvalidArgumentError("the RULER generator needs count_text_tokens");
  }
  FOCAL_ASSIGN_OR_RETURN(
      std::vector<ruler_exact::Sample> made,
      ruler_exact::Generate(ruler_task, r.length, r.settings.num_samples, r.settings.seed, *src,
                            r.settings.count_text_tokens));
  std::vector<GenerationSample> out;
  for (ruler_exact::Sample& m : made) {
    GenerationSample g;
    g.task = r.task;
    g.length = r.length;
    g.index = m.index;
    g.input = std::move(m.input);
    g.outputs = std::move(m.outputs);
    g.max_new_tokens = config.tokens_to_generate;
    g.meta["construction"] = "RULER 26.3 (byte-identical)";
    g.meta["ruler_task"] = ruler_task;
    g.meta["ruler_length"] = absl::StrCat(m.length);
    g.meta["seed"] = absl::StrCat(r.settings.seed);
    out.push_back(std::move(g));
  }
  return out;
}

absl::StatusOr<std::vector<GenerationSample>> Make(const GeneratorRequest& r) {
  FOCAL_ASSIGN_OR_RETURN(TaskConfig config, ConfigFromOptions(r));
  if (auto p = r.options.find("preset"); p != r.options.end() && r.options.size() == 1) {
    const std::string ruler_task(absl::StripPrefix(p->second, "ruler_"));
    // RULER's construction on RULER's data (fetched, verified; vt, fwe and
    // niah_multikey_3 read none, and follow the cache). Otherwise the older
    // approximation builds the samples, on the files given or the bundled
    // samples (the results label their origin).
    const std::vector<std::string> roles = ruler_exact::RolesOf(ruler_task);
    bool all = r.fetched;
    for (const std::string& role : roles) all = all && r.files.count(role) > 0;
    if (all) return MakeExact(r, config, ruler_task);
  }
  GeneratorOptions o = r.settings;
  auto file = [&](const char* role, std::string* field) {
    if (auto it = r.files.find(role); it != r.files.end()) *field = it->second;
  };
  file("haystack", &o.essay_haystack);
  file("squad", &o.squad);
  file("hotpotqa", &o.hotpotqa);
  file("words", &o.word_list);
  FOCAL_ASSIGN_OR_RETURN(std::vector<GenerationSample> out, MakeSamples(config, r.length, o));
  // Said in every sample, so a log or `prompts` file read alone says it too.
  for (GenerationSample& g : out) {
    g.meta["construction"] = "focal-eval approximation of RULER (not RULER's prompts)";
  }
  return out;
}

FOCAL_REGISTER_GENERATOR(ruler, {.id = "ruler", .make = Make});

}  // namespace
}  // namespace focal::datasets::ruler
