// SPDX-License-Identifier: Apache-2.0
#include "model/config.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kBase[] = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
  "intermediate_size": 172, "num_hidden_layers": 2, "num_attention_heads": 4,
  "vocab_size": 320 %s})";

absl::StatusOr<ModelConfig> Parse(const std::string& extra) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf), kBase, extra.c_str());
  return ParseModelConfig(buf, "m/config.json");
}

TEST(ConfigTest, DefaultsFollowHfLlamaConfig) {
  auto c = Parse("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->num_kv_heads, 4);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->max_position_embeddings, 2048);
  EXPECT_DOUBLE_EQ(c->rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(c->rope_theta, 10000.0);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(c->Variant(), "base");
  EXPECT_DOUBLE_EQ(c->ConstantScale(0), 0.25);
}

TEST(ConfigTest, FocalConstantAndPerLayer) {
  auto c = Parse(R"(, "focal_attention": {"mode": "constant", "temperature": 0.4})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Variant(), "focal(t=0.4)");
  EXPECT_DOUBLE_EQ(c->ConstantScale(1), 1.0 / (0.4 * 4.0));
  auto p = Parse(R"(, "focal_attention": {"mode": "constant", "temperature": [0.5, 0.3]})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Variant(), "focal(t=[0.5,0.3])");
  EXPECT_DOUBLE_EQ(p->ConstantScale(1), 1.0 / (0.3 * 4.0));
}

TEST(ConfigTest, FocalLearned) {
  auto c = Parse(R"(, "focal_attention": {"mode": "learned", "tau_min": 5.0,
                    "reduction": "sequence_mean"})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Variant(), "focal(learned, sequence_mean)");
  EXPECT_FALSE(c->focal.tau_max.has_value());
  auto t = Parse(R"(, "focal_attention": {"mode": "learned", "tau_min": 5, "tau_max": 64})");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Variant(), "focal(learned, token)");
  EXPECT_DOUBLE_EQ(*t->focal.tau_max, 64.0);
}

TEST(ConfigTest, BadFocalConfigsNameTheField) {
  struct Case {
    const char* extra;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{
           {R"(, "focal_attention": {"mode": "constant", "temperature": 0})",
            "focal_attention.temperature"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": -1})",
            "focal_attention.temperature"},
           {R"(, "focal_attention": {"mode": "constant"})", "focal_attention.temperature"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": [0.5]})",
            "focal_attention.temperature"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": "hot"})",
            "focal_attention.temperature"},
           {R"(, "focal_attention": {"mode": "learned", "tau_min": 0})", "focal_attention.tau_min"},
           {R"(, "focal_attention": {"mode": "learned"})", "focal_attention.tau_min"},
           {R"(, "focal_attention": {"mode": "learned", "tau_min": 5, "tau_max": 1})",
            "focal_attention.tau_max"},
           {R"(, "focal_attention": {"mode": "learned", "tau_min": 5, "reduction": "max"})",
            "focal_attention.reduction"},
           {R"(, "focal_attention": {"mode": "sharp"})", "focal_attention.mode"},
           {R"(, "focal_attention": {"temperature": 0.4})", "focal_attention.mode"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": 0.4, "tau_min": 1})",
            "focal_attention.tau_min"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": 0.4, "temp": 1})",
            "focal_attention.temp"},
       }) {
    EXPECT_THAT(Parse(c.extra), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr(std::string("'") + c.field + "'")))
        << c.extra;
  }
  EXPECT_THAT(Parse(R"(, "focal_attention": 0.4)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("focal_attention")));
}

TEST(ConfigTest, MissingAndBadFields) {
  EXPECT_THAT(ParseModelConfig(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})",
                               "m/config.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("m/config.json: field 'intermediate_size' is missing")));
  EXPECT_THAT(Parse(R"(, "num_key_value_heads": 3)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("num_key_value_heads")));
  EXPECT_THAT(Parse(R"(, "rms_norm_eps": "small")"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rms_norm_eps")));
  EXPECT_THAT(Parse(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4})"),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("yarn")));
  EXPECT_THAT(ParseModelConfig(R"({"architectures": ["GPT2LMHeadModel"]})", "g.json"),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("GPT2LMHeadModel")));
  EXPECT_THAT(ParseModelConfig("{\"hidden_size\": 64,", "trunc.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trunc.json:1:")));
}

// Numbers the float kernels cannot hold (1e400 parses as inf) would make
// every score inf or NaN: each is refused by name.
TEST(ConfigTest, NumbersOutsideFloatRangeNameTheField) {
  struct Case {
    const char* extra;
    const char* field;
    const char* what;
  };
  for (const Case& c : std::vector<Case>{
           {R"(, "rms_norm_eps": 1e39)", "rms_norm_eps", "float range"},
           {R"(, "rope_theta": 1e400)", "rope_theta", "float range"},
           {R"(, "rope_scaling": {"rope_type": "linear", "factor": -1e400})", "rope_scaling.factor",
            "float range"},
           {R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 0.5})",
            "rope_parameters.rope_theta", "must be > 1"},
           {R"(, "focal_attention": {"mode": "constant", "temperature": 1e-300})",
            "focal_attention.temperature", "too small"},
           {R"(, "focal_attention": {"mode": "learned", "tau_min": 1e-300})",
            "focal_attention.tau_min", "too small"},
       }) {
    EXPECT_THAT(
        Parse(c.extra),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 ::testing::AllOf(HasSubstr(std::string("'") + c.field + "'"), HasSubstr(c.what))))
        << c.extra;
  }
  auto ok = Parse("");
  ASSERT_TRUE(ok.ok());
  EXPECT_THAT(OverrideFocalTemperature(*ok, 1e-300),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too small")));
}

// The fingerprint changes with every field that changes a number, at full
// precision, and not with how the file spells it.
TEST(ConfigTest, FingerprintFollowsEveryScoreAffectingField) {
  auto base = Parse(R"(, "focal_attention": {"mode": "constant", "temperature": 0.4})");
  ASSERT_TRUE(base.ok()) << base.status();
  auto respelt = Parse(R"(, "focal_attention": {"temperature": 4e-1, "mode": "constant"},
                         "rope_theta": 10000)");
  ASSERT_TRUE(respelt.ok()) << respelt.status();
  EXPECT_EQ(respelt->Fingerprint(), base->Fingerprint());
  std::vector<std::string> seen = {base->Fingerprint()};
  for (const char* extra : {
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4000001})",
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4}, "rope_theta": 5e5)",
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4}, "rms_norm_eps": 1e-5)",
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4}, "eos_token_id": 2)",
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4},
              "max_position_embeddings": 4096)",
           R"(, "focal_attention": {"mode": "constant", "temperature": 0.4},
              "tie_word_embeddings": true)",
           R"(, "focal_attention": {"mode": "learned", "tau_min": 5})",
           R"(, "focal_attention": {"mode": "learned", "tau_min": 5,
              "reduction": "sequence_mean"})",
           "",
       }) {
    auto c = Parse(extra);
    ASSERT_TRUE(c.ok()) << extra << ": " << c.status();
    for (const std::string& s : seen) EXPECT_NE(c->Fingerprint(), s) << extra;
    seen.push_back(c->Fingerprint());
  }
  // Variant() rounds 0.4000001 to the label of 0.4; the fingerprint does not.
  auto near = Parse(R"(, "focal_attention": {"mode": "constant", "temperature": 0.4000001})");
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->Variant(), base->Variant());
}

