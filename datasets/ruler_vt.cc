// SPDX-License-Identifier: Apache-2.0
// RULER's variable tracking (scripts/data/synthetic/variable_tracking.py):
// one chain of 4 hops, "VAR ABCDE = 12345" then "VAR FGHIJ = VAR ABCDE " (the
// trailing space is RULER's), hidden in the noise haystack, with a one-shot
// example in front.
//
// The one-shot example (RULER: generated once with 3-letter names and value
// 12345, its noise fit so that its prompt has at most 500 tokens; then per
// sample its names and value are replaced by random ones): we lay it out once
// per call (noise lines and chain positions from its own generator, fit to
// 500 tokens with count_tokens) and render it per sample with 3-letter names
// and a value drawn by the sample's generator. Its text is the full prompt,
// answer prefix included, then " " + the five names + "\n"; the sample's
// input is that + "\n" + the sample's own prompt.
//
// Per sample, with the sample's generator r, in RULER's order: five distinct
// 5-letter names (random.choices of A-Z), the value (numpy's
// randint(10000, 99999), i.e. 10000..99998, drawn here with r), the chain
// positions sorted(r.sample(range(N), 5)) with chain[j] inserted at
// position[j] + j among N noise lines joined by "\n"; then the example's five
// names and value. Golds: the five names.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "datasets/ruler_common.h"

