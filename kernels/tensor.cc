// SPDX-License-Identifier: Apache-2.0
#include "kernels/tensor.h"

namespace focal::kernels {

absl::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
  }
  return "?";
}

}  // namespace focal::kernels
