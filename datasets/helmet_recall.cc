// SPDX-License-Identifier: Apache-2.0
// HELMET's RULER recall tasks ("helmet_recall"; option ruler_task =
// niah_multikey_2 | niah_multikey_3 | niah_multivalue), as HELMET's
// load_ruler (princeton-nlp/HELMET @4526dfbd, data.py) prompts and scores
// RULER's samples:
//  * the samples are RULER's own for the task, length, seed and tokenizer
//    (the "ruler" generator: byte-identical on the fetched data, else the
//    labelled approximation);
//  * HELMET's prompt is its user template, "\n", its system template, with
//    RULER's context, query and needle type: the same text as RULER's input
//    except that the question and the answer prefix are joined by a newline
//    instead of a space (checked here for every sample);
//  * a prompt over (length - max_new_tokens) tokens loses the end of its
//    context at a token boundary (HELMET's truncation; it never triggers
//    when RULER built the sample with the same tokenizer, as here, because
//    RULER leaves room for 128 tokens and HELMET generates 50 or 100);
//  * scored by helmet_ruler_recall on the answer prefix plus the output
//    (score_prefix).
// What differs from HELMET: HELMET reads RULER files its authors generated
// (data.tar.gz; the tokenizer and RULER version they used are not stated)
// and draws max_test_samples of them with HF Dataset.shuffle(42); here the
// first --limit samples RULER's generator makes with the evaluated model's
// tokenizer.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "datasets/generator.h"

namespace focal::datasets {
namespace {

absl::StatusOr<std::vector<GenerationSample>> MakeRecall(const GeneratorRequest& r) {
  auto opt = [&](const char* key) -> std::string {
    auto it = r.options.find(key);
    return it == r.options.end() ? "" : it->second;
  };
  const std::string task = opt("ruler_task");
  if (task != "niah_multikey_2" && task != "niah_multikey_3" && task != "niah_multivalue") {
    return absl::InvalidArgumentError(
        absl::StrCat("task '", r.task, "': helmet_recall option ruler_task '", task,
                     "' must be niah_multikey_2, niah_multikey_3 or niah_multivalue"));
  }
  int64_t max_new = 0;
  if (!absl::SimpleAtoi(opt("max_new_tokens"), &max_new) || max_new < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("task '", r.task, "': helmet_recall needs max_new_tokens >= 1"));
  }
  const Generator* ruler = FindGenerator("ruler");
  if (ruler == nullptr) return absl::InternalError("the ruler generator is not linked in");
  GeneratorRequest rr = r;
  rr.options = {{"preset", "ruler_" + task}};
  FOCAL_ASSIGN_OR_RETURN(std::vector<GenerationSample> samples, ruler->make(rr));
  constexpr char kAnswer[] = " The special magic ";
  for (GenerationSample& s : samples) {
    // RULER's input ends "...mentioned in the provided text? The special
    // magic {type} for {query} mentioned in the provided text {is|are}".
    const size_t cut = s.input.rfind(kAnswer);
    if (cut == std::string::npos || s.input.find('?', cut) != std::string::npos) {
      return absl::InternalError(absl::StrCat(r.task, " sample ", s.index,
                                              ": RULER's answer prefix not found in the prompt"));
    }
    s.score_prefix = s.input.substr(cut + 1);
    s.input[cut] = '\n';
    s.max_new_tokens = max_new;
    s.stop.clear();
    s.meta["helmet_prompt"] = "RULER's sample in HELMET's load_ruler template";
    if (r.settings.count_tokens && r.settings.token_prefix) {
      FOCAL_ASSIGN_OR_RETURN(int64_t n, r.settings.count_tokens(s.input));
      if (n > r.length - max_new) {
        // HELMET cuts the end of the context; the question and answer
        // prefix follow the context's last newline-led "What".
        const size_t q = s.input.rfind("\nWhat ");
        if (q == std::string::npos) {
          return absl::InternalError(absl::StrCat(r.task, ": no question in sample ", s.index));
        }
        const std::string head = s.input.substr(0, q), tail = s.input.substr(q);
        FOCAL_ASSIGN_OR_RETURN(std::string kept,
                               r.settings.token_prefix(head, -(n - (r.length - max_new))));
        s.input = kept + tail;
        s.meta["truncated_tokens"] = absl::StrCat(n - (r.length - max_new));
      }
    }
  }
  return samples;
}

FOCAL_REGISTER_GENERATOR(helmet_recall, {.id = "helmet_recall", .make = MakeRecall});

}  // namespace
}  // namespace focal::datasets
