// SPDX-License-Identifier: Apache-2.0
// The ops of kernels::Backend (kernels/backend.h), listed once.
//
// Adding a virtual op to Backend means adding it to FOCAL_BACKEND_OPS here.
// tests/kernels/backend_ops_test.cc then fails until the op has an entry in
// its table (shapes and tolerance), which runs it on every backend other than
// the CPU and compares with the CPU backend. A virtual method that is not an
// op (bookkeeping, no tensor data in or out) goes to FOCAL_BACKEND_SERVICES
// instead; the same test fails if a virtual method of Backend is in neither
// list.
#ifndef FOCAL_KERNELS_BACKEND_OPS_H_
#define FOCAL_KERNELS_BACKEND_OPS_H_

#include <cstddef>
#include <iterator>

#include "absl/strings/string_view.h"

namespace focal::kernels {

// X(Name) for every op, in the order backend.h declares them. Memory and
// transfers are ops too: their results (zero fill, rounding on upload, views)
// are compared like any other.
#define FOCAL_BACKEND_OPS(X) \
  X(Allocate)                \
  X(UploadWeight)            \
  X(CopyFromHost)            \
  X(CopyToHost)              \
  X(CopyRows)                \
  X(Embed)                   \
  X(RmsNorm)                 \
  X(MatMul)                  \
  X(Rope)                    \
  X(Attention)               \
  X(SwiGlu)                  \
  X(Add)                     \
  X(RowDot)                  \
  X(GatherRows)              \
  X(LogSoftmaxGather)        \
  X(AttentionStats)

// The rest of Backend's virtual methods: names, memory accounting and
// synchronisation, which every op's check uses but which compute nothing.
#define FOCAL_BACKEND_SERVICES(X) \
  X(name)                         \
  X(CanUseBuffersOf)              \
  X(AttentionDType)               \
  X(UploadBytes)                  \
  X(AvailableMemoryBytes)         \
  X(ScratchBytes)                 \
  X(PeakMemoryBytes)              \
  X(ResetPeakMemory)              \
  X(Sync)

enum class BackendOp {
#define FOCAL_BACKEND_OP_ENUM_(op) k##op,
  FOCAL_BACKEND_OPS(FOCAL_BACKEND_OP_ENUM_)
#undef FOCAL_BACKEND_OP_ENUM_
};

#define FOCAL_BACKEND_NAME_(op) absl::string_view(#op),
inline constexpr absl::string_view kBackendOpNames[] = {FOCAL_BACKEND_OPS(FOCAL_BACKEND_NAME_)};
inline constexpr absl::string_view kBackendServiceNames[] = {
    FOCAL_BACKEND_SERVICES(FOCAL_BACKEND_NAME_)};
#undef FOCAL_BACKEND_NAME_

inline constexpr size_t kNumBackendOps = std::size(kBackendOpNames);

inline constexpr absl::string_view BackendOpName(BackendOp op) {
  return kBackendOpNames[static_cast<size_t>(op)];
}

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_BACKEND_OPS_H_
