// SPDX-License-Identifier: Apache-2.0
// Shared by the reader test sources (readers_test*.cc, one binary): sample
// paths, temp files and small records of each format.
#ifndef FOCAL_TESTS_DATASETS_READERS_TEST_UTIL_H_
#define FOCAL_TESTS_DATASETS_READERS_TEST_UTIL_H_

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "datasets/reader.h"
#include "datasets/reader_util.h"
#include "datasets/text_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {

// Test-only header: the reader tests use these names unqualified.
using ::focal::testing::MakeTempDir;
using ::focal::testing::SharedAvailable;
using ::focal::testing::SharedPath;
using ::focal::testing::SourcePath;
using ::focal::testing::StatusIs;
using ::focal::testing::WriteStringToFile;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

inline std::string Sample(const std::string& name) {
  return SourcePath("datasets/samples/" + name);
}

// Writes `contents` to a fresh temp file named `name` and returns its path.
inline std::string TempFile(const std::string& name, const std::string& contents) {
  std::string path = MakeTempDir("readers") + "/" + name;
  WriteStringToFile(path, contents);
  return path;
}

inline std::vector<Doc> ReadOrDie(const std::string& reader, const std::string& path,
                                  const std::map<std::string, std::string>& options = {}) {
  absl::StatusOr<std::vector<Doc>> docs = ReadDocs(reader, path, options);
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *std::move(docs) : std::vector<Doc>{};
}

inline constexpr char kArcLine[] =
    R"({"id": "q1", "question": {"stem": "Pick one.", "choices": [{"text": "x", "label": "A"},)"
    R"( {"text": "y", "label": "B"}]}, "answerKey": "B"})";

// An AI2-layout ARC record with choices "x", "y", ... labelled by `labels`.
inline std::string ArcRecord(const std::vector<std::string>& labels,
                             const std::string& answer_key) {
  std::string choices;
  for (const std::string& label : labels) {
    if (!choices.empty()) choices += ", ";
    choices += R"({"text": "x", "label": ")" + label + R"("})";
  }
  return R"({"question": {"stem": "s", "choices": [)" + choices + R"(]}, "answerKey": ")" +
         answer_key + R"("})";
}

// An original-layout HellaSwag record; `endings` and `label` are JSON text.
inline std::string HellaswagRecord(const std::string& endings = R"(["1", "2", "3", "4"])",
                                   const std::string& label = "0") {
  return R"({"activity_label": "a", "ctx_a": "b", "ctx_b": "c", "endings": )" + endings +
         R"(, "label": )" + label + "}";
}

}  // namespace focal::datasets

#endif  // FOCAL_TESTS_DATASETS_READERS_TEST_UTIL_H_
