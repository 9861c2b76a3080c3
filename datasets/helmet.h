// SPDX-License-Identifier: Apache-2.0
// HELMET's long-context categories whose data exist in the ../shared layout
// (Yen et al., ICLR 2025; princeton-nlp/HELMET @4526dfbd), built the way
// HELMET's data.py builds them; differences are listed in
// docs/long-context.md.
//
// Many-shot ICL ("helmet_icl", option dataset = trec_coarse | trec_fine |
// banking77 | clinc150 | nlu), per HELMET's load_icl:
//  * labels are the Hugging Face ClassLabel ids of the dataset HELMET loads
//    (TREC v2 coarse/fine, BANKING77, CLINC150 "plus" with oos = 42; NLU: the
//    68-intent list, here over our one-fold subset);
//  * the test split, when longer than 500, is shuffled as HF's
//    Dataset.shuffle(seed) (NumPy's permutation) and balanced to 500 with
//    BalanceLabels(seed); TREC's 500 stay in file order;
//  * per test item, seed = (int(sha256(text)) + run seed) mod 2^31; the
//    demonstrations are BalanceLabels(train, shots, seed) and the labels are
//    the integers of random.seed(seed); random.shuffle(range(num_labels));
//  * prompt: instruction, demonstrations "{text}\nlabel: {label}" joined by
//    blank lines, the test text, "\nlabel:"; shots per length from HELMET's
//    configs; a prompt over (length - 20) tokens loses the end of its
//    demonstrations, at a token boundary (HELMET's truncation);
//  * 20 new tokens; scored by helmet_icl_exact_match (tasks/helmet_metrics.h).
//  * generator option natural_label=true: HELMET's natural_label variant
//    (label names instead of the permuted integers; no bundled spec uses it,
//    as none of HELMET's configs does).
#ifndef FOCAL_DATASETS_HELMET_H_
#define FOCAL_DATASETS_HELMET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace focal::datasets {

struct IclItem {
  int64_t source_index = 0;  // position in its split as read
  std::string text;
  int32_t label = 0;  // the HF ClassLabel id
};

struct IclDataset {
  std::string name;                 // "trec_coarse", ...
  std::vector<std::string> labels;  // id -> name, HF order
  std::vector<IclItem> train;       // the demonstration pool
  std::vector<IclItem> test;        // as read, before selection
};

// The datasets and the files each reads (roles for GeneratorRequest::files,
// paths relative to the data dir).
std::vector<std::string> HelmetIclDatasets();
absl::StatusOr<std::map<std::string, std::string>> HelmetIclFiles(absl::string_view dataset);

// Reads a dataset from its files (role -> path). Errors name the file and
// line; a label outside the HF list is an error.
absl::StatusOr<IclDataset> LoadIclDataset(absl::string_view dataset,
                                          const std::map<std::string, std::string>& files);

// HELMET's balance_labels(items, shots, seed): label groups in order of first
// appearance; per group random.sample(range(n), rounds % n), then batches of
// min(remaining, n) until `rounds` indices; each round shuffled.
std::vector<IclItem> BalanceLabels(absl::Span<const IclItem> items, int64_t shots, uint64_t seed);
// The evaluated test items, in evaluation order (at most `max_items`).
std::vector<IclItem> SelectIclTest(absl::Span<const IclItem> test, uint64_t seed,
                                   int64_t max_items = 500);
// (int(sha256(text).hexdigest(), 16) + seed) % 2**31.
uint32_t HelmetItemSeed(absl::string_view text, uint64_t seed);
// random.seed(seed); random.shuffle(list(range(n))).
std::vector<int32_t> HelmetLabelPermutation(uint32_t seed, int32_t n);
// HELMET's shot count for a length (its configs list 4K..128K); other lengths
// take the next listed length's count, and past 128K the 128K count.
int64_t HelmetIclShots(absl::string_view dataset, int64_t length);

struct IclPrompt {
  std::string instruction;  // everything before the demonstrations
  std::string context;      // the demonstrations, joined
  std::string question;     // "\n\n" + test text + "\nlabel:"
  std::string gold;         // the test item's permuted label
  uint32_t item_seed = 0;
  std::vector<int64_t> demo_sources;  // train source indices, prompt order
  std::string Prompt() const { return instruction + context + question; }
};
// natural_label: HELMET's "natural_label" variant, labels written as their
// names (id2label) instead of the permuted integers; the demonstrations are
// the same.
IclPrompt BuildIclPrompt(const IclDataset& data, const IclItem& test_item, int64_t shots,
                         uint64_t seed, bool natural_label = false);

inline constexpr int64_t kHelmetIclMaxNewTokens = 20;

// HELMET's fit of a prompt instruction + context + question into `budget`
// tokens (the length minus the tokens to generate; BOS counted): when too
// long by t tokens, the context loses its last t tokens (its own
// tokenization, cut at a token boundary), once; we repeat the cut while the
// re-tokenized prompt is still too long (HELMET does not check again). Sets
// meta prompt_tokens, truncated_tokens, truncation_rounds.
struct GeneratorOptions;
absl::StatusOr<std::string> FitHelmetPrompt(const std::string& instruction, std::string context,
                                            const std::string& question, int64_t budget,
                                            const GeneratorOptions& settings,
                                            std::map<std::string, std::string>& meta);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_HELMET_H_
