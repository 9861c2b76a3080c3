// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(FileUtilTest, AtomicWriteThenReadAndMap) {
  std::string dir = testing::MakeTempDir("fu");
  std::string path = dir + "/x.bin";
  FOCAL_ASSERT_OK(WriteFileAtomic(path, "hello"));
  FOCAL_ASSERT_OK(WriteFileAtomic(path, "world!"));  // replaces
  auto s = ReadFile(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "world!");
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data()), m->size()), "world!");
  // No temp files left behind.
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  EXPECT_EQ(n, 1);
}

TEST(FileUtilTest, MissingFilesAreNotFoundWithPath) {
  EXPECT_THAT(ReadFile("/nonexistent/file"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/file")));
  EXPECT_THAT(MappedFile::Open("/nonexistent/file"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/file")));
  EXPECT_THAT(WriteFileAtomic("/nonexistent/dir/f", "x"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/dir/f")));
}

TEST(FileUtilTest, DirectoryIsNotAFile) {
  EXPECT_THAT(MappedFile::Open("/tmp"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is a directory")));
}

TEST(FileUtilTest, EmptyFileMaps) {
  std::string path = testing::MakeTempDir("fu") + "/empty";
  FOCAL_ASSERT_OK(WriteFileAtomic(path, ""));
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 0u);
}

// Streamed output appears under its final name only when complete, and a
// writer dropped before Commit (a failed run) leaves nothing behind.
TEST(FileUtilTest, AtomicFileWriterStreamsThenRenames) {
  const std::string dir = testing::MakeTempDir("fu");
  const std::string path = dir + "/s.jsonl";
  auto count = [&] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
  };
  {
    auto w = AtomicFileWriter::Open(path);
    FOCAL_ASSERT_OK(w.status());
    FOCAL_ASSERT_OK(w->Append("a\n"));
    FOCAL_ASSERT_OK(w->Append("b\n"));
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_EQ(count(), 1);  // the temp file
    FOCAL_ASSERT_OK(w->Commit());
    EXPECT_THAT(w->Append("c\n"), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(path)));
  }
  EXPECT_EQ(testing::ReadFileOrDie(path), "a\nb\n");
  {
    auto w = AtomicFileWriter::Open(path);
    FOCAL_ASSERT_OK(w.status());
    FOCAL_ASSERT_OK(w->Append("partial"));
  }  // dropped: the old file stays, the temp file goes
  EXPECT_EQ(testing::ReadFileOrDie(path), "a\nb\n");
  EXPECT_EQ(count(), 1);
  EXPECT_THAT(AtomicFileWriter::Open("/nonexistent/dir/f"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/dir/f")));
}

// A killed run leaves "<path>.tmp.<host>.<pid>"; the next writer of that path
// removes it when the process is gone, and leaves alone what a live process or
// another host may still be writing.
TEST(FileUtilTest, AtomicFileWriterRemovesTempsOfDeadProcesses) {
  const std::string dir = testing::MakeTempDir("fu");
  const std::string path = dir + "/samples.jsonl";
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // reaped: its pid names no process
  const std::string dead = absl::StrCat(path, ".tmp.", host, ".", child);
  const std::string live = absl::StrCat(path, ".tmp.", host, ".", ::getppid());
  const std::string other_host = absl::StrCat(path, ".tmp.", host, "-other.", child);
  const std::string other_file = absl::StrCat(dir, "/results.json.tmp.", host, ".", child);
  for (const std::string& f : {dead, live, other_host, other_file}) {
    FOCAL_ASSERT_OK(WriteFileAtomic(f, "left by a killed run"));
  }
  auto w = AtomicFileWriter::Open(path);
  FOCAL_ASSERT_OK(w.status());
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(absl::StrCat(path, ".tmp.", host, ".", ::getpid())));
  for (const std::string& f : {live, other_host, other_file}) {
    EXPECT_TRUE(std::filesystem::exists(f)) << f;
  }
  FOCAL_ASSERT_OK(w->Commit());
}

// flock locks belong to an open file description, so a second Acquire in
// this process stands for a second process.
TEST(FileUtilTest, FileLockRefusesASecondWriterUntilReleased) {
  const std::string path = testing::MakeTempDir("fu") + "/results.json";
  {
    auto first = FileLock::Acquire(path);
    FOCAL_ASSERT_OK(first.status());
    EXPECT_THAT(FileLock::Acquire(path),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         AllOf(HasSubstr(path), HasSubstr("in use by another focal-eval process"),
                               HasSubstr(absl::StrCat("pid ", ::getpid())))));
  }
  FOCAL_EXPECT_OK(FileLock::Acquire(path).status());  // released with the first
  EXPECT_THAT(FileLock::Acquire("/nonexistent/dir/f"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/dir/f.lock")));
}

}  // namespace
}  // namespace focal
