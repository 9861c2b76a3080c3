// SPDX-License-Identifier: Apache-2.0
#include "base/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace focal {
namespace {

TEST(ThreadPoolTest, RunsEveryIndexOnceAcrossManyCalls) {
  ThreadPool pool(4);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + round % 37;
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, [&](int64_t i) { hits[i].fetch_add(1); });
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round << " i " << i;
  }
}

TEST(ThreadPoolTest, SingleThreadAndEmpty) {
  ThreadPool pool(1);
  int sum = 0;
  pool.ParallelFor(10, [&](int64_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum, 45);
  pool.ParallelFor(0, [&](int64_t) { sum = -1; });
  EXPECT_EQ(sum, 45);
}

}  // namespace
}  // namespace focal
