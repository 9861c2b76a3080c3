// SPDX-License-Identifier: Apache-2.0
// The llama config and focal_attention metadata of a GGUF, with their
// errors, and the tensor names (see gguf_test.cc).
#include "tests/model/gguf_test_util.h"

namespace focal::model {
namespace {

TEST_F(GgufModelTest, ConfigFromMetadata) {
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 172);
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(c.num_heads, 4);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.vocab_size, 320);
  EXPECT_EQ(c.max_position_embeddings, 256);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.rope_theta, 10000.0);
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kNone);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_THAT(c.eos_token_ids, ElementsAre(2));
  EXPECT_EQ(c.Variant(), "base");
}

TEST_F(GgufModelTest, ConfigDefaultsAndAlternatives) {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddI32("llama.block_count", 3);  // any integer type
  b.AddU64("llama.context_length", 512);
  b.AddU32("llama.embedding_length", 48);
  b.AddU32("llama.feed_forward_length", 96);
  b.AddU32("llama.attention.head_count", 2);
  b.AddU32("llama.attention.key_length", 32);  // head_dim != 48 / 2
  b.AddF64("llama.attention.layer_norm_rms_epsilon", 1e-6);
  b.AddString("llama.rope.scaling.type", "linear");
  b.AddF32("llama.rope.scaling.factor", 4);
  b.AddF32Tensor("token_embd.weight", {100, 48}, std::vector<float>(4800));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  EXPECT_EQ(c.num_layers, 3);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.num_kv_heads, 2);  // default: head_count
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.rope_theta, 10000.0);  // default
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kLinear);
  EXPECT_EQ(c.rope_scaling.factor, 4.0);
  EXPECT_EQ(c.vocab_size, 100);        // from the embedding when nothing else says
  EXPECT_TRUE(c.tie_word_embeddings);  // no output.weight
  EXPECT_FALSE(c.bos_token_id.has_value());
}

TEST_F(GgufModelTest, ConfigErrorsNameFileAndKey) {
  auto config_of = [](GgufBuilder b) -> absl::StatusOr<ModelConfig> {
    FOCAL_ASSIGN_OR_RETURN(auto f, OpenBytes(b.Build()));
    return GgufModelConfig(*f);
  };
  const GgufBuilder base = ConvertToGguf(ModelPath("gqa_untied"));
  {
    GgufBuilder b;
    b.AddString("general.architecture", "qwen2");
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kUnimplemented,
                                       AllOf(HasSubstr("model.gguf"),
                                             HasSubstr("architecture 'qwen2' is not supported"))));
  }
  {
    GgufBuilder b;
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kNotFound,
                                       HasSubstr("'general.architecture' is missing")));
  }
  {
    GgufBuilder b;
    b.AddString("general.architecture", "llama");
    b.AddU32("llama.embedding_length", 8);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kNotFound,
                                       HasSubstr("'llama.feed_forward_length' is missing")));
  }
  {
    GgufBuilder b = base;
    b.AddString("llama.rope.scaling.type", "yarn");
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kUnimplemented,
                                       AllOf(HasSubstr("'llama.rope.scaling.type' = 'yarn'"),
                                             HasSubstr("none or linear"))));
  }
  {
    GgufBuilder b = base;
    b.AddU32("llama.expert_count", 8);
    EXPECT_THAT(config_of(b),
                StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("mixture-of-experts")));
  }
  {
    GgufBuilder b = base;
    b.AddF32Tensor("rope_freqs.weight", {8}, std::vector<float>(8, 1));
    EXPECT_THAT(config_of(b),
                StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("'rope_freqs.weight'")));
  }
  {
    GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
    b.AddU32("llama.vocab_size", 321);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kInvalidArgument,
                                       AllOf(HasSubstr("'llama.vocab_size' = 321"),
                                             HasSubstr("tokenizer.ggml.tokens has 320"))));
  }
}

