// SPDX-License-Identifier: Apache-2.0
// The resume caches are keyed by everything that can change a number: a run
// with another config, on another backend or precision, with another
// tokenizer, BOS policy, max length or scoring-code version never reuses a
// cached score.
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "harness/runner.h"

namespace focal::harness {
namespace {

reports::ModelRun Base() {
  reports::ModelRun r;
  r.set_weights_sha256("aaaa");
  r.set_config_sha256("cccc");
  r.set_variant("base");
  r.set_tokenizer_sha256("bbbb");
  r.set_backend("cpu");
  r.set_bos_policy("bos");
  r.set_max_length(8192);
  return r;
}

TEST(CacheIdentityTest, EveryScoreAffectingFieldChangesIt) {
  const std::string base = CacheIdentity(Base());
  EXPECT_EQ(CacheIdentity(Base()), base);
  const std::vector<std::function<void(reports::ModelRun&)>> changes = {
      [](reports::ModelRun& r) { r.set_weights_sha256("aaab"); },
      [](reports::ModelRun& r) { r.set_config_sha256("cccd"); },
      [](reports::ModelRun& r) { r.set_variant("focal(t=0.4, retrofit)"); },
      [](reports::ModelRun& r) { r.set_tokenizer_sha256("bbbc"); },
      [](reports::ModelRun& r) { r.set_backend("cpu:bf16"); },
      [](reports::ModelRun& r) { r.set_backend("cuda:0 (NVIDIA H200, bf16)"); },
      [](reports::ModelRun& r) { r.set_backend("cuda:0 (NVIDIA H200, fp32)"); },
      [](reports::ModelRun& r) { r.set_bos_policy("no-bos"); },
      [](reports::ModelRun& r) { r.set_max_length(4096); },
  };
  std::vector<std::string> seen = {base};
  for (const auto& change : changes) {
    reports::ModelRun r = Base();
    change(r);
    const std::string id = CacheIdentity(r);
    for (const std::string& s : seen) EXPECT_NE(id, s);
    seen.push_back(id);
  }
  // Fields that cannot change a score do not split the cache.
  reports::ModelRun r = Base();
  r.set_model_path("/elsewhere/same-weights");
  r.set_wall_seconds(12.5);
  EXPECT_EQ(CacheIdentity(r), base);
}

}  // namespace
}  // namespace focal::harness
