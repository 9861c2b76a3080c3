// SPDX-License-Identifier: Apache-2.0
// The RULER task table and the entry point; the families live in
// ruler_niah.cc, ruler_vt.cc, ruler_cwe_fwe.cc and ruler_qa.cc.
#include "datasets/ruler.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "datasets/ruler_common.h"

namespace focal::datasets {
namespace ruler {
namespace {

// RULER scripts/synthetic.yaml; tokens_to_generate from constants.py. The
// minimum lengths are ours: RULER's own runs start at 4096, and its vt and
// cwe one-shot examples need room (vt's example alone is fit to 500 tokens).
// clang-format off
constexpr TaskConfig kTasks[] = {
    {.name = "ruler_niah_single_1", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kNoise},
    {.name = "ruler_niah_single_2", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kEssay},
    {.name = "ruler_niah_single_3", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kEssay, .value_type = NeedleType::kUuids},
    {.name = "ruler_niah_multikey_1", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kEssay, .num_keys = 4},
    {.name = "ruler_niah_multikey_2", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kNeedle},
    {.name = "ruler_niah_multikey_3", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kNeedle, .key_type = NeedleType::kUuids,
     .value_type = NeedleType::kUuids},
    {.name = "ruler_niah_multivalue", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kEssay, .num_values = 4},
    {.name = "ruler_niah_multiquery", .family = Family::kNiah, .tokens_to_generate = 128,
     .min_length = 512, .haystack = Haystack::kEssay, .num_queries = 4},
    {.name = "ruler_vt", .family = Family::kVariableTracking, .tokens_to_generate = 30,
     .min_length = 1024},
    {.name = "ruler_cwe", .family = Family::kCommonWords, .tokens_to_generate = 120,
     .min_length = 1024},
    {.name = "ruler_fwe", .family = Family::kFreqWords, .tokens_to_generate = 50,
     .min_length = 512},
    {.name = "ruler_qa_1", .family = Family::kQa, .tokens_to_generate = 32, .min_length = 512,
     .dataset = QaDataset::kSquad},
    {.name = "ruler_qa_2", .family = Family::kQa, .tokens_to_generate = 32, .min_length = 512,
     .dataset = QaDataset::kHotpotQa},
};
// clang-format on

}  // namespace

absl::Span<const TaskConfig> AllTasks() { return kTasks; }

const TaskConfig* FindTask(absl::string_view name) {
  for (const TaskConfig& t : kTasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace ruler

std::vector<std::string> RulerTaskNames() {
  std::vector<std::string> names;
  for (const ruler::TaskConfig& t : ruler::AllTasks()) names.emplace_back(t.name);
  return names;
}

int64_t RulerMinLength(absl::string_view task) {
  const ruler::TaskConfig* t = ruler::FindTask(task);
  return t == nullptr ? -1 : t->min_length;
}

absl::StatusOr<std::vector<GenerationSample>> MakeRulerSamples(absl::string_view task,
                                                               int64_t length,
                                                               const GeneratorOptions& options) {
  const ruler::TaskConfig* config = ruler::FindTask(task);
  if (config == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown RULER task '", task, "'; known: ", absl::StrJoin(RulerTaskNames(), ", ")));
  }
  return ruler::MakeSamples(*config, length, options);
}

namespace ruler {

absl::StatusOr<std::vector<GenerationSample>> MakeSamples(const TaskConfig& cfg, int64_t length,
                                                          const GeneratorOptions& options) {
  const TaskConfig* config = &cfg;
  const absl::string_view task = cfg.name;
  if (length < config->min_length || length > kRulerMaxLength) {
    return absl::InvalidArgumentError(absl::StrCat(task, ": length ", length, " is outside [",
                                                   config->min_length, ", ", kRulerMaxLength, "]"));
  }
  if (options.num_samples < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(task, ": num_samples must be at least 1, got ", options.num_samples));
  }
  if (!options.count_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(task, ": no count_tokens given"));
  }
  switch (config->family) {
    case Family::kNiah:
      return MakeNiahSamples(*config, length, options);
    case Family::kVariableTracking:
      return MakeVtSamples(*config, length, options);
    case Family::kCommonWords:
      return MakeCweSamples(*config, length, options);
    case Family::kFreqWords:
      return MakeFweSamples(*config, length, options);
    case Family::kQa:
      return MakeQaSamples(*config, length, options);
  }
  return absl::InternalError("unreachable");
}

}  // namespace ruler

}  // namespace focal::datasets
