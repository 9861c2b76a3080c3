// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::focal::testing::StatusIs;
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

}  // namespace
}  // namespace focal
