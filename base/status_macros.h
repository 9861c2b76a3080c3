// SPDX-License-Identifier: Apache-2.0
// Status propagation macros (Abseil 20220623 ships none) and Annotate().
#ifndef FOCAL_BASE_STATUS_MACROS_H_
#define FOCAL_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define FOCAL_CONCAT_INNER_(a, b) a##b
#define FOCAL_CONCAT_(a, b) FOCAL_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define FOCAL_RETURN_IF_ERROR(expr)                                   \
  do {                                                                \
    if (::absl::Status focal_status_ = (expr); !focal_status_.ok()) { \
      return focal_status_;                                           \
    }                                                                 \
  } while (0)

// `lhs = value of rexpr` (an absl::StatusOr), or returns its error status.
#define FOCAL_ASSIGN_OR_RETURN(lhs, rexpr) \
  FOCAL_ASSIGN_OR_RETURN_IMPL_(FOCAL_CONCAT_(focal_statusor_, __LINE__), lhs, rexpr)
#define FOCAL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

namespace focal {

// Keeps the code of `status` and prefixes its message with `context`.
inline absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace focal

#endif  // FOCAL_BASE_STATUS_MACROS_H_
