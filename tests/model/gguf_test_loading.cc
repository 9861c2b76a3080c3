// SPDX-License-Identifier: Apache-2.0
// Whole GGUF models: parity with their safetensors, quantized weights,
// tokenizers, tensor errors (see gguf_test.cc).
#include "tests/model/gguf_test_util.h"

namespace focal::model {
namespace {

TEST_F(GgufModelTest, UnpermuteInvertsLlamaCppPermutation) {
  const int64_t heads = 3, head_dim = 8, cols = 5, rows = heads * head_dim;
  std::vector<float> hf(rows * cols);
  for (size_t i = 0; i < hf.size(); ++i) hf[i] = static_cast<float>(i);
  std::string raw(reinterpret_cast<const char*>(hf.data()), hf.size() * 4);
  std::string permuted = PermuteLikeLlamaCpp(raw, rows, heads);
  ASSERT_NE(permuted, raw);
  std::vector<float> back(hf.size());
  UnpermuteRopeRows(reinterpret_cast<const float*>(permuted.data()), heads, head_dim, cols,
                    back.data());
  EXPECT_EQ(back, hf);
}

// The proof of the Q/K row order: a random HF checkpoint written as llama.cpp
// writes it scores bit for bit as the safetensors original (which matches HF
// transformers: reference_parity_test), and not at all without the
// permutation undone.
class GgufParityTest : public GgufModelTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(GgufParityTest, SameLogProbsAsSafetensors) {
  const std::string hf_dir = ModelPath(GetParam());
  const std::string gguf_path = WriteBytes(ConvertToGguf(hf_dir).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf_dir));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto gg, Load(gguf_path));
  EXPECT_EQ(gg->config().Variant(), st->config().Variant());
  EXPECT_EQ(gg->config().tie_word_embeddings, st->config().tie_word_embeddings);
  EXPECT_EQ(gg->weights().num_parameters, st->weights().num_parameters);
  ASSERT_NE(gg->gguf(), nullptr);
  EXPECT_EQ(st->gguf(), nullptr);
  const std::vector<int32_t> tokens = RandomTokens(st->config().vocab_size, 23);
  const std::vector<double> want = LogProbs(*st, tokens);
  const std::vector<double> got = LogProbs(*gg, tokens);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(std::isfinite(want[i]));
    EXPECT_EQ(got[i], want[i]) << "position " << i + 1;
  }
}

TEST_P(GgufParityTest, WrongWithoutThePermutation) {
  const std::string hf_dir = ModelPath(GetParam());
  const std::string gguf_path = WriteBytes(ConvertToGguf(hf_dir, {.permute = false}).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf_dir));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto gg, Load(gguf_path));
  const std::vector<int32_t> tokens = RandomTokens(st->config().vocab_size, 23);
  const std::vector<double> want = LogProbs(*st, tokens);
  const std::vector<double> got = LogProbs(*gg, tokens);
  double max_diff = 0;
  for (size_t i = 0; i < want.size(); ++i)
    max_diff = std::max(max_diff, std::abs(got[i] - want[i]));
  EXPECT_GT(max_diff, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Models, GgufParityTest,
                         ::testing::Values("gqa_untied",            // F32, GQA 4/2
                                           "f16_linear_rope",       // F16, tied, linear RoPE
                                           "bf16_headdim_sharded",  // BF16, head_dim 24
                                           "focal_const_per_layer", "focal_learned_token",
                                           "focal_learned_mean"));

TEST_F(GgufModelTest, QuantizedWeightsLoadDequantized) {
  // Q8_0 blocks written for every 2-D weight: the model loads, its tensors
  // are exactly the blocks' dequantized values, and it scores finitely.
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"));
  std::mt19937 rng(5);
  for (GgufBuilder::Tensor& t : b.tensors()) {
    if (t.dims.size() != 2 || t.dims[0] % 32 != 0) continue;
    const uint64_t blocks = t.dims[0] * t.dims[1] / 32;
    std::string q(blocks * 34, '\0');
    for (uint64_t i = 0; i < blocks; ++i) {
      const uint16_t d = 0x2000 + static_cast<uint16_t>(rng() % 256);  // ~0.008
      std::memcpy(&q[i * 34], &d, 2);
      for (int j = 0; j < 32; ++j) q[i * 34 + 2 + j] = static_cast<char>(rng());
    }
    t.type = kQ8_0;
    t.data = q;
  }
  const std::string path = WriteBytes(b.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, GgufFile::Open(path));
  const TensorInfo* v = m->store().Find("model.layers.1.self_attn.v_proj.weight");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->source_name, "blk.1.attn_v.weight");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<float> want,
                             DequantizeTensor(*f->FindTensor("blk.1.attn_v.weight"), path));
  ASSERT_EQ(v->bytes, want.size() * 4);
  // Dequantized as it was uploaded, not kept by the store; the exact CPU
  // mode uses the values in place.
  EXPECT_EQ(v->data, nullptr);
  const kernels::Tensor& wv = m->weights().layers[1].wv.tensor();
  ASSERT_EQ(wv.dtype, kernels::DType::kF32);
  EXPECT_EQ(std::memcmp(wv.data, want.data(), v->bytes), 0);
  for (double lp : LogProbs(*m, RandomTokens(320, 12))) EXPECT_TRUE(std::isfinite(lp));
}

