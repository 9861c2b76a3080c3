// SPDX-License-Identifier: Apache-2.0
// Linked into every test binary that runs stories260K: the checkpoint is not
// part of the project; the build converts it from ../shared (tests/CMakeLists).
// Without it every test of the binary fails under CI=true and skips elsewhere.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace {

class Stories260KEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::string path = focal::testing::Stories260KDir() + "/model.safetensors";
    if (std::filesystem::exists(path)) return;
    const char* how =
        "converted at build time from ../shared/models/stories260K; build with ../shared "
        "beside the source tree";
    if (focal::testing::InCi()) FAIL() << "missing under CI: " << path << " (" << how << ")";
    GTEST_SKIP() << "missing: " << path << " (" << how << ")";
  }
};

const auto* const kRegistered = ::testing::AddGlobalTestEnvironment(new Stories260KEnvironment);

}  // namespace
