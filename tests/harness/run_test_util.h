// SPDX-License-Identifier: Apache-2.0
// Shared by the `focal-eval run` end-to-end sources (run_test*.cc, one
// binary): the CLI on stories260K, shards, and readers of results and samples.
#ifndef FOCAL_TESTS_HARNESS_RUN_TEST_UTIL_H_
#define FOCAL_TESTS_HARNESS_RUN_TEST_UTIL_H_

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reports/merge.h"
#include "reports/results_writer.h"
#include "tests/testing/test_util.h"

namespace focal {

// Test-only header: the run tests use these names unqualified.
using ::testing::HasSubstr;
using ::testing::Not;

using Result = testing::CommandResult;

inline Result RunCli(const std::string& args) {
  return testing::RunOnStories260K(FOCAL_EVAL_BIN, args);
}

// Runs `common` as shards 0..n-1 of n into dir/s<i>.json; "" when every
// shard succeeds, else the failing shard's stderr.
inline std::string RunShards(const std::string& common, const std::string& dir, int n) {
  for (int i = 0; i < n; ++i) {
    Result r =
        RunCli(absl::StrCat(common, "--shard ", i, "/", n, " --out ", dir, "/s", i, ".json"));
    if (r.code != 0) return absl::StrCat("shard ", i, "/", n, ": ", r.err);
  }
  return "";
}

inline reports::RunResults Load(const std::string& path) {
  auto r = reports::ResultsFromJson(testing::ReadFileOrDie(path), path);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : reports::RunResults();
}

}  // namespace focal

#endif  // FOCAL_TESTS_HARNESS_RUN_TEST_UTIL_H_
