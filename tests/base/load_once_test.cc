// SPDX-License-Identifier: Apache-2.0
#include "base/load_once.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace focal {
namespace {

TEST(LoadOnceTest, LoadsEachKeyOnceAndSharesTheValue) {
  LoadOnce<std::string, std::string> cache;
  int loads = 0;
  auto load = [&]() -> absl::StatusOr<std::string> {
    ++loads;
    return std::string("contents");
  };
  absl::StatusOr<std::shared_ptr<const std::string>> a = cache.Get("a.json", load);
  absl::StatusOr<std::shared_ptr<const std::string>> again = cache.Get("a.json", load);
  ASSERT_TRUE(a.ok() && again.ok());
  EXPECT_EQ(**a, "contents");
  EXPECT_EQ(a->get(), again->get());  // one value, not a copy
  EXPECT_EQ(loads, 1);
  ASSERT_TRUE(cache.Get("b.json", load).ok());
  EXPECT_EQ(loads, 2);
}

TEST(LoadOnceTest, AFailedLoadIsRetriedNotCached) {
  LoadOnce<std::string, int> cache;
  int calls = 0;
  auto fail_then_succeed = [&]() -> absl::StatusOr<int> {
    if (++calls == 1) return absl::NotFoundError("missing.json: no such file");
    return 7;
  };
  absl::StatusOr<std::shared_ptr<const int>> first = cache.Get("missing.json", fail_then_succeed);
  EXPECT_EQ(first.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(first.status().message(), testing::HasSubstr("missing.json"));
  absl::StatusOr<std::shared_ptr<const int>> second = cache.Get("missing.json", fail_then_succeed);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(**second, 7);
  EXPECT_EQ(calls, 2);
}

TEST(LoadOnceTest, ConcurrentCallersShareOneLoad) {
  LoadOnce<int, int> cache;
  std::atomic<int> loads{0};
  std::vector<std::thread> threads;
  std::vector<const int*> seen(8, nullptr);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<std::shared_ptr<const int>> v = cache.Get(1, [&]() -> absl::StatusOr<int> {
        loads.fetch_add(1);
        return 42;
      });
      if (v.ok()) seen[t] = v->get();  // the cache keeps the value alive
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(loads.load(), 1);
  for (const int* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(*seen[0], 42);
}

}  // namespace
}  // namespace focal
