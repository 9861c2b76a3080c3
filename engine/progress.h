// SPDX-License-Identifier: Apache-2.0
// Progress on stderr for long runs: on a terminal one line rewritten in
// place; elsewhere (batch jobs, logs) a full line every `interval_seconds`
// (0: every update) and one at the end, each with done/total, rate and ETA.
#ifndef FOCAL_ENGINE_PROGRESS_H_
#define FOCAL_ENGINE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace focal::engine {

class ProgressLine {
 public:
  // `terminal`: rewrite one line in place (stderr is a TTY).
  ProgressLine(bool enabled, bool terminal, double interval_seconds, std::ostream& out);
  // `unit`: "requests", "samples"; `rate`: e.g. "1234 tok/s" (may be empty).
  void Update(const std::string& label, const char* unit, int64_t done, int64_t total,
              const std::string& rate);

 private:
  bool enabled_, terminal_;
  double interval_;
  std::ostream& out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_print_ = -1;
};

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_PROGRESS_H_
