// SPDX-License-Identifier: Apache-2.0
#include "engine/jsonl_log.h"

#include <string>
#include <vector>

#include "engine/generation_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::engine {
namespace {

std::vector<std::string> Keys(const std::string& path) {
  std::vector<std::string> keys;
  auto log = JsonlLog::Open(path, [&](const JsonValue& v) {
    if (const JsonValue* k = v.Find("k"); k != nullptr && k->is_string()) {
      keys.push_back(k->string_value());
    }
  });
  EXPECT_TRUE(log.ok()) << log.status();
  return keys;
}

TEST(JsonlLogTest, AppendsReadsBackAndCutsATornLine) {
  const std::string path = testing::MakeTempDir("jsonl") + "/log.jsonl";
  {
    auto log = JsonlLog::Open(path, [](const JsonValue&) {});
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE(log->Append("{\"k\":\"a\"}\n{\"k\":\"b\"}\n").ok());
  }
  EXPECT_THAT(Keys(path), ::testing::ElementsAre("a", "b"));
  // A crash mid-write leaves a torn line; opening cuts it and appends start clean.
  testing::WriteStringToFile(path, testing::ReadFileOrDie(path) + "not json\n{\"k\":\"c");
  {
    std::vector<std::string> keys;
    auto log = JsonlLog::Open(
        path, [&](const JsonValue& v) { keys.push_back(v.Find("k")->string_value()); });
    ASSERT_TRUE(log.ok());
    EXPECT_THAT(keys, ::testing::ElementsAre("a", "b"));  // the bad line is skipped
    ASSERT_TRUE(log->Append("{\"k\":\"d\"}\n").ok());
  }
  EXPECT_THAT(Keys(path), ::testing::ElementsAre("a", "b", "d"));
  EXPECT_EQ(testing::ReadFileOrDie(path),
            "{\"k\":\"a\"}\n{\"k\":\"b\"}\nnot json\n{\"k\":\"d\"}\n");
}

TEST(JsonlLogTest, EmptyPathKeepsNothingAndBadPathIsAnError) {
  auto mem = JsonlLog::Open("", [](const JsonValue&) {});
  ASSERT_TRUE(mem.ok());
  EXPECT_TRUE(mem->Append("{}\n").ok());
  // The lock file cannot be created where the log cannot: the error names the path.
  auto bad = JsonlLog::Open("/nonexistent-dir/x.jsonl", [](const JsonValue&) {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("/nonexistent-dir/x.jsonl"));
}

// Two writers on one resume log would interleave lines: the second is refused.
TEST(JsonlLogTest, ASecondWriterIsRefused) {
  const std::string path = testing::MakeTempDir("jsonl") + "/log.jsonl";
  auto first = JsonlLog::Open(path, [](const JsonValue&) {});
  ASSERT_TRUE(first.ok());
  auto second = JsonlLog::Open(path, [](const JsonValue&) {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()), ::testing::HasSubstr(path));
  ASSERT_TRUE(first->Append("{\"k\":\"a\"}\n").ok());
}

// A generation cut by the model's positions depends on
// --allow-length-extrapolation, which its key does not hold: this run keeps
// it, the log does not, so a resumed run generates it again.
TEST(GenerationCacheTest, ResumesFinishedGenerationsButNotPositionCutOnes) {
  const std::string path = testing::MakeTempDir("generation_cache") + "/gen.jsonl";
  {
    GenerationCache cache;
    ASSERT_TRUE(cache.Open(path).ok());
    ASSERT_TRUE(cache.Add("a", {" done", "length"}).ok());
    ASSERT_TRUE(cache.Add("b", {" cut", "context"}).ok());
    ASSERT_NE(cache.Find("b"), nullptr);
    EXPECT_EQ(cache.Find("b")->text, " cut");
  }
  GenerationCache resumed;
  ASSERT_TRUE(resumed.Open(path).ok());
  ASSERT_NE(resumed.Find("a"), nullptr);
  EXPECT_EQ(resumed.Find("a")->text, " done");
  EXPECT_EQ(resumed.Find("a")->finish, "length");
  EXPECT_EQ(resumed.Find("b"), nullptr);
}

}  // namespace
}  // namespace focal::engine
