// SPDX-License-Identifier: Apache-2.0
// A persistent pool for the CPU kernels' parallel loops. Work is split into
// fixed index ranges, so results never depend on which thread ran what.
#ifndef FOCAL_BASE_THREAD_POOL_H_
#define FOCAL_BASE_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace focal {

// The cores this process may run on: its CPU affinity mask where the system
// has one (taskset, Slurm's --cpus-per-task and container cpusets set it,
// while hardware_concurrency() counts the whole machine), at least 1.
int UsableCores();

class ThreadPool {
 public:
  // `num_threads` <= 0 means UsableCores().
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, n), spread over the pool and the calling
  // thread; returns when all calls are done. Not reentrant.
  void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  void WorkerLoop();
  void RunTasks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t next_ = 0;
  int64_t generation_ = 0;
  int busy_ = 0;
  bool stop_ = false;
};

}  // namespace focal

#endif  // FOCAL_BASE_THREAD_POOL_H_
