// SPDX-License-Identifier: Apache-2.0
// NumPy's default generator as far as Hugging Face datasets uses it:
// np.random.default_rng(seed) (SeedSequence -> PCG64) and
// Generator.permutation(n), which is what Dataset.shuffle(seed=...) and
// train_test_split(seed=...) draw. Reimplemented bit for bit (NumPy 2.x), so
// HELMET's test-set and demonstration selections are reproduced exactly.
#ifndef FOCAL_BASE_NP_RANDOM_H_
#define FOCAL_BASE_NP_RANDOM_H_

#include <cstdint>
#include <vector>

namespace focal {

// PCG64 (XSL-RR 128/64) seeded as np.random.default_rng(seed) seeds it.
class NumpyPcg64 {
 public:
  explicit NumpyPcg64(uint64_t seed);
  uint64_t Next64();
  // NumPy's next_uint32: the low half of a 64-bit draw, the high half kept
  // for the next call.
  uint32_t Next32();
  // random_interval(max): uniform in [0, max] by masked rejection (32-bit
  // draws when max fits in 32 bits).
  uint64_t RandomInterval(uint64_t max);

 private:
  void Step();
  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

// np.random.default_rng(seed).permutation(n).
std::vector<int64_t> NumpyPermutation(uint64_t seed, int64_t n);

}  // namespace focal

#endif  // FOCAL_BASE_NP_RANDOM_H_
