// SPDX-License-Identifier: Apache-2.0
#include "base/asset_root.h"

#include <cstdlib>

#ifndef FOCAL_ASSET_DIR
#define FOCAL_ASSET_DIR "."
#endif

namespace focal {

std::string AssetRoot() {
  const char* env = std::getenv("FOCAL_ASSET_DIR");
  return env != nullptr && *env != '\0' ? env : FOCAL_ASSET_DIR;
}

std::string DefaultModelDir() { return AssetRoot() + "/model/assets/stories260K"; }

}  // namespace focal
