// SPDX-License-Identifier: Apache-2.0
// Sample generators for generation tasks (GENERATE_UNTIL specs): each builds
// the samples of one task at one context length. A generator is one file that
// registers itself with FOCAL_REGISTER_GENERATOR; its task specs name it by
// id, with its parameters in generator_options and its files in data_files.
#ifndef FOCAL_DATASETS_GENERATOR_H_
#define FOCAL_DATASETS_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/long_context.h"

namespace focal::datasets {

struct GeneratorRequest {
  std::string task;                            // the spec's name (also part of every sample's seed)
  int64_t length = 0;                          // context length in the evaluated model's tokens
  double gold_depth = -1;                      // generators with uses_gold_depth
  std::map<std::string, std::string> options;  // the spec's generator_options
  // The spec's data_files resolved to paths; a role that is absent means the
  // generator's bundled default.
  std::map<std::string, std::string> files;
  // Whether the run uses the fetched, verified data (scripts/fetch_data.sh):
  // `files` are the fetched ones, or the task reads none and the cache is in
  // use. The RULER generator then builds RULER's own prompts (ruler_exact.h).
  bool fetched = false;
  GeneratorOptions settings;  // seed, sample count, token counter
};

struct Generator {
  std::string id;
  // True when samples are built per gold depth (--gold-depth).
  bool uses_gold_depth = false;
  std::function<absl::StatusOr<std::vector<GenerationSample>>(const GeneratorRequest&)> make;
};

// nullptr for an unknown id.
const Generator* FindGenerator(absl::string_view id);
std::vector<std::string> GeneratorIds();  // sorted

namespace internal {
bool RegisterGenerator(Generator generator);
}  // namespace internal

}  // namespace focal::datasets

// Registers a Generator at start-up (the library is linked whole, see
// datasets/CMakeLists.txt, so registrations are never dropped).
#define FOCAL_REGISTER_GENERATOR(name, ...)                   \
  [[maybe_unused]] static const bool focal_generator_##name = \
      ::focal::datasets::internal::RegisterGenerator(__VA_ARGS__)

#endif  // FOCAL_DATASETS_GENERATOR_H_
