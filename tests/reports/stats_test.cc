// SPDX-License-Identifier: Apache-2.0
// Paired statistics; expected p-values from the exact binomial sum in Python
// (math.comb), quoted next to each.
#include "reports/stats.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace focal::reports {
namespace {

std::vector<double> Outcomes(int both, int only_a, int only_b, int neither, bool second) {
  std::vector<double> v;
  for (int i = 0; i < both; ++i) v.push_back(1);
  for (int i = 0; i < only_a; ++i) v.push_back(second ? 0 : 1);
  for (int i = 0; i < only_b; ++i) v.push_back(second ? 1 : 0);
  for (int i = 0; i < neither; ++i) v.push_back(0);
  return v;
}

TEST(StatsTest, McNemarExactMatchesBinomialSum) {
  struct Case {
    int b, c;
    double p;
  };
  for (const Case& k : {Case{3, 11, 0.057373046875}, Case{10, 10, 1.0}, Case{0, 6, 0.03125},
                        Case{40, 60, 0.05688793364098079}}) {
    auto a = Outcomes(5, k.b, k.c, 7, false), b = Outcomes(5, k.b, k.c, 7, true);
    auto m = McNemarExact(a, b);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->only_a, k.b);
    EXPECT_EQ(m->only_b, k.c);
    EXPECT_NEAR(m->p_value, k.p, 1e-12) << k.b << " " << k.c;
  }
  EXPECT_FALSE(McNemarExact(std::vector<double>{1}, std::vector<double>{1, 0}).ok());
}

TEST(StatsTest, PairedBootstrapCoversTheDifference) {
  // b = a + 0.1 exactly: every resample gives 0.1.
  std::vector<double> a = {0.1, 0.5, 0.9, 0.3}, b = {0.2, 0.6, 1.0, 0.4};
  auto ci = PairedBootstrapDiff(a, b, 2000);
  ASSERT_TRUE(ci.ok());
  EXPECT_NEAR(ci->low, 0.1, 1e-12);
  EXPECT_NEAR(ci->high, 0.1, 1e-12);
  // 0/1 outcomes with a real difference: the interval brackets it and is
  // reproducible for a seed.
  auto x = Outcomes(30, 5, 25, 40, false), y = Outcomes(30, 5, 25, 40, true);
  auto c1 = PairedBootstrapDiff(x, y, 4000, 7);
  auto c2 = PairedBootstrapDiff(x, y, 4000, 7);
  ASSERT_TRUE(c1.ok() && c2.ok());
  EXPECT_EQ(c1->low, c2->low);
  const double diff = 20.0 / 100;
  EXPECT_LT(c1->low, diff);
  EXPECT_GT(c1->high, diff);
  EXPECT_GT(c1->low, 0.0);  // 25 vs 5 discordant: clearly positive
}

TEST(StatsTest, PerplexityRatio) {
  std::vector<double> a = {-2.0, -3.0, -1.0}, b = {-1.5, -2.5, -0.5};  // b better by 0.5 nats
  auto ci = PairedBootstrapPerplexityRatio(a, b, 1000);
  ASSERT_TRUE(ci.ok());
  EXPECT_NEAR(ci->low, std::exp(-0.5), 1e-12);
  EXPECT_NEAR(ci->high, std::exp(-0.5), 1e-12);
}

TEST(StatsTest, StratifiedBootstrapEqualsItsPythonDefinition) {
  // Expected from CPython 3.11, drawing as the C++ does:
  //   rng = random.Random(7); per resample, per stratum s, n_s draws
  //   k = int(rng.random() * n_s); stat = mean_s(scale_s * mean(b[k] - a[k]));
  //   numpy-style interpolated 2.5% and 97.5% quantiles of 3000 resamples.
  const std::vector<double> a1 = {1, 0, 1, 1, 0}, b1 = {0, 0, 1, 0, 0};
  const std::vector<double> a2 = {0, 1, 0}, b2 = {1, 1, 0};
  const std::vector<double> a3 = {0.2, 0.5, 0.1, 0.9, 0.4, 0.3, 0.6, 0.0},
                            b3 = {0.1, 0.5, 0.0, 0.7, 0.4, 0.1, 0.6, 0.2};
  const std::vector<PairedStratum> strata = {{a1, b1, 100}, {a2, b2, 100}, {a3, b3, 1}};
  auto ci = StratifiedPairedBootstrapDiff(strata, 3000, 7);
  ASSERT_TRUE(ci.ok()) << ci.status();
  EXPECT_NEAR(ci->low, -26.658437499999998, 1e-9);
  EXPECT_NEAR(ci->high, 22.197222222222223, 1e-9);
}

TEST(StatsTest, OneStratumIsThePairedBootstrapScaled) {
  const std::vector<double> x = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1}, y = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0};
  auto plain = PairedBootstrapDiff(x, y, 2000, 3);
  const std::vector<PairedStratum> one = {{x, y, 100}};
  auto strat = StratifiedPairedBootstrapDiff(one, 2000, 3);
  ASSERT_TRUE(plain.ok() && strat.ok());
  EXPECT_NEAR(strat->low, 100 * plain->low, 1e-9);
  EXPECT_NEAR(strat->high, 100 * plain->high, 1e-9);
  EXPECT_FALSE(StratifiedPairedBootstrapDiff({}, 10).ok());
  const std::vector<double> shorter = {1};
  const std::vector<PairedStratum> unpaired = {{x, shorter, 1}};
  EXPECT_FALSE(StratifiedPairedBootstrapDiff(unpaired, 10).ok());
}

TEST(StatsTest, QuantileAndWinTieLoss) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);  // numpy.quantile([1,2,3,4], .5)
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.025), 1.075);
  auto w = CountWinTieLoss(std::vector<double>{1, 0, 1, 0}, std::vector<double>{1, 1, 0, 0});
  EXPECT_EQ(w.wins, 1);
  EXPECT_EQ(w.ties, 2);
  EXPECT_EQ(w.losses, 1);
}

}  // namespace
}  // namespace focal::reports
