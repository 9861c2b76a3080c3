// SPDX-License-Identifier: Apache-2.0
// The canonical document every reader produces and every task consumes.
// Dataset quirks (ARC's answerKey, HellaSwag's cleanup, PIQA's labels file,
// LAMBADA's last-word split) live in the readers, so task specs stay plain
// "{{field}}" templates.
#ifndef FOCAL_DATASETS_DOC_H_
#define FOCAL_DATASETS_DOC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace focal::datasets {

struct Doc {
  // Stable id within the file: the record's own id when it has one (ARC "id",
  // HotpotQA "_id"), else its 0-based index as a string.
  std::string id;
  // 0-based position in the file's document order (sharding, --limit).
  int64_t index = 0;
  // String fields available to templates, e.g. ARC {"question"}, BoolQ
  // {"passage", "question"}, HellaSwag {"query"}, PIQA {"goal"},
  // LAMBADA {"text", "context", "target"}.
  std::map<std::string, std::string> fields;
  // Multiple choice: the answer options (without the leading delimiter) and
  // the gold index; empty / -1 when the reader has none (e.g. BoolQ, whose
  // choices "no"/"yes" come from the task spec; its gold is set from the label).
  std::vector<std::string> choices;
  int gold = -1;
};

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_DOC_H_
