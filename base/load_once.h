// SPDX-License-Identifier: Apache-2.0
#ifndef FOCAL_BASE_LOAD_ONCE_H_
#define FOCAL_BASE_LOAD_ONCE_H_

#include <map>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace focal {

// Values read once per key for the life of the process and shared read-only: large source
// files (HotpotQA dev is 46 MB) that every length and task of a run would otherwise re-read.
// A failed load is not cached, so the next caller sees the same error. Loads hold the lock:
// two tasks wanting one file wait for one read instead of making two.
template <typename Key, typename Value>
class LoadOnce {
 public:
  // `load` returns absl::StatusOr<Value>; it runs only when `key` has no value yet.
  template <typename Load>
  absl::StatusOr<std::shared_ptr<const Value>> Get(const Key& key, Load&& load) {
    absl::MutexLock lock(&mu_);
    auto it = values_.find(key);
    if (it == values_.end()) {
      absl::StatusOr<Value> loaded = std::forward<Load>(load)();
      if (!loaded.ok()) return loaded.status();
      it = values_.emplace(key, std::make_shared<const Value>(*std::move(loaded))).first;
    }
    return it->second;
  }

 private:
  absl::Mutex mu_;
  std::map<Key, std::shared_ptr<const Value>> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace focal

#endif  // FOCAL_BASE_LOAD_ONCE_H_