TEST_F(GgufModelTest, PartialRopeAndBadHeadsRefused) {
  const GgufBuilder b = LlamaHeader(/*layers=*/1, /*width=*/64, /*heads=*/4, /*context=*/64);
  GgufBuilder partial = b;
  partial.AddU32("llama.rope.dimension_count", 8);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f1, OpenBytes(partial.Build()));
  EXPECT_THAT(GgufModelConfig(*f1), StatusIs(absl::StatusCode::kUnimplemented,
                                             HasSubstr("partial RoPE is not supported")));
  GgufBuilder kv = b;
  kv.AddU32("llama.attention.head_count_kv", 3);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f2, OpenBytes(kv.Build()));
  EXPECT_THAT(GgufModelConfig(*f2), StatusIs(absl::StatusCode::kInvalidArgument,
                                             AllOf(HasSubstr("'llama.attention.head_count_kv'"),
                                                   HasSubstr("must divide"))));
  GgufBuilder zero = b;
  zero.AddU32("llama.attention.head_count_kv", 0);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f3, OpenBytes(zero.Build()));
  EXPECT_THAT(GgufModelConfig(*f3),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be >= 1, got 0")));
}

TEST_F(GgufModelTest, FocalMetadata) {
  auto config_of = [](GgufBuilder b) -> absl::StatusOr<ModelConfig> {
    FOCAL_ASSIGN_OR_RETURN(auto f, OpenBytes(b.Build()));
    return GgufModelConfig(*f);
  };
  const GgufBuilder base = ConvertToGguf(ModelPath("gqa_untied"));
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "constant");
    b.AddF32("focal_attention.temperature", 0.4f);
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(t=0.4)");
  }
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "constant");
    b.AddF32Array("focal_attention.temperature", {0.5f, 0.25f});
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(t=[0.5,0.25])");
  }
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "learned");
    b.AddF32("focal_attention.tau_min", 5);
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(learned, token)");
    EXPECT_EQ(c.focal.tau_min, 5.0);
    EXPECT_FALSE(c.focal.tau_max.has_value());
  }
  struct Bad {
    std::function<void(GgufBuilder&)> edit;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[](GgufBuilder& b) { b.AddF32("focal_attention.temperature", 0.4f); },
       "'focal_attention.mode' is missing"},
      {[](GgufBuilder& b) { b.AddString("focal_attention.mode", "sharp"); },
       "must be \"constant\" or \"learned\", got \"sharp\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32("focal_attention.temperature", 0);
       },
       "'focal_attention.temperature' must be > 0, got 0"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32Array("focal_attention.temperature", {0.5f, 0.4f, 0.3f});
       },
       "has 3 values but the model has 2 layers"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddString("focal_attention.temperature", "0.4");
       },
       "must be a float or an array of floats"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32("focal_attention.temperature", 0.4f);
         b.AddF32("focal_attention.tau_min", 5);
       },
       "'focal_attention.tau_min' is only valid with mode \"learned\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddF32("focal_attention.tau_max", 4);
       },
       "'focal_attention.tau_max' must be >= tau_min"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddString("focal_attention.reduction", "max");
       },
       "must be \"token\" or \"sequence_mean\", got \"max\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddF32("focal_attention.tau", 5);
       },
       "'focal_attention.tau' is not a known focal_attention key"},
  };
  for (const Bad& c : bad) {
    GgufBuilder b = base;
    c.edit(b);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kInvalidArgument,
                                       AllOf(HasSubstr("model.gguf"), HasSubstr(c.message))));
  }
}

TEST_F(GgufModelTest, TensorNames) {
  EXPECT_EQ(HfTensorName("token_embd.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(HfTensorName("output.weight"), "lm_head.weight");
  EXPECT_EQ(HfTensorName("output_norm.weight"), "model.norm.weight");
  EXPECT_EQ(HfTensorName("blk.12.attn_output.weight"), "model.layers.12.self_attn.o_proj.weight");
  EXPECT_EQ(HfTensorName("blk.0.ffn_norm.weight"),
            "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(HfTensorName("blk.3.attn_focal_tau.bias"), "model.layers.3.self_attn.focal_tau.bias");
  EXPECT_EQ(HfTensorName("blk.0.attn_q.bias"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk.x.attn_q.weight"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk..attn_q.weight"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk.-1.attn_q.weight"), std::nullopt);
}

}  // namespace
}  // namespace focal::model
