// SPDX-License-Identifier: Apache-2.0
// HotpotQA dev records as the long-context generators read them (hotpotqa_long,
// helmet_rag_hotpotqa): every context paragraph once, deduplicated by
// (title, text), and the questions whose supporting paragraphs are all in
// their own context.
#ifndef FOCAL_DATASETS_HOTPOTQA_POOL_H_
#define FOCAL_DATASETS_HOTPOTQA_POOL_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace focal::datasets {

struct HotpotQaParagraph {
  std::string title;
  std::string text;        // "".join(sentences)
  int64_t unique_id = -1;  // index into the deduplicated pool
};

struct HotpotQaQuestion {
  std::string id;
  std::string type;  // "bridge" / "comparison" when the record has it
  std::string question;
  std::string answer;
  std::vector<int64_t> gold;     // paragraph indices (global), context order
  std::vector<int64_t> own;      // the record's non-gold paragraphs, context order
  std::set<std::string> titles;  // every title of the record's context
};

struct HotpotQaPool {
  std::vector<HotpotQaParagraph> paragraphs;  // every context paragraph, file order
  std::vector<int64_t> unique;                // first paragraph of each (title, text)
  std::vector<HotpotQaQuestion> questions;    // usable ones, file order
  int64_t skipped_missing_gold = 0;
};

// Reads HotpotQA dev records (jsonl, or the original release's one JSON
// array, as RULER's hotpotqa.json) {_id, question, answer, supporting_facts,
// context, [type]}. Errors name the file, line and field. A question whose
// supporting paragraphs are not all in its context cannot be answered from
// it: skipped and counted, never padded with a guess.
absl::StatusOr<HotpotQaPool> ReadHotpotQaPool(absl::string_view path);

// ReadHotpotQaPool, read once per path and process: a run builds every
// length's samples (and a probe sample first) from the same 46 MB file.
absl::StatusOr<std::shared_ptr<const HotpotQaPool>> SharedHotpotQaPool(const std::string& path);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_HOTPOTQA_POOL_H_
