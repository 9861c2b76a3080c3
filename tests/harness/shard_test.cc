// SPDX-License-Identifier: Apache-2.0
// --shard: I/N given, or taken from a Slurm job array or a Kubernetes
// Indexed Job's environment, each wrong setting a named error.
#include <map>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/runner.h"
#include "tests/testing/test_util.h"

namespace focal::harness {
namespace {

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

struct Shard {
  int index = -1;
  int count = -1;
  std::string source;
};

absl::StatusOr<Shard> Parse(const std::string& text, std::map<std::string, std::string> env) {
  Shard s;
  const EnvLookup lookup = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  if (absl::Status st = ParseShard(text, &s.index, &s.count, lookup, &s.source); !st.ok()) {
    return st;
  }
  return s;
}

TEST(ShardTest, GivenIndexAndCount) {
  auto s = Parse("2/4", {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "9"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  EXPECT_EQ(s->source, "");  // an explicit I/N ignores the environment
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "auto/0", "auto/x", "autox"}) {
    EXPECT_THAT(Parse(bad, {}), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr(std::string("--shard '") + bad)))
        << bad;
  }
}

TEST(ShardTest, SlurmArrayFromZeroOrOne) {
  auto s = Parse("auto", {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 4);
  EXPECT_EQ(s->source, "SLURM_ARRAY_TASK_ID=3 of 4");
  // --array=1-4: task 1 is shard 0.
  s = Parse("auto", {{"SLURM_ARRAY_TASK_ID", "1"},
                     {"SLURM_ARRAY_TASK_COUNT", "4"},
                     {"SLURM_ARRAY_TASK_MIN", "1"},
                     {"SLURM_ARRAY_TASK_MAX", "4"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 0);
  EXPECT_EQ(s->count, 4);
}

// auto/N: the task id is the shard, so task 2 resubmitted alone
// (--array=2: count 1, min 2) is still shard 2 of 4.
TEST(ShardTest, SlurmTaskResubmittedAloneKeepsItsShard) {
  auto s = Parse("auto/4", {{"SLURM_ARRAY_TASK_ID", "2"},
                            {"SLURM_ARRAY_TASK_COUNT", "1"},
                            {"SLURM_ARRAY_TASK_MIN", "2"},
                            {"SLURM_ARRAY_TASK_MAX", "2"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  EXPECT_EQ(s->source, "SLURM_ARRAY_TASK_ID=2 of 4 shards");
  // A 1-based array (--array=1-4) with auto/4: task 4 is no shard.
  EXPECT_THAT(Parse("auto/4", {{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside 0..3")));
}

TEST(ShardTest, SlurmArrayErrors) {
  EXPECT_THAT(
      Parse("auto", {{"SLURM_ARRAY_TASK_ID", "0"}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("SLURM_ARRAY_TASK_COUNT is not")));
  EXPECT_THAT(Parse("auto", {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SLURM_ARRAY_TASK_ID='x' is not a non-negative integer")));
  // --array=0-6:2 has 4 tasks with ids 0, 2, 4, 6: not shards.
  EXPECT_THAT(Parse("auto", {{"SLURM_ARRAY_TASK_ID", "2"},
                             {"SLURM_ARRAY_TASK_COUNT", "4"},
                             {"SLURM_ARRAY_TASK_MIN", "0"},
                             {"SLURM_ARRAY_TASK_MAX", "6"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("consecutive task ids")));
  EXPECT_THAT(Parse("auto", {{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside 0..3")));
}

TEST(ShardTest, KubernetesIndexedJob) {
  auto s = Parse("auto/5", {{"JOB_COMPLETION_INDEX", "4"}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->index, 4);
  EXPECT_EQ(s->count, 5);
  EXPECT_EQ(s->source, "JOB_COMPLETION_INDEX=4 of 5");
  EXPECT_THAT(Parse("auto", {{"JOB_COMPLETION_INDEX", "1"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--shard auto/N")));
  EXPECT_THAT(Parse("auto/5", {{"JOB_COMPLETION_INDEX", "5"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside 0..4")));
}

TEST(ShardTest, NeitherSchedulerIsAnError) {
  EXPECT_THAT(Parse("auto", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
                                 "JOB_COMPLETION_INDEX")));
}

}  // namespace
}  // namespace focal::harness
