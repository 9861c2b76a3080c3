// SPDX-License-Identifier: Apache-2.0
// File helpers: whole-file reads, read-only memory maps, atomic writes.
#ifndef FOCAL_BASE_FILE_UTIL_H_
#define FOCAL_BASE_FILE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace focal {

// Reads a whole file. NotFound if it does not exist; errors name the path.
absl::StatusOr<std::string> ReadFile(absl::string_view path);

// Writes `contents` to `path` atomically: a temp file in the same directory,
// fsync, then rename, so readers never see a partial file.
absl::Status WriteFileAtomic(absl::string_view path, absl::string_view contents);

// A file written piece by piece that appears under its final name only when
// complete: pieces go to "<path>.tmp.<host>.<pid>", Commit() syncs and renames
// it, and a writer dropped uncommitted removes the temp file. Open() removes
// the temp files of `path` left on this host by processes that died (a killed
// run). Long runs stream per-sample output this way instead of holding it in
// memory.
class AtomicFileWriter {
 public:
  static absl::StatusOr<AtomicFileWriter> Open(absl::string_view path);
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  absl::Status Append(absl::string_view data);
  absl::Status Commit();

 private:
  AtomicFileWriter() = default;
  std::string path_, tmp_;
  int fd_ = -1;
};

// An exclusive advisory lock (flock) on "<path>.lock", held until the object
// goes away, so that two processes never write the same output or cache: the
// second gets FailedPrecondition naming the path and the holder's pid. The
// lock file stays behind (harmless: the lock dies with its process).
class FileLock {
 public:
  static absl::StatusOr<FileLock> Acquire(absl::string_view path);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  FileLock() = default;
  int fd_ = -1;
};

// A read-only memory map of a whole file. Move-only; unmaps on destruction.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(absl::string_view path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace focal

#endif  // FOCAL_BASE_FILE_UTIL_H_
