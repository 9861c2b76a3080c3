// SPDX-License-Identifier: Apache-2.0
#include "base/work_queue.h"

#include <mutex>
#include <thread>
#include <vector>

namespace focal {

absl::Status RunOnWorkers(size_t workers, size_t n,
                          const std::function<absl::Status(size_t worker, size_t item)>& run) {
  std::mutex mu;
  size_t next = 0;
  absl::Status first_error;
  auto work = [&](size_t w) {
    for (;;) {
      size_t item;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok() || next >= n) return;
        item = next++;
      }
      absl::Status s = run(w, item);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = std::move(s);
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  return first_error;
}

}  // namespace focal
