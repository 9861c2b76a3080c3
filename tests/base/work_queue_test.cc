// SPDX-License-Identifier: Apache-2.0
#include "base/work_queue.h"

#include <atomic>
#include <mutex>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace focal {
namespace {

TEST(RunOnWorkersTest, EveryItemOnceAcrossWorkers) {
  for (size_t workers : {1, 2, 3}) {
    std::mutex mu;
    std::vector<int> runs(100, 0);
    std::set<size_t> used;
    ASSERT_TRUE(RunOnWorkers(workers, runs.size(), [&](size_t w, size_t i) {
                  std::lock_guard<std::mutex> lock(mu);
                  ++runs[i];
                  used.insert(w);
                  return absl::OkStatus();
                }).ok());
    for (int r : runs) EXPECT_EQ(r, 1);
    for (size_t w : used) EXPECT_LT(w, workers);
  }
  EXPECT_TRUE(RunOnWorkers(2, 0, [](size_t, size_t) { return absl::InternalError("no"); }).ok());
}

TEST(RunOnWorkersTest, FirstErrorStopsHandingOutItems) {
  std::atomic<int> ran{0};
  absl::Status s = RunOnWorkers(1, 10, [&](size_t, size_t i) {
    ++ran;
    return i == 3 ? absl::DataLossError("item 3") : absl::OkStatus();
  });
  EXPECT_EQ(s, absl::DataLossError("item 3"));
  EXPECT_EQ(ran.load(), 4);  // items 0-3; none after the error
  // With several workers the error is still the one returned.
  s = RunOnWorkers(3, 50, [&](size_t, size_t i) {
    return i == 7 ? absl::DataLossError("item 7") : absl::OkStatus();
  });
  EXPECT_EQ(s, absl::DataLossError("item 7"));
}

}  // namespace
}  // namespace focal
