// SPDX-License-Identifier: Apache-2.0
// Test helpers: Status matchers (gtest 1.12 and Abseil 20220623 ship none),
// paths to test data, temp dirs, golden text files and the golden
// log-probability reader.
#ifndef FOCAL_TESTS_TESTING_TEST_UTIL_H_
#define FOCAL_TESTS_TESTING_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace focal::testing {

#define FOCAL_ASSERT_OK(expr)                          \
  do {                                                 \
    const ::absl::Status focal_s_ = (expr);            \
    ASSERT_TRUE(focal_s_.ok()) << focal_s_.ToString(); \
  } while (0)
#define FOCAL_EXPECT_OK(expr)                          \
  do {                                                 \
    const ::absl::Status focal_s_ = (expr);            \
    EXPECT_TRUE(focal_s_.ok()) << focal_s_.ToString(); \
  } while (0)
#define FOCAL_ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  FOCAL_ASSERT_OK_AND_ASSIGN_IMPL_(FOCAL_TEST_CONCAT_(focal_so_, __LINE__), lhs, rexpr)
#define FOCAL_TEST_CONCAT_INNER_(a, b) a##b
#define FOCAL_TEST_CONCAT_(a, b) FOCAL_TEST_CONCAT_INNER_(a, b)
#define FOCAL_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                     \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();       \
  lhs = std::move(tmp).value()

// Matches an absl::Status (or the status of a StatusOr) with `code` and a
// message matching `msg`.
MATCHER_P2(StatusIs, code, msg, "") {
  const absl::Status& s = [&]() -> const absl::Status& {
    if constexpr (std::is_same_v<std::decay_t<arg_type>, absl::Status>) {
      return arg;
    } else {
      return arg.status();
    }
  }();
  *result_listener << "status is " << s.ToString();
  return s.code() == code && ::testing::Matches(msg)(std::string(s.message()));
}

std::string SourcePath(const std::string& rel);  // under the source tree
std::string SharedPath(const std::string& rel);  // under ../shared (may not exist)
// Where scripts/fetch_default_model.sh puts the default model's GGUF
// ($FOCAL_DEFAULT_MODEL overrides; may not exist).
std::string DefaultModelGguf();
bool SharedAvailable();
// The stories260K checkpoint the tests use: HF format, converted by the build
// from ../shared/models/stories260K (tests/CMakeLists.txt). Binaries that use
// it link testing/stories260k_env.cc.
std::string Stories260KDir();
// Whether the CI environment variable is "true": there a missing input file
// is a failure, elsewhere the test skips and says why.
bool InCi();

// Ends the current test unless `path` exists: a failure under CI=true, a skip
// elsewhere. `how` says where the file comes from. Use in a TEST body or SetUp.
#define FOCAL_REQUIRE_FILE(path, how)                                             \
  do {                                                                            \
    const std::string focal_rf_path_ = (path);                                    \
    if (!std::filesystem::exists(focal_rf_path_)) {                               \
      if (::focal::testing::InCi()) {                                             \
        FAIL() << "missing under CI: " << focal_rf_path_ << " (" << (how) << ")"; \
      }                                                                           \
      GTEST_SKIP() << "missing: " << focal_rf_path_ << " (" << (how) << ")";      \
    }                                                                             \
  } while (0)
// A fresh empty directory under the system temp dir, removed at exit.
std::string MakeTempDir(const std::string& tag);
// Copies the files of directory `from` into new temp dir and returns it.
std::string CopyDirToTemp(const std::string& from, const std::string& tag);
void WriteStringToFile(const std::string& path, const std::string& contents);
std::string ReadFileOrDie(const std::string& path);
// The JSON value of each non-empty line of `path` (a JSON-lines golden or
// output); a line that does not parse fails the test, naming path:line.
std::vector<JsonValue> ReadJsonLines(const std::string& path);
// The integers of JSON array `array` (token ids in goldens).
std::vector<int32_t> JsonInts(const JsonValue& array);

// task -> doc index -> loglikelihoods, from a `--samples` file.
using SampleLls = std::map<std::string, std::map<int64_t, std::vector<double>>>;
SampleLls SampleLoglikelihoods(const std::string& path);
// The tokenizer parity corpus: tests/testdata/tokenizer/corpus.jsonl (the
// written hard strings), then random_corpus.jsonl (seeded fragments).
std::vector<std::string> TokenizerCorpus();

// The path of golden file `rel` under tests/testdata/golden/ in the source
// tree.
std::string GoldenPath(const std::string& rel);

// Whether `actual` equals golden file `golden_relpath` (under
// tests/testdata/golden/) byte for byte; on a mismatch the message names the
// file and the first differing line (number, expected and actual). With
// FOCAL_UPDATE_GOLDENS=1 in the environment it rewrites the golden with
// `actual` instead and succeeds (review the diff before committing). Use as
//   EXPECT_TRUE(MatchesGolden(html, "reports/comparison.html"));
::testing::AssertionResult MatchesGolden(const std::string& actual,
                                         const std::string& golden_relpath);

// Runs `binary args` through the shell with stdin closed; returns its exit
// code (-1 if it did not exit normally) and what it wrote.
struct CommandResult {
  int code = -1;
  std::string out, err;
};
CommandResult RunCommand(const std::string& binary, const std::string& args);
// RunCommand with FOCAL_DEFAULT_MODEL set to Stories260KDir(): the CLI tests
// run on the tiny model (the real default, SmolLM2-135M, is too slow for them;
// CliTest.DefaultModelIsSmolLm2 covers it).
CommandResult RunOnStories260K(const std::string& binary, const std::string& args);

// One sequence of a golden file written by tests/reference/make_reference.py.
struct GoldenSequence {
  std::vector<int32_t> tokens;
  std::vector<double> logprob;  // logprob[i-1] = log P(tokens[i] | tokens[<i])
  std::vector<int32_t> argmax;  // argmax of the distribution before tokens[i]
  int32_t final_argmax = -1;    // argmax after the last token
};
std::vector<GoldenSequence> ReadGoldenLogprobs(const std::string& path);

}  // namespace focal::testing

#endif  // FOCAL_TESTS_TESTING_TEST_UTIL_H_
