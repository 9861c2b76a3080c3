// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the libFuzzer targets: a per-process scratch directory
// (for entry points that only take a path) and splitting one input into
// several files.
#ifndef FOCAL_TESTS_FUZZ_FUZZ_UTIL_H_
#define FOCAL_TESTS_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/string_view.h"

namespace focal::fuzz {

// Separates the files of a multi-file input (a PIQA data file and its
// labels, tokenizer.json and tokenizer_config.json, several results files).
inline constexpr absl::string_view kFileSeparator = "\n%%FILE%%\n";

inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

inline std::vector<absl::string_view> SplitFiles(absl::string_view input, size_t max_files) {
  std::vector<absl::string_view> out;
  while (out.size() + 1 < max_files) {
    const size_t at = input.find(kFileSeparator);
    if (at == absl::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + kFileSeparator.size());
  }
  out.push_back(input);
  return out;
}

// "<$FOCAL_FUZZ_TMPDIR, else /dev/shm, else $TMPDIR or /tmp>/focal-fuzz-<pid>",
// created on first use and removed at exit.
inline const std::string& ScratchDir() {
  static const std::string* dir = [] {
    namespace fs = std::filesystem;
    std::string root;
    if (const char* t = std::getenv("FOCAL_FUZZ_TMPDIR"); t != nullptr && *t != '\0') {
      root = t;
    } else if (access("/dev/shm", W_OK) == 0) {
      root = "/dev/shm";
    } else if (const char* t = std::getenv("TMPDIR"); t != nullptr && *t != '\0') {
      root = t;
    } else {
      root = "/tmp";
    }
    auto* d = new std::string(root + "/focal-fuzz-" + std::to_string(getpid()));
    std::error_code ec;
    fs::remove_all(*d, ec);
    fs::create_directories(*d, ec);
    if (ec) {
      std::fprintf(stderr, "cannot create %s: %s\n", d->c_str(), ec.message().c_str());
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return d;
  }();
  return *dir;
}

// Writes `contents` to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteScratch(const std::string& name, absl::string_view contents) {
  const std::string path = ScratchDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(contents.data(), 1, contents.size(), f) != contents.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

inline void RemoveScratch(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(ScratchDir() + "/" + name, ec);
}

}  // namespace focal::fuzz

#endif  // FOCAL_TESTS_FUZZ_FUZZ_UTIL_H_
