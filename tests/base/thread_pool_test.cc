// SPDX-License-Identifier: Apache-2.0
#include "base/thread_pool.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <atomic>
#include <thread>
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

TEST(UsableCoresTest, AtLeastOneAndNoMoreThanTheMachine) {
  EXPECT_GE(UsableCores(), 1);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(UsableCores(), static_cast<int>(std::thread::hardware_concurrency()));
  }
}

#ifdef __linux__
// Under taskset or a Slurm allocation the process may run on fewer cores than
// the machine has; "all cores" (--threads 0) must mean those, not the machine's.
TEST(UsableCoresTest, FollowsTheAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int cores = UsableCores();
  ThreadPool pool(0);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(cores, 1);
  EXPECT_EQ(pool.num_threads(), 1);
  EXPECT_EQ(UsableCores(), CPU_COUNT(&saved));
}
#endif

}  // namespace
}  // namespace focal
