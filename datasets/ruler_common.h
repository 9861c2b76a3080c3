// SPDX-License-Identifier: Apache-2.0
// Internal to the RULER generators (datasets/ruler*.cc): the task table,
// RULER's templates, CPython-equivalent random draws on PyRandom, the
// bundled data, and the length fitting every family shares.
#ifndef FOCAL_DATASETS_RULER_COMMON_H_
#define FOCAL_DATASETS_RULER_COMMON_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/py_random.h"
#include "datasets/long_context.h"

namespace focal::datasets::ruler {

using ::focal::PyRandom;

// --- Task table (RULER scripts/synthetic.yaml + constants.py) ---------------

enum class Family { kNiah, kVariableTracking, kCommonWords, kFreqWords, kQa };
enum class Haystack { kNoise, kEssay, kNeedle };
enum class NeedleType { kWords, kNumbers, kUuids };
enum class QaDataset { kSquad, kHotpotQa };

struct TaskConfig {
  absl::string_view name;  // "ruler_niah_single_1"
  Family family;
  int64_t tokens_to_generate;
  int64_t min_length;
  // niah
  Haystack haystack = Haystack::kNoise;
  NeedleType key_type = NeedleType::kWords;
  NeedleType value_type = NeedleType::kNumbers;
  int num_keys = 1;
  int num_values = 1;
  int num_queries = 1;
  // qa
  QaDataset dataset = QaDataset::kSquad;
};

// All 13 tasks in RULER's order; nullptr for an unknown name.
absl::Span<const TaskConfig> AllTasks();
const TaskConfig* FindTask(absl::string_view name);

// Builds the samples of `config` (its name seeds them) at `length`.
absl::StatusOr<std::vector<GenerationSample>> MakeSamples(const TaskConfig& config, int64_t length,
                                                          const GeneratorOptions& options);

// RULER's prompt templates and answer prefixes, verbatim
// (scripts/data/synthetic/constants.py). The model reads template + prefix.
inline constexpr absl::string_view kNiahTemplate =
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to "
    "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are "
    "all the special magic {type_needle_v} for {query} mentioned in the provided text?";
inline constexpr absl::string_view kNiahAnswerPrefix =
    " The special magic {type_needle_v} for {query} mentioned in the provided text are";
inline constexpr absl::string_view kVtTemplate =
    "Memorize and track the chain(s) of variable assignment hidden in the following "
    "text.\n\n{context}\nQuestion: Find all variables that are assigned the value {query} in "
    "the text above.";
inline constexpr absl::string_view kVtAnswerPrefix =
    " Answer: According to the chain(s) of variable assignment in the text above, {num_v} "
    "variables are assigned the value {query}, they are: ";
inline constexpr absl::string_view kCweTemplate =
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most "
    "common words in the above list?";
inline constexpr absl::string_view kCweAnswerPrefix =
    " Answer: The top 10 words that appear most often in the list are:";
inline constexpr absl::string_view kFweTemplate =
    "Read the following coded text and track the frequency of each coded word. Find the three "
    "most frequently appeared coded words. {context}\nQuestion: Do not provide any "
    "explanation. Please ignore the dots '....'. What are the three most frequently appeared "
    "words in the above coded text?";
inline constexpr absl::string_view kFweAnswerPrefix =
    " Answer: According to the coded text above, the three most frequently appeared words are:";
inline constexpr absl::string_view kQaTemplate =
    "Answer the question based on the given documents. Only give me the answer and do not "
    "output any other words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the "
    "question based on the given documents. Only give me the answer and do not output any "
    "other words.\n\nQuestion: {query}";
inline constexpr absl::string_view kQaAnswerPrefix = " Answer:";

// RULER's noise haystack sentence (niah.py, variable_tracking.py).
inline constexpr absl::string_view kNoiseSentence =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

// Python str.format with named fields only (RULER's templates have no other
// braces). Each {name} must be in `fields` (a bug otherwise). When
// `context_offset` is given it receives the output offset of the first
// {context}.
struct Field {
  absl::string_view name;
  absl::string_view value;
};
std::string FormatTemplate(absl::string_view tmpl, absl::Span<const Field> fields,
                           size_t* context_offset = nullptr);

// --- Random draws, as CPython's random module makes them ------------------

// The seed of sample `index` of `task`: a SplitMix64 mix of the run seed, an
// FNV-1a hash of the task name and the index (fixed arithmetic: the same on
// every machine).
uint64_t SampleSeed(uint64_t seed, absl::string_view task, int64_t index);
// random.randint(a, b) = a + _randbelow(b - a + 1) (b - a + 1 < 2^32).
int64_t RandInt(PyRandom& rng, int64_t a, int64_t b);
// random.shuffle(x).
template <typename T>
void Shuffle(PyRandom& rng, std::vector<T>& x) {
  for (int64_t i = static_cast<int64_t>(x.size()) - 1; i > 0; --i) {
    const int64_t j = rng.RandBelow(i + 1);
    std::swap(x[i], x[j]);
  }
}
// random.sample(range(n), k): the same draws as PyRandom::Sample, with a
// bitmap instead of a linear search for the set method (k may be large).
std::vector<int64_t> SampleIndices(PyRandom& rng, int64_t n, int64_t k);
// ''.join(random.choices(alphabet, k=k)) for the 26 letters from `first`
// ('A' = string.ascii_uppercase, 'a' = string.ascii_lowercase).
std::string RandomLetters(PyRandom& rng, char first, int k);
// str(random.randint(10**6, 10**7 - 1)): RULER's 7-digit needle values.
std::string RandomNumber(PyRandom& rng);
// str(uuid.UUID(int=random.getrandbits(128), version=4)).
std::string RandomUuid(PyRandom& rng);

// --- Data ------------------------------------------------------------------

// `configured`, or the bundled file `bundled_rel` (relative to the project
// root: $FOCAL_ASSET_DIR, else the source tree this file was compiled from).
std::string DataPath(absl::string_view configured, absl::string_view bundled_rel);

// datasets/words/ruler_words.txt (format in datasets/words/README.md).
struct WordList {
  std::vector<std::string> adjectives;  // sorted, unique
  std::vector<std::string> nouns;       // sorted, unique
  std::vector<std::string> singles;     // sorted union of both
  int64_t num_pairs() const {
    return static_cast<int64_t>(adjectives.size()) * static_cast<int64_t>(nouns.size());
  }
  // The i-th of the sorted "adjective-noun" keys (for [a-z]+ words, sorting
  // the joined strings sorts by adjective, then noun).
  std::string Pair(int64_t i) const;
};
absl::StatusOr<WordList> LoadWordList(const GeneratorOptions& options);

// The essay haystack as RULER reads it: re.sub(r"\s+", " ", text).split(" ")
// (Python's Unicode whitespace).
absl::StatusOr<std::vector<std::string>> LoadEssayWords(const GeneratorOptions& options);
std::vector<std::string> CollapseAndSplitWords(absl::string_view text);

// Sentence splitter standing in for NLTK's sent_tokenize on whitespace-
// collapsed text: a sentence ends at '.', '?' or '!' followed by ' ' (the
// space is dropped, so " ".join(sentences) gives the text back).
std::vector<absl::string_view> SplitSentences(absl::string_view text);

// --- Length fitting -----------------------------------------------------------

// One rendered prompt and its golds.
struct Candidate {
  std::string input;
  std::vector<std::string> outputs;
  std::map<std::string, std::string> meta;
};

// Renders sample `index` with a haystack of `units` units.
using SampleRenderer = std::function<absl::StatusOr<Candidate>(int64_t index, int64_t units)>;

struct FamilyPlan {
  SampleRenderer render;
  // Smallest meaningful haystack of sample `index` (e.g. its gold documents).
  std::function<int64_t(int64_t index)> min_units;
  int64_t max_units = int64_t{1} << 40;  // beyond it the data runs out
  int64_t probe_units = 1;               // first size tried for sample 0
  absl::string_view unit_name;           // "words", "lines", "documents", ...
  // Units too big to stop at "less than a unit to spare" (qa documents): the
  // search always counts one unit more (see FitUnits).
  bool exact = false;
};

// The shared driver: finds the haystack size for sample 0 by interpolation
// and bisection on count_tokens, then fits every sample starting from it
// (usually one count per sample), and fills GenerationSample (task, length,
// index, input, outputs, max_new_tokens, meta incl. the common keys of
// ruler.h).
absl::StatusOr<std::vector<GenerationSample>> BuildSamples(const TaskConfig& task, int64_t length,
                                                           const GeneratorOptions& options,
                                                           const FamilyPlan& plan);

// Largest units in [min_units, max_units] whose prompt fits `budget` tokens,
// stopping early once one fits with less than one unit's tokens to spare
// (unless `exact`: then units + 1 is always counted and found too long).
struct FitResult {
  int64_t units = 0;
  int64_t tokens = 0;
  double tokens_per_unit = 0;
  Candidate candidate;
  // Why the search stopped: "room_below_one_unit" (fits, less than
  // tokens_per_unit to spare), "next_unit_overflows" (units + 1 was counted
  // and does not fit) or "max_units".
  std::string stop;
};
absl::StatusOr<FitResult> FitUnits(const std::function<absl::StatusOr<Candidate>(int64_t)>& render,
                                   const TokenCounter& count, int64_t budget, int64_t min_units,
                                   int64_t max_units, int64_t guess, double tokens_per_unit,
                                   bool exact = false);

// Comma-joined decimal integers.
std::string JoinInts(absl::Span<const int64_t> v);

// --- Families (ruler_niah.cc, ruler_vt.cc, ruler_cwe_fwe.cc, ruler_qa.cc) -----

absl::StatusOr<std::vector<GenerationSample>> MakeNiahSamples(const TaskConfig& task,
                                                              int64_t length,
                                                              const GeneratorOptions& options);
absl::StatusOr<std::vector<GenerationSample>> MakeVtSamples(const TaskConfig& task, int64_t length,
                                                            const GeneratorOptions& options);
absl::StatusOr<std::vector<GenerationSample>> MakeCweSamples(const TaskConfig& task, int64_t length,
                                                             const GeneratorOptions& options);
absl::StatusOr<std::vector<GenerationSample>> MakeFweSamples(const TaskConfig& task, int64_t length,
                                                             const GeneratorOptions& options);
absl::StatusOr<std::vector<GenerationSample>> MakeQaSamples(const TaskConfig& task, int64_t length,
                                                            const GeneratorOptions& options);

}  // namespace focal::datasets::ruler

#endif  // FOCAL_DATASETS_RULER_COMMON_H_
