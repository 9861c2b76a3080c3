// SPDX-License-Identifier: Apache-2.0
// FOCAL_CHECK: aborts with file:line on a violated invariant (a bug, never user
// input; those get absl::Status). Abseil 20220623 has no CHECK of its own.
#ifndef FOCAL_BASE_CHECK_H_
#define FOCAL_BASE_CHECK_H_

namespace focal::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* expr);
}  // namespace focal::internal

#define FOCAL_CHECK(cond)                                                   \
  do {                                                                      \
    if (!(cond)) ::focal::internal::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (0)

#ifdef NDEBUG
#define FOCAL_DCHECK(cond) \
  do {                     \
  } while (false && (cond))
#else
#define FOCAL_DCHECK(cond) FOCAL_CHECK(cond)
#endif

#endif  // FOCAL_BASE_CHECK_H_
