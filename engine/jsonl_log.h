// SPDX-License-Identifier: Apache-2.0
// An append-only JSON-lines file that makes long runs resumable: every
// finished result is appended and fsync'd before the run goes on, and a rerun
// reads them back. A torn last line (a crash mid-write) is cut off on open, so
// later appends start on a clean line. The log is locked (FileLock) while
// open: a second process on the same log is refused, nothing is mixed.
#ifndef FOCAL_ENGINE_JSONL_LOG_H_
#define FOCAL_ENGINE_JSONL_LOG_H_

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "base/file_util.h"
#include "base/json.h"

namespace focal::engine {

class JsonlLog {
 public:
  // Reads `path` (missing: empty), calling `on_line` for each complete line
  // that parses as JSON (others are skipped: recomputed), then opens it for
  // appending. An empty path gives a log that keeps nothing.
  static absl::StatusOr<JsonlLog> Open(const std::string& path,
                                       const std::function<void(const JsonValue&)>& on_line);
  JsonlLog(JsonlLog&& o) noexcept
      : path_(std::move(o.path_)),
        lock_(std::move(o.lock_)),
        file_(std::exchange(o.file_, nullptr)) {}
  JsonlLog& operator=(JsonlLog&& o) noexcept;
  JsonlLog(const JsonlLog&) = delete;
  JsonlLog& operator=(const JsonlLog&) = delete;
  ~JsonlLog();

  // Appends `lines` (each ending in '\n') and syncs them to disk.
  absl::Status Append(const std::string& lines);

 private:
  JsonlLog() = default;
  std::string path_;
  std::optional<FileLock> lock_;
  std::FILE* file_ = nullptr;
};

}  // namespace focal::engine

#endif  // FOCAL_ENGINE_JSONL_LOG_H_
