// SPDX-License-Identifier: Apache-2.0
// LAMBADA's original release: one passage per line, kept byte for byte but
// for the line terminator (no strip: the split is on single spaces, so any
// other whitespace is part of the words).
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "datasets/formats.h"

namespace focal::datasets {

absl::StatusOr<std::vector<Doc>> ReadLambadaPlain(absl::string_view path,
                                                  const ReaderOptions& /*options*/) {
  std::string contents;
  FOCAL_ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, &contents));
  std::vector<Doc> docs;
  docs.reserve(lines.size());
  for (const Line& line : lines) {
    docs.push_back(MakeLambadaDoc(std::string(line.text), static_cast<int64_t>(docs.size())));
  }
  return docs;
}

}  // namespace focal::datasets
