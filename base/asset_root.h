// SPDX-License-Identifier: Apache-2.0
// Where the project's own files are found at run time: the task specs, the
// bundled samples and word lists, the default model.
#ifndef FOCAL_BASE_ASSET_ROOT_H_
#define FOCAL_BASE_ASSET_ROOT_H_

#include <string>

namespace focal {

// $FOCAL_ASSET_DIR when set, else the source tree the binary was built from.
std::string AssetRoot();

// The bundled default model directory under AssetRoot().
std::string DefaultModelDir();

}  // namespace focal

#endif  // FOCAL_BASE_ASSET_ROOT_H_