TEST_F(GgufModelTest, LoadsFromFileOrDirectory) {
  const std::string bytes = ConvertToGguf(ModelPath("gqa_untied")).Build();
  const std::string dir = testing::MakeTempDir("gguf_dir");
  testing::WriteStringToFile(dir + "/tiny.gguf", bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto by_dir, Load(dir));
  ASSERT_NE(by_dir->gguf(), nullptr);
  EXPECT_EQ(by_dir->gguf()->path(), dir + "/tiny.gguf");
  EXPECT_EQ(by_dir->tokenizer(), nullptr);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto by_file, Load(dir + "/tiny.gguf"));
  EXPECT_EQ(by_file->dir(), dir + "/tiny.gguf");
  // The weights' identity is the GGUF file's bytes.
  Sha256 h;
  h.Update(bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(std::string sha, WeightsSha256(by_file->store()));
  EXPECT_EQ(sha, h.HexDigest());
  EXPECT_THAT(by_file->store().files(), ElementsAre(dir + "/tiny.gguf"));

  testing::WriteStringToFile(dir + "/other.gguf", bytes);
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("holds 2 .gguf files"),
                                        HasSubstr("other.gguf, tiny.gguf"))));
  // config.json present: the directory is an HF checkpoint, GGUF files aside.
  const std::string hf = testing::CopyDirToTemp(ModelPath("gqa_untied"), "hf_gguf");
  testing::WriteStringToFile(hf + "/tiny.gguf", bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf));
  EXPECT_EQ(st->gguf(), nullptr);
  // A file that is not a GGUF checkpoint.
  EXPECT_THAT(Load(hf + "/config.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a .gguf checkpoint")));
  EXPECT_THAT(Load("/no/such/model.gguf"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/model.gguf")));
}

// "gpt2" (byte-level BPE) vocabularies load (smollm2_test); so do "llama"
// (sentencepiece) ones with scores (gguf_llama_tokenizer_test has the
// goldens); one without scores is bad metadata, an error even when no
// tokenizer is required.
TEST_F(GgufModelTest, SentencePieceTokenizerLoadsWithScores) {
  std::vector<float> scores(320);
  for (int i = 0; i < 320; ++i) scores[i] = -static_cast<float>(i);
  // Without "<s>", "</s>", "<unk>" transformers appends them after the
  // vocabulary: ids the model does not have, refused by name.
  GgufBuilder t_names = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
  t_names.AddF32Array("tokenizer.ggml.scores", scores);
  EXPECT_THAT(Load(WriteBytes(t_names.Build())),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tokenizer has 323 pieces but the GGUF's vocab size is 320")));

  GgufBuilder with_scores =
      ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true, .llama_specials = true});
  with_scores.AddF32Array("tokenizer.ggml.scores", scores);
  const std::string path = WriteBytes(with_scores.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, /*require_tokenizer=*/true));
  ASSERT_NE(m->tokenizer(), nullptr);
  EXPECT_EQ(m->tokenizer()->vocab_size(), 320);
  EXPECT_TRUE(m->tokenizer()->adds_bos());
  EXPECT_THAT(*m->tokenizer()->Encode("", /*add_bos=*/true), ElementsAre(1));

  const std::string no_scores =
      WriteBytes(ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true}).Build());
  for (bool require : {false, true}) {
    EXPECT_THAT(
        Load(no_scores, require),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(no_scores), HasSubstr("tokenizer.ggml.scores is missing"))));
  }
  const std::string no_tok = WriteBytes(ConvertToGguf(ModelPath("gqa_untied")).Build());
  EXPECT_THAT(Load(no_tok, /*require_tokenizer=*/true),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("GGUF has no tokenizer")));
}