namespace focal::datasets::ruler {
namespace {

constexpr int kNumHops = 4;
constexpr int kChainLength = kNumHops + 1;
constexpr int64_t kIclMaxTokens = 500;  // RULER: max_seq_length=500 for the example

// Distinct names of `k` capital letters ("VAR" excluded: it is the keyword).
std::vector<std::string> DrawNames(PyRandom& r, int k) {
  std::vector<std::string> names;
  while (static_cast<int>(names.size()) < kChainLength) {
    std::string name = RandomLetters(r, 'A', k);
    if (name == "VAR" || std::find(names.begin(), names.end(), name) != names.end()) continue;
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<std::string> Chain(const std::vector<std::string>& names, absl::string_view value) {
  std::vector<std::string> chain = {absl::StrCat("VAR ", names[0], " = ", value)};
  for (int j = 0; j < kNumHops; ++j) {
    chain.push_back(absl::StrCat("VAR ", names[j + 1], " = VAR ", names[j], " "));
  }
  return chain;
}

struct Rendered {
  std::string prompt;
  std::vector<int64_t> offsets;  // of the chain lines in `prompt`
  std::vector<std::string> depths;
};

// The vt prompt (template + answer prefix) with `noise_lines` noise lines and
// the chain inserted before lines `positions` (sorted; RULER's insert at
// position[j] + j).
Rendered RenderPrompt(int64_t noise_lines, const std::vector<int64_t>& positions,
                      const std::vector<std::string>& names, absl::string_view value) {
  const std::vector<std::string> chain = Chain(names, value);
  std::vector<int> kind(noise_lines, -1);
  for (int j = 0; j < kChainLength; ++j) kind.insert(kind.begin() + positions[j] + j, j);
  std::string context;
  Rendered out;
  const int64_t total = static_cast<int64_t>(kind.size());
  for (int64_t i = 0; i < total; ++i) {
    if (i > 0) context.push_back('\n');
    if (kind[i] >= 0) {
      out.offsets.push_back(static_cast<int64_t>(context.size()));
      out.depths.push_back(
          absl::StrFormat("%.1f", 100.0 * static_cast<double>(i) / static_cast<double>(total)));
      absl::StrAppend(&context, chain[kind[i]]);
    } else {
      absl::StrAppend(&context, kNoiseSentence);
    }
  }
  // RULER then replaces ". \n" by ".\n", which never occurs with the noise
  // haystack (noise lines end in "again.", chain lines in a name or "= 12345").
  size_t at = 0;
  const std::string num_v = absl::StrCat(kChainLength);
  out.prompt = FormatTemplate(absl::StrCat(kVtTemplate, kVtAnswerPrefix),
                              {{"context", context}, {"query", value}, {"num_v", num_v}}, &at);
  for (int64_t& o : out.offsets) o += static_cast<int64_t>(at);
  return out;
}

std::vector<int64_t> DrawPositions(PyRandom& r, int64_t noise_lines) {
  std::vector<int64_t> positions = SampleIndices(r, noise_lines, kChainLength);
  std::sort(positions.begin(), positions.end());
  return positions;
}

struct IclLayout {
  int64_t noise_lines = 0;
  std::vector<int64_t> positions;
};

// RULER's example: its noise grown until its prompt (3-letter names, value
// 12345) has at most 500 tokens.
absl::StatusOr<IclLayout> FitIcl(const TaskConfig& task, const GeneratorOptions& options) {
  const uint64_t seed = SampleSeed(options.seed, absl::StrCat(task.name, "/icl"), 0);
  auto render = [&](int64_t lines) -> absl::StatusOr<Candidate> {
    PyRandom r(seed);
    const std::vector<std::string> names = DrawNames(r, 3);
    Candidate c;
    c.input = RenderPrompt(lines, DrawPositions(r, lines), names, "12345").prompt;
    return c;
  };
  // When even the smallest example exceeds 500 tokens RULER keeps its
  // smallest size (5 lines), and so do we: only the whole prompt must fit.
  int64_t lines = kChainLength;
  FOCAL_ASSIGN_OR_RETURN(const Candidate smallest, render(lines));
  FOCAL_ASSIGN_OR_RETURN(const int64_t tokens, options.count_tokens(smallest.input));
  if (tokens <= kIclMaxTokens) {
    auto fit =
        FitUnits(render, options.count_tokens, kIclMaxTokens, kChainLength, int64_t{1} << 20, 5, 0);
    if (!fit.ok()) return Annotate(fit.status(), "the one-shot example");
    lines = fit->units;
  }
  PyRandom r(seed);
  DrawNames(r, 3);
  return IclLayout{lines, DrawPositions(r, lines)};
}

}  // namespace

absl::StatusOr<std::vector<GenerationSample>> MakeVtSamples(const TaskConfig& task, int64_t length,
                                                            const GeneratorOptions& options) {
  FOCAL_ASSIGN_OR_RETURN(const IclLayout icl, FitIcl(task, options));
  FamilyPlan plan;
  plan.render = [&](int64_t index, int64_t lines) -> absl::StatusOr<Candidate> {
    PyRandom r(SampleSeed(options.seed, task.name, index));
    const std::vector<std::string> names = DrawNames(r, 5);
    const std::string value = absl::StrCat(RandInt(r, 10000, 99998));
    const std::vector<int64_t> positions = DrawPositions(r, lines);
    // The example, re-drawn for this sample (RULER's randomize_icl).
    const std::vector<std::string> icl_names = DrawNames(r, 3);
    const std::string icl_value = absl::StrCat(RandInt(r, 10000, 99998));
    const std::string example =
        absl::StrCat(RenderPrompt(icl.noise_lines, icl.positions, icl_names, icl_value).prompt, " ",
                     absl::StrJoin(icl_names, " "), "\n");
    Rendered main = RenderPrompt(lines, positions, names, value);
    const int64_t shift = static_cast<int64_t>(example.size()) + 1;
    for (int64_t& o : main.offsets) o += shift;
    Candidate c;
    c.input = absl::StrCat(example, "\n", main.prompt);
    c.outputs = names;
    c.meta["chain"] = absl::StrJoin(names, ",");
    c.meta["value"] = value;
    c.meta["chain_offsets"] = JoinInts(main.offsets);
    c.meta["chain_depths"] = absl::StrJoin(main.depths, ",");
    c.meta["icl_noise_lines"] = absl::StrCat(icl.noise_lines);
    return c;
  };
  plan.min_units = [](int64_t) -> int64_t { return kChainLength; };
  plan.probe_units = 25;  // RULER's step for noise haystacks
  plan.unit_name = "noise lines";
  return BuildSamples(task, length, options, plan);
}

}  // namespace focal::datasets::ruler
