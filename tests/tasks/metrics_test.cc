// SPDX-License-Identifier: Apache-2.0
// lm-eval's aggregations, checked against values computed with CPython
// (expected numbers from `python3 -c ...`, quoted next to each).
#include "tasks/metrics.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace focal::tasks {
namespace {

TEST(PyRandomTest, MatchesCPython) {
  // [random.Random(0).getrandbits(32) for _ in range(3)]
  PyRandom r0(0);
  EXPECT_EQ(r0.NextU32(), 3626764237u);
  EXPECT_EQ(r0.NextU32(), 1654615998u);
  EXPECT_EQ(r0.NextU32(), 3255389356u);
  // random.Random(5).random()
  EXPECT_EQ(PyRandom(5).Random(), 0.6229016948897019);
  // random.Random(2**40 + 7).choices(range(10), k=5) -> [6, 8, 9, 5, 4]
  PyRandom big((uint64_t{1} << 40) + 7);
  std::vector<int64_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(big.ChoiceIndex(10));
  EXPECT_EQ(got, (std::vector<int64_t>{6, 8, 9, 5, 4}));
}

TEST(PyRandomTest, SampleMatchesCPython) {
  // r = random.Random(1234); r.sample(range(200), 4) twice (set method).
  PyRandom r(1234);
  EXPECT_EQ(r.Sample(200, 4), (std::vector<int64_t>{199, 112, 29, 1}));
  EXPECT_EQ(r.Sample(200, 4), (std::vector<int64_t>{23, 149, 8, 171}));
  // Pool method (n <= setsize), and k > 5 which enlarges setsize to 85.
  EXPECT_EQ(PyRandom(7).Sample(10, 3), (std::vector<int64_t>{5, 2, 6}));
  EXPECT_EQ(PyRandom(3).Sample(50, 8), (std::vector<int64_t>{15, 37, 34, 8, 23, 38, 30, 40}));
  EXPECT_EQ(PyRandom(3).Sample(500, 8),
            (std::vector<int64_t>{121, 303, 278, 66, 189, 468, 309, 242}));
}

TEST(MetricsTest, MeanAndStderr) {
  std::vector<double> acc = {1, 0, 1, 1, 0, 1};
  EXPECT_DOUBLE_EQ(Mean(acc), 4.0 / 6);
  // sqrt(p(1-p)/(n-1)) for 0/1 data
  EXPECT_NEAR(MeanStderr(acc), std::sqrt((4.0 / 6) * (2.0 / 6) / 5), 1e-15);
  EXPECT_TRUE(std::isnan(SampleStddev(std::vector<double>{1.0})));
}

TEST(MetricsTest, PerplexityAndBootstrapLikeLmEval) {
  std::vector<double> lls = {-1.5, -2.25, -0.75, -3.0};
  EXPECT_DOUBLE_EQ(Perplexity(lls), std::exp(1.875));
  // lm-eval's bootstrap_stderr(perplexity, lls, iters=3000), in CPython:
  // 3.0451428029888343
  EXPECT_EQ(PerplexityBootstrapStderr(lls, 3000), 3.0451428029888343);
}

}  // namespace
}  // namespace focal::tasks
