// SPDX-License-Identifier: Apache-2.0
#include "base/thread_pool.h"

#include <algorithm>

#ifdef __linux__
#include <sched.h>
#endif

namespace focal {

int UsableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = UsableCores();
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

// Claims indices one at a time under the lock; tasks here are coarse (a head,
// a row block), so the lock is not a bottleneck.
void ThreadPool::RunTasks() {
  std::unique_lock<std::mutex> lock(mu_);
  while (next_ < n_) {
    int64_t i = next_++;
    const auto* fn = fn_;
    lock.unlock();
    (*fn)(i);
    lock.lock();
  }
}

void ThreadPool::WorkerLoop() {
  int64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    ++busy_;
    lock.unlock();
    RunTasks();
    lock.lock();
    if (--busy_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    ++generation_;
  }
  work_cv_.notify_all();
  RunTasks();
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return busy_ == 0 && next_ >= n_; });
  fn_ = nullptr;
}

}  // namespace focal
