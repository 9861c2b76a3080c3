// SPDX-License-Identifier: Apache-2.0
// Debian's absl::string_view is not std::string_view (Abseil built with
// ABSL_OPTION_USE_STD_STRING_VIEW 0); convert explicitly at the boundaries.
#ifndef FOCAL_HARNESS_BASE_STRINGS_H_
#define FOCAL_HARNESS_BASE_STRINGS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace focal {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace focal

#endif  // FOCAL_HARNESS_BASE_STRINGS_H_
