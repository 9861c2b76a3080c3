// SPDX-License-Identifier: Apache-2.0
#include "model/kv_cache.h"

#include <algorithm>

#include "base/status_macros.h"

namespace focal::model {

absl::Status KvCache::Reserve(int64_t tokens, kernels::Backend& backend) {
  if (tau_sum_.empty()) {
    tau_sum_.assign(num_layers_, 0.0);
    tau_count_.assign(num_layers_, 0);
  }
  if (tokens <= capacity_) return absl::OkStatus();
  // Grow geometrically so token-by-token decoding reallocates O(log n) times.
  int64_t cap = std::max<int64_t>({tokens, capacity_ * 2, 16});
  // In the dtype the backend's attention reads (BF16 halves the cache).
  const kernels::DType dtype = backend.AttentionDType();
  std::vector<kernels::Buffer> nk, nv;
  for (int64_t l = 0; l < num_layers_; ++l) {
    FOCAL_ASSIGN_OR_RETURN(kernels::Buffer kb, backend.Allocate(dtype, cap, kv_dim_));
    FOCAL_ASSIGN_OR_RETURN(kernels::Buffer vb, backend.Allocate(dtype, cap, kv_dim_));
    if (length_ > 0) {
      backend.CopyRows(k_[l].tensor(), 0, kb.tensor(), 0, length_);
      backend.CopyRows(v_[l].tensor(), 0, vb.tensor(), 0, length_);
    }
    nk.push_back(std::move(kb));
    nv.push_back(std::move(vb));
  }
  k_ = std::move(nk);
  v_ = std::move(nv);
  capacity_ = cap;
  return absl::OkStatus();
}

absl::StatusOr<KvCache> KvCache::Clone(kernels::Backend& backend, int64_t reserve) const {
  KvCache c(num_layers_, kv_dim_);
  FOCAL_RETURN_IF_ERROR(c.Reserve(std::max(reserve, length_), backend));
  for (int64_t l = 0; l < num_layers_ && length_ > 0; ++l) {
    backend.CopyRows(k_[l].tensor(), 0, c.k_[l].tensor(), 0, length_);
    backend.CopyRows(v_[l].tensor(), 0, c.v_[l].tensor(), 0, length_);
  }
  c.length_ = length_;
  c.tau_sum_ = tau_sum_;
  c.tau_count_ = tau_count_;
  return c;
}

}  // namespace focal::model
