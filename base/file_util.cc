// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace focal {
namespace {

absl::Status ErrnoError(int err, absl::string_view what, absl::string_view path) {
  std::string msg = absl::StrCat(what, " '", path, "': ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::UnavailableError(msg);
}

}  // namespace

absl::StatusOr<std::string> ReadFile(absl::string_view path) {
  std::string p(path);
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return ErrnoError(errno, "cannot read", path);
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not a file"));
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) return ErrnoError(errno, "cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading '", path, "'"));
  return ss.str();
}

namespace {

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

// A run killed before Commit (SIGKILL, Ctrl-C, a preempted job) leaves its
// temp file behind. Remove those of `path` written on this host by processes
// that no longer exist; a temp file from another host (a shared file system)
// or from a live process is left alone. Best effort: errors are ignored.
void RemoveStaleTemps(const std::string& path, const std::string& host) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = absl::StrCat(p.filename().string(), ".tmp.", host, ".");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    int pid = 0;
    if (!absl::SimpleAtoi(absl::string_view(name).substr(prefix.size()), &pid)) continue;
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

}  // namespace

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::Open(absl::string_view path) {
  AtomicFileWriter w;
  w.path_ = std::string(path);
  const std::string host = HostName();
  RemoveStaleTemps(w.path_, host);
  w.tmp_ = absl::StrCat(path, ".tmp.", host, ".", ::getpid());
  w.fd_ = ::open(w.tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.fd_ < 0) return ErrnoError(errno, "cannot create", w.tmp_);
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)),
      fd_(std::exchange(other.fd_, -1)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

absl::Status AtomicFileWriter::Append(absl::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  return WriteAll(fd_, data, tmp_);
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  const int fd = std::exchange(fd_, -1);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    return ErrnoError(err, "cannot flush", tmp_);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    return ErrnoError(err, "cannot rename into", path_);
  }
  return absl::OkStatus();
}

absl::StatusOr<FileLock> FileLock::Acquire(absl::string_view path) {
  const std::string lock_path = absl::StrCat(path, ".lock");
  FileLock lock;
  lock.fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) return ErrnoError(errno, "cannot create lock file", lock_path);
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return ErrnoError(err, "cannot lock", lock_path);
    char pid[32] = {};
    const ssize_t n = ::pread(lock.fd_, pid, sizeof(pid) - 1, 0);
    std::string holder = n > 0 ? std::string(pid, n) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is in use by another focal-eval process (pid ", holder,
                     ", lock ", lock_path, "): wait for it to finish, or choose another path"));
  }
  // Who holds it, for the message above (best effort).
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(lock.fd_, 0) != 0 || ::pwrite(lock.fd_, pid.data(), pid.size(), 0) < 0) {
    // The lock itself holds; only the message would lack the pid.
  }
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

absl::Status WriteFileAtomic(absl::string_view path, absl::string_view contents) {
  FOCAL_ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::Open(path));
  FOCAL_RETURN_IF_ERROR(w.Append(contents));
  return w.Commit();
}

absl::StatusOr<MappedFile> MappedFile::Open(absl::string_view path) {
  std::string p(path);
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoError(err, "cannot stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not a file"));
  }
  MappedFile file;
  file.path_ = p;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ > 0) {
    void* addr = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return ErrnoError(err, "cannot mmap", path);
    }
    file.data_ = static_cast<const uint8_t*>(addr);
  }
  ::close(fd);  // The mapping stays valid after close.
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace focal
