// SPDX-License-Identifier: Apache-2.0
// Whole-directory loading and its error messages: every bad input names the
// file and the field or tensor.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "model/safetensors_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kGqa = "tests/testdata/models/gqa_untied";

std::map<std::string, F32Tensor> ReadF32(const std::string& dir) {
  auto store = TensorStore::OpenDir(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  std::map<std::string, F32Tensor> out;
  for (const auto& [name, info] : store->tensors()) {
    EXPECT_EQ(info.dtype, "F32");
    F32Tensor t{info.shape, std::vector<float>(info.bytes / 4)};
    std::memcpy(t.data.data(), info.data, info.bytes);
    out[name] = std::move(t);
  }
  return out;
}

class ModelLoadingTest : public ::testing::Test {
 protected:
  kernels::CpuBackend backend_{2};

  absl::StatusOr<std::unique_ptr<LanguageModel>> Load(const std::string& dir,
                                                      bool require_tokenizer = false) {
    LoadOptions o;
    o.require_tokenizer = require_tokenizer;
    return LanguageModel::Load(dir, backend_, o);
  }
  std::string Copy() { return testing::CopyDirToTemp(testing::SourcePath(kGqa), "load"); }
  void EditConfig(const std::string& dir, const std::string& from, const std::string& to) {
    std::string cfg = testing::ReadFileOrDie(dir + "/config.json");
    ASSERT_NE(cfg.find(from), std::string::npos) << from;
    testing::WriteStringToFile(dir + "/config.json", absl::StrReplaceAll(cfg, {{from, to}}));
  }
};

TEST_F(ModelLoadingTest, LoadsAndCountsParameters) {
  auto m = Load(testing::SourcePath(kGqa));
  ASSERT_TRUE(m.ok()) << m.status();
  const ModelConfig& c = (*m)->config();
  const int64_t expect =
      2 * 320 * 64 + 64 + 2 * (2 * 64 + 64 * 64 * 2 + 2 * 32 * 64 + 3 * 172 * 64);
  EXPECT_EQ((*m)->weights().num_parameters, expect);
  EXPECT_EQ(c.Variant(), "base");
  EXPECT_EQ((*m)->weights().dtype, "F32");
}

TEST_F(ModelLoadingTest, ValidateOnlyChecksWithoutUploading) {
  LoadOptions o;
  o.require_tokenizer = false;
  o.validate_only = true;
  auto m = LanguageModel::Load(testing::SourcePath(kGqa), backend_, o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->weights().embed.tensor().data, nullptr);
  EXPECT_GT((*m)->weights().num_parameters, 0);
  std::string dir = Copy();
  EditConfig(dir, "\"intermediate_size\": 172", "\"intermediate_size\": 170");
  EXPECT_THAT(LanguageModel::Load(dir, backend_, o),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gate_proj")));
}

// A CPU backend that, like a device, reads only the buffers it made itself.
class PrivateMemoryBackend : public kernels::CpuBackend {
 public:
  PrivateMemoryBackend() : CpuBackend(1) {}
  std::string name() const override { return "cpu-private"; }
  bool CanUseBuffersOf(const Backend& other) const override { return &other == this; }
};

// --device cpu,cpu: the second replica runs over the first one's weights (no
// second copy in memory) and scores exactly as the first does.
TEST_F(ModelLoadingTest, TransformerOnAnotherCpuBackendSharesTheWeights) {
  auto m = Load(testing::SourcePath(kGqa));
  ASSERT_TRUE(m.ok()) << m.status();
  kernels::CpuBackend other(1);
  absl::StatusOr<std::unique_ptr<Transformer>> tf = (*m)->TransformerOn(other);
  ASSERT_TRUE(tf.ok()) << tf.status();
  EXPECT_EQ(&(*tf)->backend(), &other);
  EXPECT_EQ(&(*tf)->weights(), &(*m)->weights());

  const std::vector<int32_t> tokens = {1, 17, 250, 3, 99, 5};
  const std::vector<int64_t> rows = {0, 2, 5};
  const std::vector<int32_t> targets = {17, 3, 42};
  std::vector<std::vector<TokenScore>> scores[2];
  Transformer* tfs[2] = {&(*m)->transformer(), tf->get()};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<KvCache> cache = tfs[i]->NewCache(tokens.size());
    ASSERT_TRUE(cache.ok()) << cache.status();
    const SeqInput in{&*cache, tokens, rows, targets};
    ASSERT_TRUE(tfs[i]->Forward({in}, scores[i]).ok());
  }
  ASSERT_EQ(scores[0].size(), 1u);
  ASSERT_EQ(scores[0][0].size(), rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    EXPECT_EQ(scores[0][0][r].logprob, scores[1][0][r].logprob) << r;
    EXPECT_EQ(scores[0][0][r].argmax, scores[1][0][r].argmax) << r;
  }
}

TEST_F(ModelLoadingTest, TransformerOnABackendThatCannotReadTheWeightsIsRefused) {
  auto m = Load(testing::SourcePath(kGqa));
  ASSERT_TRUE(m.ok()) << m.status();
  PrivateMemoryBackend other;
  EXPECT_THAT((*m)->TransformerOn(other),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("gqa_untied"), HasSubstr("cpu-private"),
                             HasSubstr("load the model there"))));
}

TEST_F(ModelLoadingTest, ShapeMismatchNamesTensor) {
  std::string dir = Copy();
  EditConfig(dir, "\"intermediate_size\": 172", "\"intermediate_size\": 170");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("model.safetensors"),
                                        HasSubstr("'model.layers.0.mlp.gate_proj.weight'"),
                                        HasSubstr("[172, 64]"), HasSubstr("[170, 64]"))));
}

