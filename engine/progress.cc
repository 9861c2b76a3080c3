// SPDX-License-Identifier: Apache-2.0
#include "engine/progress.h"

#include "absl/strings/str_format.h"

namespace focal::engine {

ProgressLine::ProgressLine(bool enabled, bool terminal, double interval_seconds, std::ostream& out)
    : enabled_(enabled), terminal_(terminal), interval_(interval_seconds), out_(out) {}

void ProgressLine::Update(const std::string& label, const char* unit, int64_t done, int64_t total,
                          const std::string& rate) {
  if (!enabled_) return;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const bool finished = done >= total;
  if (!terminal_ && !finished && last_print_ >= 0 && secs - last_print_ < interval_) return;
  last_print_ = secs;
  const double eta = done > 0 ? secs * static_cast<double>(total - done) / done : 0;
  const std::string line = absl::StrFormat(
      "%s: %d/%d %s (%.1f%%), %s%selapsed %.0fs, ETA %.0fs", label, done, total, unit,
      total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0, rate,
      rate.empty() ? "" : ", ", secs, eta);
  if (terminal_) {
    out_ << "\r" << line << "   " << (finished ? "\n" : "") << std::flush;
  } else {
    out_ << line << "\n" << std::flush;
  }
}

}  // namespace focal::engine
