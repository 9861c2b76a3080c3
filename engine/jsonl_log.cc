// SPDX-License-Identifier: Apache-2.0
#include "engine/jsonl_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace focal::engine {

absl::StatusOr<JsonlLog> JsonlLog::Open(const std::string& path,
                                        const std::function<void(const JsonValue&)>& on_line) {
  JsonlLog log;
  log.path_ = path;
  if (path.empty()) return log;
  FOCAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::Acquire(path));
  log.lock_ = std::move(lock);
  if (std::FILE* in = std::fopen(path.c_str(), "rb")) {
    std::string data;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), in)) > 0) data.append(buf, n);
    std::fclose(in);
    if (!data.empty() && data.back() != '\n') {
      const size_t nl = data.rfind('\n');
      const size_t keep = nl == std::string::npos ? 0 : nl + 1;
      data.resize(keep);
      std::error_code ec;
      std::filesystem::resize_file(path, keep, ec);
      if (ec) {
        return absl::DataLossError(
            absl::StrCat("cannot repair the torn last line of '", path, "': ", ec.message()));
      }
    }
    size_t pos = 0;
    int64_t lineno = 0;
    while (pos < data.size()) {
      const size_t end = data.find('\n', pos);
      ++lineno;
      auto v = ParseJson(absl::string_view(data).substr(pos, end - pos),
                         absl::StrCat(path, ":", lineno));
      pos = end + 1;
      if (v.ok()) on_line(*v);
    }
  }
  log.file_ = std::fopen(path.c_str(), "ab");
  if (log.file_ == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open '", path, "' for appending: ", std::strerror(errno)));
  }
  return log;
}

JsonlLog& JsonlLog::operator=(JsonlLog&& o) noexcept {
  if (this != &o) {
    if (file_ != nullptr) std::fclose(file_);
    path_ = std::move(o.path_);
    lock_ = std::move(o.lock_);
    file_ = std::exchange(o.file_, nullptr);
  }
  return *this;
}

JsonlLog::~JsonlLog() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status JsonlLog::Append(const std::string& lines) {
  if (file_ == nullptr || lines.empty()) return absl::OkStatus();
  if (std::fwrite(lines.data(), 1, lines.size(), file_) != lines.size() ||
      std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) {
    // What was appended before stays; this result is recomputed next time.
    return absl::DataLossError(
        absl::StrCat("cannot append to '", path_, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace focal::engine
