// SPDX-License-Identifier: Apache-2.0
#include "datasets/reader.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "datasets/formats.h"

namespace focal::datasets {
namespace {

using ReadFn = absl::StatusOr<std::vector<Doc>> (*)(absl::string_view path,
                                                    const ReaderOptions& options);

struct ReaderInfo {
  absl::string_view id;
  ReadFn read;
  absl::string_view option;  // the one option the reader takes; empty: none
  // What the layout cannot reproduce of the reference's prompts; recorded
  // with the results. Empty: nothing.
  absl::string_view caveat = "";
};

// Every reader, by id. A plain list (no registration at static-init time)
// so the linker cannot drop a reader and the set is visible in one place.
constexpr ReaderInfo kReaders[] = {
    {"arc", &ReadArc, ""},
    {"boolq", &ReadBoolq, ""},
    {"hellaswag", &ReadHellaswag, ""},
    {"hellaswag_llamacpp", &ReadHellaswagLlamacpp, "",
     "llama.cpp's HellaSwag text layout keeps ctx_b as written, where lm-eval capitalises its "
     "first letter, so some prompts differ from lm-eval's; the original jsonl (reader "
     "'hellaswag') gives lm-eval's exact prompts"},
    {"lambada", &ReadLambada, ""},
    {"lambada_plain", &ReadLambadaPlain, ""},
    {"piqa", &ReadPiqa, "labels"},
    {"winogrande", &ReadWinogrande, ""},
};

}  // namespace

std::string ReaderCaveat(absl::string_view reader_id) {
  for (const ReaderInfo& r : kReaders) {
    if (r.id == reader_id) return std::string(r.caveat);
  }
  return "";
}

absl::StatusOr<std::vector<Doc>> ReadDocs(absl::string_view reader_id, absl::string_view path,
                                          const std::map<std::string, std::string>& options) {
  const ReaderInfo* reader = nullptr;
  for (const ReaderInfo& r : kReaders) {
    if (r.id == reader_id) reader = &r;
  }
  if (reader == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown dataset reader '", reader_id,
                                                   "'; known: ", absl::StrJoin(ReaderIds(), ", ")));
  }
  // A misspelt option would otherwise be ignored silently.
  for (const auto& [key, value] : options) {
    if (key != reader->option) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dataset reader '", reader_id, "' has no option '", key, "'",
          reader->option.empty() ? " (it takes none)"
                                 : absl::StrCat(" (it takes '", reader->option, "')")));
    }
  }
  FOCAL_ASSIGN_OR_RETURN(std::vector<Doc> docs, reader->read(path, options));
  // An empty file is almost always a wrong path or a failed download; a
  // score over zero documents would be meaningless.
  if (docs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no documents"));
  }
  return docs;
}

std::vector<std::string> ReaderIds() {
  std::vector<std::string> ids;
  for (const ReaderInfo& r : kReaders) ids.emplace_back(r.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace focal::datasets
