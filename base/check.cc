// SPDX-License-Identifier: Apache-2.0
#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace focal::internal {

void CheckFailed(const char* file, int line, const char* expr) {
  std::fprintf(stderr, "%s:%d: FOCAL_CHECK failed: %s (this is a bug in focal-eval)\n", file, line,
               expr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace focal::internal
