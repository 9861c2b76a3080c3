// SPDX-License-Identifier: Apache-2.0
// RULER's 13 synthetic tasks exactly as RULER's own generator builds them
// (nvidia-long-context-eval 26.3: data/prepare.py, data/synthetic/*.py,
// synthetic.yaml; tests/reference/ruler_reference.py runs it): the same
// `input`, gold `outputs` and `length` for the same seed, tokenizer, length
// and sample count, byte for byte (RulerExactParity proves it on two
// tokenizers at 4096 and 8192).
//
// That means following RULER's randomness to the draw: one global
// random.Random(seed) threaded through the haystack-size search and every
// sample, fresh random.Random(seed) objects for its shuffles, numpy's legacy
// RandomState(seed) for the variable-tracking values, its haystack search
// (a fixed step, re-drawing every sample at each step), and its quirks (a
// qa search counts the Python repr of the gold list; fwe fits the prompt to
// the whole length and leaves no room for the answer; vt's answer prefix
// says "assgined").
//
// Inputs RULER takes from other packages: the wonderwords 3.0.1 word lists
// (nouns, adjectives, verbs, in file order) and NLTK punkt's sentence
// boundaries of the essay haystack, precomputed once at fetch time with
// pinned nltk and punkt_tab (scripts/fetch_data.py): sent_tokenize decides
// each boundary from the tokens around it, so the boundaries of a prefix of
// the essay are the full text's boundaries inside the prefix (the parity test
// checks this at every length it runs).
#ifndef FOCAL_DATASETS_RULER_EXACT_H_
#define FOCAL_DATASETS_RULER_EXACT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/long_context.h"

namespace focal::datasets::ruler_exact {

// RULER's task names, in synthetic.yaml's order (niah_single_1 ... qa_2).
const std::vector<std::string>& TaskNames();

struct Sources {
  // wonderwords' lists as read by _get_words_from_text_file (lines, rstripped).
  std::vector<std::string> nouns, adjectives, verbs;
  // PaulGrahamEssays.json's "text", and punkt's sentences of
  // " ".join(re.sub(r"\s+", " ", text).split(" ")).strip() as byte spans.
  std::string essay;
  std::vector<std::pair<int64_t, int64_t>> essay_sentences;
  std::string squad_json;     // RULER's squad.json (contents)
  std::string hotpotqa_json;  // RULER's hotpotqa.json (contents)
};

// Reads the sources from the fetched RULER folder (scripts/fetch_data.py):
// wonderwords/{nounlist,adjectivelist,verblist}.txt, PaulGrahamEssays.json,
// essay_sentences.json ({"spans": [[begin, end], ...]}, bytes), squad.json
// and hotpotqa.json. NotFound names a missing file and the fetch command.
absl::StatusOr<Sources> LoadSources(absl::string_view ruler_dir);
// The same from files by role: nouns, adjectives, verbs, haystack,
// sentences, squad, hotpotqa; a role that is absent is left empty (a task that
// needs it then fails).
absl::StatusOr<Sources> LoadSources(const std::map<std::string, std::string>& files);
// The roles `task` reads (e.g. niah_single_2: nouns, adjectives, haystack,
// sentences); empty for an unknown task.
std::vector<std::string> RolesOf(absl::string_view task);

// Number of tokens HF's tokenizer.tokenize(text) gives (no special tokens).
using CountTokens = std::function<absl::StatusOr<int64_t>(absl::string_view)>;

struct Sample {
  int64_t index = 0;
  std::string input;
  std::vector<std::string> outputs;
  int64_t length = 0;  // RULER's: tokens of input + tokens_to_generate
};

// prepare.py --task `task` --max_seq_length `max_seq_length` --num_samples
// `num_samples` --random_seed `seed` --model_template_type base. Only the
// sources a task reads need to be filled. InvalidArgument for an unknown task
// (listing the valid ones) or a length RULER cannot fill (RULER loops
// forever there; the message gives the numbers).
absl::StatusOr<std::vector<Sample>> Generate(absl::string_view task, int64_t max_seq_length,
                                             int64_t num_samples, uint64_t seed,
                                             const Sources& sources, const CountTokens& count);

// Python's repr() of a list of str (what f"{list}" prints).
std::string PyListRepr(const std::vector<std::string>& items);

}  // namespace focal::datasets::ruler_exact

#endif  // FOCAL_DATASETS_RULER_EXACT_H_
