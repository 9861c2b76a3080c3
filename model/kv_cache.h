// SPDX-License-Identifier: Apache-2.0
// Per-sequence key/value cache (one K and one V tensor per layer, on the
// backend's device, in its Backend::AttentionDType()) plus the running tau sums of the learned
// sequence_mean focal variant. Grows on demand; Clone() forks a shared context.
#ifndef FOCAL_MODEL_KV_CACHE_H_
#define FOCAL_MODEL_KV_CACHE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace focal::model {

class KvCache {
 public:
  KvCache(int64_t num_layers, int64_t kv_dim) : num_layers_(num_layers), kv_dim_(kv_dim) {}
  KvCache(KvCache&&) = default;
  KvCache& operator=(KvCache&&) = default;

  // Tokens stored so far (the next token's position).
  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }

  // Makes room for `tokens` positions in total (keeps the stored rows).
  absl::Status Reserve(int64_t tokens, kernels::Backend& backend);
  // An independent copy (same length and contents) sized for `reserve` tokens.
  absl::StatusOr<KvCache> Clone(kernels::Backend& backend, int64_t reserve) const;

  kernels::Tensor k(int64_t layer) const { return k_[layer].tensor(); }
  kernels::Tensor v(int64_t layer) const { return v_[layer].tensor(); }

  // sequence_mean focal: sum and count of x.w + b over every token so far.
  std::vector<double>& tau_sum() { return tau_sum_; }
  std::vector<int64_t>& tau_count() { return tau_count_; }

 private:
  friend class Transformer;
  int64_t num_layers_;
  int64_t kv_dim_;
  int64_t length_ = 0;
  int64_t capacity_ = 0;
  std::vector<kernels::Buffer> k_, v_;
  std::vector<double> tau_sum_;
  std::vector<int64_t> tau_count_;
};

}  // namespace focal::model

#endif  // FOCAL_MODEL_KV_CACHE_H_
