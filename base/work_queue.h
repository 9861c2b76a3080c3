// SPDX-License-Identifier: Apache-2.0
// Items handed out to a few long-lived workers (one per model replica), each
// taking the next item when it is free.
#ifndef FOCAL_BASE_WORK_QUEUE_H_
#define FOCAL_BASE_WORK_QUEUE_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"

namespace focal {

// Runs run(worker, item) for items 0..n-1 on `workers` threads (the
// caller's is worker 0). Items start in order; which worker runs one
// depends on timing. The first error stops the handing out of items (those
// running finish) and is returned. `run` does its own locking.
absl::Status RunOnWorkers(size_t workers, size_t n,
                          const std::function<absl::Status(size_t worker, size_t item)>& run);

}  // namespace focal

#endif  // FOCAL_BASE_WORK_QUEUE_H_