// A gpt2 vocabulary whose pre-tokenizer we lack: the model still loads where
// the tokenizer is optional (inspect, which validates only), and is refused
// by name where one is needed.
TEST_F(GgufModelTest, UnknownPreTokenizerLeavesTheModelLoadableWithoutATokenizer) {
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"));
  b.AddString("tokenizer.ggml.model", "gpt2");
  b.AddString("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string> tokens = {"a", "b", "ab"};
  while (tokens.size() < 320) tokens.push_back(absl::StrCat("t", tokens.size()));  // vocab_size
  b.AddStringArray("tokenizer.ggml.tokens", tokens);
  b.AddStringArray("tokenizer.ggml.merges", {"a b"});
  const std::string path = WriteBytes(b.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, /*require_tokenizer=*/false,
                                          /*validate_only=*/true));
  EXPECT_EQ(m->tokenizer(), nullptr);
  EXPECT_THAT(Load(path, /*require_tokenizer=*/true),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr(path), HasSubstr("tokenizer.ggml.pre 'qwen2'"))));
}

TEST_F(GgufModelTest, ValidateOnlyDequantizesNothing) {
  const std::string path = WriteBytes(ConvertToGguf(ModelPath("focal_learned_token")).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, false, /*validate_only=*/true));
  EXPECT_EQ(m->weights().embed.tensor().data, nullptr);
  EXPECT_GT(m->weights().num_parameters, 0);
  EXPECT_EQ(m->store().Find("model.embed_tokens.weight")->data, nullptr);
}

TEST_F(GgufModelTest, TensorErrorsNameTheGgufTensor) {
  const std::string hf = ModelPath("gqa_untied");
  {
    GgufBuilder b = ConvertToGguf(hf);
    auto& ts = b.tensors();
    ts.erase(std::remove_if(ts.begin(), ts.end(),
                            [](const auto& t) { return t.name == "blk.1.attn_v.weight"; }),
             ts.end());
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kNotFound,
                         AllOf(HasSubstr("model.gguf"),
                               HasSubstr("GGUF is missing tensor 'blk.1.attn_v.weight'"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.0.attn_q.bias", {64}, std::vector<float>(64));
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("unexpected tensor 'blk.0.attn_q.bias'"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.2.attn_norm.weight", {64}, std::vector<float>(64));  // only 2 layers
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("unexpected tensor 'blk.2.attn_norm.weight'")));
  }
  {
    // A second spelling of layer 1 placed first would have been taken for
    // it, and the real tensor silently dropped.
    GgufBuilder b = ConvertToGguf(hf);
    auto& ts = b.tensors();
    const auto real = std::find_if(
        ts.begin(), ts.end(), [](const auto& t) { return t.name == "blk.1.attn_norm.weight"; });
    ASSERT_NE(real, ts.end());
    auto twin = *real;
    twin.name = "blk.01.attn_norm.weight";
    ts.insert(ts.begin(), twin);
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("unexpected tensor 'blk.01.attn_norm.weight'")));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    for (auto& t : b.tensors()) {
      if (t.name == "blk.0.ffn_up.weight") {
        t.dims = {64, 170};
        t.data.resize(64 * 170 * 4);
      }
    }
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("tensor 'blk.0.ffn_up.weight'"),
                               HasSubstr("has shape [170, 64]"), HasSubstr("[172, 64]"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    for (auto& t : b.tensors()) {
      if (t.name == "blk.0.attn_v.weight") {
        t.type = kQ2_K;
        t.dims = {256, 8};
        t.data.assign(8 * 84, '\0');
      }
    }
    EXPECT_THAT(Load(WriteBytes(b.Build()), false, /*validate_only=*/true),
                StatusIs(absl::StatusCode::kUnimplemented,
                         AllOf(HasSubstr("tensor 'blk.0.attn_v.weight' has type Q2_K"),
                               HasSubstr("cannot be dequantized"))));
  }
  {
    // Learned-focal tensors in a file without the learned mode.
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.0.attn_focal_tau.weight", {64}, std::vector<float>(64));
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("'blk.0.attn_focal_tau.weight'"),
                               HasSubstr("focal_attention.mode = \"learned\""))));
  }
  {
    // Learned mode without the tau tensors.
    GgufBuilder b = ConvertToGguf(hf);
    b.AddString("focal_attention.mode", "learned");
    b.AddF32("focal_attention.tau_min", 5);
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kNotFound,
                         HasSubstr("missing tensor 'blk.0.attn_focal_tau.weight'")));
  }
}