TEST_F(ModelLoadingTest, MissingTensorNamed) {
  std::string dir = Copy();
  auto t = ReadF32(dir);
  t.erase("model.layers.1.self_attn.v_proj.weight");
  FOCAL_ASSERT_OK(WriteSafetensors(dir + "/model.safetensors", t));
  EXPECT_THAT(Load(dir),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr(dir + "/model.safetensors: checkpoint is missing"),
                             HasSubstr("missing tensor "
                                       "'model.layers.1.self_attn.v_proj.weight'"))));
}

TEST_F(ModelLoadingTest, UnexpectedTensorNamed) {
  std::string dir = Copy();
  auto t = ReadF32(dir);
  t["model.layers.0.extra.weight"] = {{2}, {1, 2}};
  FOCAL_ASSERT_OK(WriteSafetensors(dir + "/model.safetensors", t));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("unexpected tensor 'model.layers.0.extra.weight'")));
  t.erase("model.layers.0.extra.weight");
  t["model.layers.0.self_attn.focal_tau.weight"] = {{64}, std::vector<float>(64)};
  FOCAL_ASSERT_OK(WriteSafetensors(dir + "/model.safetensors", t));
  EXPECT_THAT(Load(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("focal_tau.weight"), HasSubstr("focal_attention"))));
}

TEST_F(ModelLoadingTest, MissingConfigField) {
  std::string dir = Copy();
  EditConfig(dir, "\"hidden_size\": 64,", "");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("config.json"),
                                        HasSubstr("field 'hidden_size' is missing"))));
}

// Found while fuzzing config.json (tests/fuzz/fuzz_config, input written by
// hand, UBSan): num_attention_heads * head_dim overflowed int64 in
// LoadLlamaWeights before any tensor was compared.
TEST_F(ModelLoadingTest, HugeHeadCountIsAnErrorNotAnOverflow) {
  std::string dir = Copy();
  EditConfig(dir, "\"num_attention_heads\": 4,",
             "\"num_attention_heads\": 4611686018427387904, \"head_dim\": 4,");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("num_attention_heads (4611686018427387904) times "
                                            "head_dim (4) is too large")));
}

TEST_F(ModelLoadingTest, BadFocalConfig) {
  std::string dir = Copy();
  EditConfig(dir, "\"torch_dtype\"",
             "\"focal_attention\": {\"mode\": \"constant\", \"temperature\": 0}, \"torch_dtype\"");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("config.json"),
                                        HasSubstr("'focal_attention.temperature' must be > 0"))));
}

TEST_F(ModelLoadingTest, LearnedFocalWithoutTauWeights) {
  std::string dir = Copy();
  EditConfig(dir, "\"torch_dtype\"",
             "\"focal_attention\": {\"mode\": \"learned\", \"tau_min\": 5}, \"torch_dtype\"");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kNotFound,
                                  HasSubstr("'model.layers.0.self_attn.focal_tau.weight'")));
}

TEST_F(ModelLoadingTest, WrongTauShape) {
  std::string dir = testing::CopyDirToTemp(
      testing::SourcePath("tests/testdata/models/focal_learned_token"), "tau");
  auto t = ReadF32(dir);
  t["model.layers.1.self_attn.focal_tau.bias"] = {{2}, {1, 2}};
  FOCAL_ASSERT_OK(WriteSafetensors(dir + "/model.safetensors", t));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("'model.layers.1.self_attn.focal_tau.bias'"),
                                        HasSubstr("expected [1]"))));
}

TEST_F(ModelLoadingTest, RetrofitOfLearnedCheckpointIgnoresTau) {
  LoadOptions o;
  o.require_tokenizer = false;
  o.focal_temperature = 0.4;
  auto m = LanguageModel::Load(testing::SourcePath("tests/testdata/models/focal_learned_token"),
                               backend_, o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->config().Variant(), "focal(t=0.4, retrofit)");
}

TEST_F(ModelLoadingTest, MissingTokenizer) {
  EXPECT_THAT(Load(testing::SourcePath(kGqa), /*require_tokenizer=*/true),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no tokenizer.model")));
}

TEST_F(ModelLoadingTest, CorruptTokenizer) {
  std::string dir = Copy();
  testing::WriteStringToFile(dir + "/tokenizer.model", "not a sentencepiece model");
  EXPECT_THAT(Load(dir, true),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(dir + "/tokenizer.model")));
}

TEST_F(ModelLoadingTest, NonExistentPathAndMissingConfig) {
  EXPECT_THAT(Load("/no/such/model"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/model")));
  std::string dir = Copy();
  std::remove((dir + "/config.json").c_str());
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kNotFound, HasSubstr("config.json")));
  std::string empty = testing::MakeTempDir("empty");
  testing::WriteStringToFile(empty + "/config.json",
                             testing::ReadFileOrDie(testing::SourcePath(kGqa + "/config.json")));
  EXPECT_THAT(Load(empty),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("neither model.safetensors nor")));
}

TEST_F(ModelLoadingTest, TruncatedWeightsFile) {
  std::string dir = Copy();
  std::string w = testing::ReadFileOrDie(dir + "/model.safetensors");
  testing::WriteStringToFile(dir + "/model.safetensors", w.substr(0, w.size() - 100));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kDataLoss,
                                  AllOf(HasSubstr("model.safetensors"), HasSubstr("truncated"))));
}

}  // namespace
}  // namespace focal::model
