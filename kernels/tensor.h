// SPDX-License-Identifier: Apache-2.0
// Non-owning 2-D tensor views and owning buffers on a backend's device.
#ifndef FOCAL_KERNELS_TENSOR_H_
#define FOCAL_KERNELS_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include "absl/strings/string_view.h"

namespace focal::kernels {

enum class DType { kF32, kF16, kBF16 };

inline size_t DTypeSize(DType t) { return t == DType::kF32 ? 4 : 2; }
absl::string_view DTypeName(DType t);

// Row-major (rows, cols) view of device memory. Activations are (T, N):
// one row per token of the packed batch.
struct Tensor {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;

  int64_t numel() const { return rows * cols; }
  size_t bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
  // Rows [begin, begin + n) as a view.
  Tensor Rows(int64_t begin, int64_t n) const {
    return {static_cast<char*>(data) + begin * cols * DTypeSize(dtype), dtype, n, cols};
  }
};

// Owns device memory through a deleter supplied by the backend. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Tensor t, std::function<void(void*)> free) : t_(t), free_(std::move(free)) {}
  Buffer(Buffer&& o) noexcept : t_(std::exchange(o.t_, Tensor{})), free_(std::move(o.free_)) {
    o.free_ = nullptr;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      Reset();
      t_ = std::exchange(o.t_, Tensor{});
      free_ = std::move(o.free_);
      o.free_ = nullptr;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Reset(); }

  const Tensor& tensor() const { return t_; }
  // A view with the same memory reshaped as (rows, cols); must fit.
  Tensor View(int64_t rows, int64_t cols) const { return {t_.data, t_.dtype, rows, cols}; }

 private:
  void Reset() {
    if (free_ && t_.data != nullptr) free_(t_.data);
    t_ = Tensor{};
    free_ = nullptr;
  }
  Tensor t_;
  std::function<void(void*)> free_;
};

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_TENSOR_H_