// The cache identity rests on Fingerprint() listing every field that can
// change a number, and it lists them by hand. A new field changes these sizes:
// add it to Fingerprint() (and to the test above) if it can change a score or
// a generation, then update the sizes here. (x86-64 and aarch64 Linux.)
TEST(ConfigTest, NewFieldsAreConsideredForTheFingerprint) {
  EXPECT_EQ(sizeof(RopeScaling), 40u);
  EXPECT_EQ(sizeof(FocalConfig), 64u);
  EXPECT_EQ(sizeof(ModelConfig), 312u);
}

TEST(ConfigTest, TransformersFiveLayout) {
  auto c = Parse(R"(, "dtype": "bfloat16", "rope_parameters": {"rope_type": "llama3",
      "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 64})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->torch_dtype, "bfloat16");
  EXPECT_DOUBLE_EQ(c->rope_theta, 500000.0);
  EXPECT_EQ(c->rope_scaling.type, RopeScaling::Type::kLlama3);
  auto d = Parse(R"(, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6})");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rope_scaling.type, RopeScaling::Type::kNone);
  EXPECT_DOUBLE_EQ(d->rope_theta, 1e6);
  EXPECT_THAT(
      Parse(R"(, "rope_parameters": {"rope_type": "dynamic", "factor": 2})"),
      StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("rope_parameters.rope_type 'dynamic'")));
}

TEST(ConfigTest, OverrideReplacesFocalSetting) {
  auto c = Parse(R"(, "focal_attention": {"mode": "learned", "tau_min": 5})");
  ASSERT_TRUE(c.ok());
  FOCAL_ASSERT_OK(OverrideFocalTemperature(*c, 0.4));
  EXPECT_EQ(c->Variant(), "focal(t=0.4, retrofit)");
  EXPECT_THAT(OverrideFocalTemperature(*c, 0.0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--focal-temperature")));
}

TEST(ConfigTest, RopeInvFreqScalings) {
  auto c = Parse(R"(, "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3",
      "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 64})");
  ASSERT_TRUE(c.ok()) << c.status();
  auto inv = RopeInvFreq(*c);
  ASSERT_EQ(inv.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const double base = 1.0 / std::pow(500000.0, 2.0 * i / 16);
    const double wavelen = 2 * M_PI / base;
    double want = base;
    if (wavelen > 64) {
      want = base / 8;  // low frequency: divided by the factor
    } else if (wavelen >= 16) {
      const double s = (64 / wavelen - 1.0) / 3.0;  // medium: smoothed
      want = (1 - s) * base / 8 + s * base;
    }
    EXPECT_NEAR(inv[i], want, 1e-6 * want) << i;
  }
  auto lin = Parse(R"(, "rope_scaling": {"type": "linear", "factor": 2.0})");
  ASSERT_TRUE(lin.ok());
  EXPECT_NEAR(RopeInvFreq(*lin)[1], std::pow(10000.0, -2.0 / 16) / 2, 1e-7);
}

}  // namespace
}  // namespace focal::model
