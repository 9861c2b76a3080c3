// SPDX-License-Identifier: Apache-2.0
// NVIDIA RULER's 13 synthetic long-context tasks (github.com/NVIDIA/RULER,
// scripts/synthetic.yaml, scripts/data/synthetic/*.py), built to fit a context
// length counted with the evaluated model's own tokenizer. Scoring is in
// tasks/ruler_metrics.h.
//
// This is the approximation used where RULER's fetched inputs are absent
// (the bundled samples, or --data-dir files): every sample's meta says so.
// On the fetched data the ruler generator builds RULER's own prompts byte for
// byte instead (ruler_exact.h). The differences listed below are those of
// this approximation.
//
// What is RULER's, exactly: the task configurations, the prompt templates and
// answer prefixes (scripts/data/synthetic/constants.py; the answer prefix is
// the end of `input`, the "base" model template), the singular rewrite when
// one value is asked (Some->A, "are all"->is, are->is, "numbers"->"number"),
// the needle sentence, the noise sentence, tokens_to_generate, the haystack
// and distractor constructions and their random draws in RULER's order, and
// RULER's use of a fresh random.Random(seed) for some shuffles (so those
// permutations depend only on the seed and the list size: e.g. a qa gold
// document sits at the same slot in every sample with the same number of
// documents, and the cwe/fwe word slots repeat; RULER does the same).
//
// What differs, and why (none of it changes a template):
//  * Randomness is PyRandom (base/py_random.h) (CPython's MT19937) only: RULER's one
//    numpy draw (the vt value) comes from it too (fwe's zeta counts are
//    deterministic). Every sample has its own generator, seeded from
//    (options.seed, task, sample index) (SampleSeed in ruler_common.h), so a
//    sample does not depend on num_samples, on the length searches, or on
//    other samples; the same index at another length draws the same keys,
//    values and depths. RULER threads one global generator through its
//    searches, which no other implementation can reproduce anyway (its
//    tokenizers, wonderwords and NLTK are not ours).
//  * Keys: RULER's wonderwords adjective-noun pairs are replaced by pairs of
//    datasets/words/ruler_words.txt (written for focal-eval; ~130k pairs).
//    Keys of one sample are distinct, and a distractor needle never reuses a
//    queried key (RULER relies on its 10M-pair space for that).
//  * Sentences: RULER splits essays with NLTK's punkt. We use a simple,
//    deterministic splitter: after whitespace is collapsed, a sentence ends
//    at '.', '?' or '!' followed by a space (no abbreviation handling).
//  * cwe: RULER samples from wonderwords' nouns+adjectives+verbs and switches
//    to a bigger English list when more distinct words are needed; we sample
//    the single words of the word list, and when a length needs more use all
//    of them plus adjective-noun pairs ("adj-noun") (meta "word_pool").
//  * vt: the one-shot example is laid out once per call (fit to 500 tokens,
//    or its smallest 5 noise lines when even those exceed 500, as RULER) and
//    re-drawn per sample with fresh names and value; RULER does that with
//    str.replace on the text, which can clash with "VAR".
//  * qa_2 (HotpotQA): gold documents = the record's paragraphs whose titles
//    are in supporting_facts, the record's other paragraphs come next (like
//    SQuAD's same-article paragraphs), then other records' paragraphs. RULER
//    treats all ten record paragraphs as gold; the set of documents is the
//    same once 10 or more fit. Records missing a supporting paragraph in
//    their own context (many in the shared 500-record file), or with no
//    context, are skipped (meta "questions_skipped").
//  * qa: sample i asks question i of the file (as RULER); when num_samples
//    exceeds the usable questions, questions are asked again from the start
//    (meta "question_round" > 0). When the document pool is smaller than the
//    number of documents a length needs, the whole pool is repeated in order,
//    as RULER does (meta "docs_repeated"); essays too ("haystack_repeated").
//  * Fitting: RULER binary-searches the haystack size once per length and
//    then lowers it per sample by a fixed step until the sample fits. We
//    search once per (task, length) on sample 0 by interpolation and
//    bisection, then per sample from that size, accepting a size that fits
//    and leaves less than about one haystack unit of room (a word for essays,
//    a line for noise/needle haystacks, a distinct word for cwe, a few words
//    for fwe); for qa, whose units are whole documents, only a size whose
//    next size was counted and overflows. Every sample satisfies
//    count_tokens(input) + max_new_tokens <= length, exactly counted.
//
// Randomness uses only PyRandom (base/py_random.h) and integer/double arithmetic with
// fixed evaluation order: the same seed, data and token counter give
// byte-identical samples on every machine.
#ifndef FOCAL_DATASETS_RULER_H_
#define FOCAL_DATASETS_RULER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/long_context.h"

