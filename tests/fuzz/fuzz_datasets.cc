// SPDX-License-Identifier: Apache-2.0
// Every dataset reader (datasets/reader.h) through ReadDocs.
//
// Input: byte 0 chooses the reader, (byte 0 % 8) indexing ReaderIds()
// (sorted: arc, boolq, hellaswag, hellaswag_llamacpp, lambada,
// lambada_plain, piqa; 7 reads as 0), and the file name's compression
// suffix, (byte 0 / 8) % 4: none, none, ".gz", ".bz2". The rest is the data
// file; for piqa, a kFileSeparator followed by text makes that text the
// labels file (option "labels").
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/reader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const std::vector<std::string> ids = focal::datasets::ReaderIds();
  const std::string& id = ids[(data[0] % 8) % ids.size()];
  static const char* const kSuffix[] = {"", "", ".gz", ".bz2"};
  const std::string suffix = kSuffix[(data[0] / 8) % 4];
  const std::string ext = id == "hellaswag_llamacpp" || id == "lambada_plain" ? ".txt" : ".jsonl";
  const auto files =
      focal::fuzz::SplitFiles(focal::fuzz::AsText(data + 1, size - 1), id == "piqa" ? 2 : 1);
  const std::string name = "data" + ext + suffix;
  const std::string path = focal::fuzz::WriteScratch(name, files[0]);
  std::map<std::string, std::string> options;
  if (files.size() > 1) options["labels"] = focal::fuzz::WriteScratch("labels.lst", files[1]);
  auto docs = focal::datasets::ReadDocs(id, path, options);
  focal::fuzz::RemoveScratch(name);
  if (docs.ok()) {
    volatile size_t sink = 0;
    for (const auto& d : *docs) {
      // Readers promise gold inside the choices when there are choices.
      if (!d.choices.empty() && (d.gold < 0 || d.gold >= static_cast<int>(d.choices.size()))) {
        __builtin_trap();
      }
      sink = sink + d.fields.size() + d.id.size();
    }
    (void)sink;
  }
  return 0;
}
