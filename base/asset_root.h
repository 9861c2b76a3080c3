// SPDX-License-Identifier: Apache-2.0
// Where the project's own files are found at run time (the task specs, the
// bundled samples and word lists) and where the default model is cached.
#ifndef FOCAL_BASE_ASSET_ROOT_H_
#define FOCAL_BASE_ASSET_ROOT_H_

#include <string>

#include "absl/status/statusor.h"

namespace focal {

// $FOCAL_ASSET_DIR when set, else the source tree the binary was built from.
std::string AssetRoot();

// The user's cache: $FOCAL_CACHE_DIR, else $XDG_CACHE_HOME/focal-eval, else
// ~/.cache/focal-eval. The set-up scripts write the default model and the data
// there.
std::string CacheRoot();

// Where scripts/fetch_data.sh puts the real evaluation data: $FOCAL_DATA_CACHE
// when set, else CacheRoot()/data. Empty when $FOCAL_DATA_CACHE is "none"
// (the bundled samples only).
std::string DataCacheDir();

// The default model: $FOCAL_DEFAULT_MODEL when set, else SmolLM2-135M-Instruct
// (Q4_1 GGUF) where scripts/fetch_default_model.sh caches it: under
// $FOCAL_CACHE_DIR, else $XDG_CACHE_HOME/focal-eval, else ~/.cache/focal-eval.
std::string DefaultModelPath();

// DefaultModelPath() when it exists, else an error saying how to install it.
absl::StatusOr<std::string> FindDefaultModel();

}  // namespace focal

#endif  // FOCAL_BASE_ASSET_ROOT_H_