TEST_F(GgufModelTest, RetrofitOfLearnedGgufIgnoresTau) {
  const std::string path = WriteBytes(ConvertToGguf(ModelPath("focal_learned_token")).Build());
  LoadOptions o;
  o.require_tokenizer = false;
  o.focal_temperature = 0.4;
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, LanguageModel::Load(path, backend_, o));
  EXPECT_EQ(m->config().Variant(), "focal(t=0.4, retrofit)");
}

// The shared tiny random Llama 2 (F16, GGUF v3, converted by llama.cpp).
TEST_F(GgufModelTest, SharedTinyRandomLlama2) {
  const std::string path =
      testing::SharedPath("models/tiny-random-llama-2-gguf/llama-2-tiny-random.gguf");
  FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, GgufFile::Open(path));
  EXPECT_EQ(f->version(), 3u);
  FOCAL_ASSERT_OK_AND_ASSIGN(GgufTokenizerData tok, ReadGgufTokenizer(*f));
  EXPECT_EQ(tok.model, "llama");
  EXPECT_EQ(tok.tokens.size(), 32000u);
  EXPECT_EQ(tok.scores.size(), 32000u);
  EXPECT_EQ(tok.bos_id, 1);
  EXPECT_EQ(tok.eos_id, 2);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path));
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.hidden_size, 8);
  EXPECT_EQ(c.intermediate_size, 32);
  EXPECT_EQ(c.num_layers, 1);
  EXPECT_EQ(c.num_heads, 2);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 4);
  EXPECT_EQ(c.vocab_size, 32000);
  EXPECT_EQ(c.max_position_embeddings, 4096);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(m->weights().num_parameters, 2 * 32000 * 8 + 4 * 64 + 3 * 8 * 32 + 3 * 8);
  // Dequantized F16 values are exactly the file's halves.
  const kernels::Tensor& q = m->weights().layers[0].wv.tensor();
  ASSERT_EQ(q.dtype, kernels::DType::kF32);
  const GgufTensor* raw = f->FindTensor("blk.0.attn_v.weight");
  for (int i = 0; i < 64; ++i) {
    uint16_t h;
    std::memcpy(&h, raw->data + 2 * i, 2);
    float v;
    std::memcpy(&v, static_cast<const char*>(q.data) + 4 * i, 4);
    EXPECT_EQ(v, kernels::F16ToF32(h));
  }
  const std::vector<double> lp = LogProbs(*m, {1, 15043, 29892, 3186, 29991, 2});
  ASSERT_EQ(lp.size(), 5u);
  for (double x : lp) {
    EXPECT_TRUE(std::isfinite(x));
    EXPECT_LT(x, 0);
  }
  // Its Llama 2 vocabulary loads (ids checked in gguf_llama_tokenizer_test),
  // and the model scores our texts as HF's LlamaForCausalLM loaded from the
  // same file does (tests/reference/make_gguf_llama_tokenizer_reference.py).
  FOCAL_ASSERT_OK_AND_ASSIGN(auto with_tok, Load(path, /*require_tokenizer=*/true));
  ASSERT_NE(with_tok->tokenizer(), nullptr);
  EXPECT_THAT(*with_tok->tokenizer()->Encode("Hello world!", true),
              ElementsAre(1, 15043, 3186, 29991));
  const std::vector<testing::GoldenSequence> golden =
      testing::ReadGoldenLogprobs(testing::GoldenPath("forward/gguf_tiny_random_llama2.txt"));
  ASSERT_EQ(golden.size(), 3u);
  double max_diff = 0;
  for (const testing::GoldenSequence& g : golden) {
    const std::vector<double> got = LogProbs(*with_tok, g.tokens);
    ASSERT_EQ(got.size(), g.logprob.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], g.logprob[i], 1e-4) << "position " << i + 1;
      max_diff = std::max(max_diff, std::abs(got[i] - g.logprob[i]));
    }
  }
  std::cout << "max |logprob - HF| over the golden: " << max_diff << "\n";
}

}  // namespace
}  // namespace focal::model