namespace focal::datasets {

// The 13 task names in RULER's order: ruler_niah_single_1..3,
// ruler_niah_multikey_1..3, ruler_niah_multivalue, ruler_niah_multiquery,
// ruler_vt, ruler_cwe, ruler_fwe, ruler_qa_1, ruler_qa_2.
std::vector<std::string> RulerTaskNames();

// The shortest length (tokens) MakeRulerSamples accepts for `task`; -1 for an
// unknown task. A length at or above it can still be too short for a given
// tokenizer (then MakeRulerSamples says how many tokens the smallest prompt
// needs).
int64_t RulerMinLength(absl::string_view task);

// The largest length accepted (2^22 tokens).
inline constexpr int64_t kRulerMaxLength = int64_t{1} << 22;

// Builds options.num_samples samples of `task` for context `length`: each
// has count_tokens(input) + max_new_tokens <= length.
//
// Data: options.essay_haystack ({"text": ...}), options.squad (SQuAD json;
// "is_impossible" questions skipped), options.hotpotqa (HotpotQA jsonl),
// options.word_list (datasets/words/README.md); an empty path means the
// bundled file under datasets/ (found via $FOCAL_ASSET_DIR, else the source
// tree this library was built from). Only the files a task uses are read.
//
// meta (all strings; lists are comma-separated): "seed", "sample_seed",
// "haystack_units" (the size found: words, lines, distinct words, words,
// documents), "input_tokens", "slack_tokens" (length - input_tokens -
// max_new_tokens), "fit_tokens_per_unit" (the search's tokens per unit),
// "fit_stop" (room_below_one_unit: less than fit_tokens_per_unit to spare;
// next_unit_overflows: one unit more was counted and does not fit); per
// family:
//  niah: "haystack" (noise|essay|needle), "keys", "values" (all needles'
//   values, in key order, ';' between keys), "query_keys", "needle_depths"
//   (percent; essays: RULER's sampled depth; noise/needle: line index /
//   lines), "needle_offsets" (byte offsets of each needle in `input`, same
//   order as needle_depths), "haystack_repeated" (essay only);
//  vt: "chain" (the five names, in chain order), "value", "chain_offsets",
//   "chain_depths", "icl_noise_lines";
//  cwe: "num_words", "common_repeats", "uncommon_repeats", "word_pool"
//   (singles | singles+pairs);
//  fwe: "num_words", "vocab_size", "top_counts" (counts of the 3 answers and
//   of the noise word "...");
//  qa: "dataset", "question_index", "question_round", "question_id" (when the
//   file has one), "num_docs", "gold_docs" (1-based document numbers in the
//   prompt), "pool_docs", "docs_repeated", "fill" (what filled the documents
//   beyond the gold ones), "questions_usable", "questions_skipped".
//
// Errors: InvalidArgument for an unknown task, a length below
// RulerMinLength or above kRulerMaxLength, num_samples < 1, a missing
// count_tokens, malformed data ("<path>:<line>: ..."), a word list too small,
// and a length too small for the smallest prompt of a sample (naming how many
// tokens it needs); NotFound for a missing file; FailedPrecondition when the
// data cannot fill the length (e.g. more distinct cwe words needed than the
// word list has pairs); errors of count_tokens as they come.
absl::StatusOr<std::vector<GenerationSample>> MakeRulerSamples(absl::string_view task,
                                                               int64_t length,
                                                               const GeneratorOptions& options);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_RULER_H_
