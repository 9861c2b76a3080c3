// SPDX-License-Identifier: Apache-2.0
// NumPy's default_rng(seed).permutation(n) (what Hugging Face datasets'
// shuffle(seed) draws), against values printed by NumPy 2.4.6:
//   np.random.SeedSequence(s).generate_state(4, np.uint64)
//   np.random.PCG64(42).random_raw()
//   np.random.default_rng(s).permutation(n)
#include "base/np_random.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace focal {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

TEST(NumpyPcg64Test, RawOutputsMatchNumpy) {
  NumpyPcg64 rng(42);
  EXPECT_EQ(rng.Next64(), 14276969152011380360ull);
  EXPECT_EQ(rng.Next64(), 8095878257575067585ull);
  EXPECT_EQ(rng.Next64(), 15838336090824644132ull);
}

TEST(NumpyPermutationTest, MatchesNumpy) {
  EXPECT_THAT(NumpyPermutation(42, 10), ElementsAre(5, 6, 0, 7, 3, 2, 4, 9, 1, 8));
  EXPECT_THAT(NumpyPermutation(0, 10), ElementsAre(4, 6, 2, 7, 3, 5, 9, 0, 8, 1));
  EXPECT_THAT(NumpyPermutation(596078644, 10), ElementsAre(8, 3, 6, 5, 1, 0, 2, 7, 9, 4));
  EXPECT_THAT(NumpyPermutation(2147483647, 10), ElementsAre(1, 8, 3, 2, 0, 7, 5, 6, 4, 9));
  // A seed of two 32-bit words.
  EXPECT_THAT(NumpyPermutation(1099511627781ull, 10), ElementsAre(8, 1, 2, 5, 3, 0, 9, 7, 4, 6));
  const std::vector<int64_t> p = NumpyPermutation(42, 3080);
  EXPECT_THAT(std::vector<int64_t>(p.begin(), p.begin() + 8),
              ElementsAre(2526, 1853, 2749, 3008, 1677, 2585, 1959, 2793));
  const std::vector<int64_t> q = NumpyPermutation(42, 25715);
  EXPECT_THAT(
      std::vector<int64_t>(q.begin(), q.begin() + 10),
      ElementsAreArray({12594, 17666, 22041, 22989, 21989, 12121, 23919, 23795, 19243, 5391}));
}

TEST(NumpyPermutationTest, EdgeSizes) {
  EXPECT_TRUE(NumpyPermutation(42, 0).empty());
  EXPECT_THAT(NumpyPermutation(42, 1), ElementsAre(0));
}

}  // namespace
}  // namespace focal
