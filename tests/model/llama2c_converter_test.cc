// SPDX-License-Identifier: Apache-2.0
#include "model/tools/llama2c_converter.h"

#include <cstring>
#include <filesystem>
#include <random>

#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/language_model.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A 512-piece sentencepiece model (stories260K's, converted by the build).
std::string Tok() { return testing::Stories260KDir() + "/tokenizer.model"; }

// A random legacy llama2.c checkpoint: C 16, F 24, L 1, H 4, Hkv 2, V 512, seq 32.
std::string MakeBin(std::vector<float>* weights, bool shared = true) {
  const int32_t hdr[7] = {16, 24, 1, 4, 2, shared ? 512 : -512, 32};
  const int64_t C = 16, F = 24, V = 512, KV = 8, D = 4;
  const int64_t n =
      V * C + C + C * C + 2 * KV * C + C * C + C + 3 * F * C + C + 32 * D + (shared ? 0 : V * C);
  weights->resize(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  for (float& w : *weights) w = d(rng);
  std::string out(reinterpret_cast<const char*>(hdr), sizeof(hdr));
  out.append(reinterpret_cast<const char*>(weights->data()), n * 4);
  return out;
}

TEST(Llama2cConverterTest, PermutesQkRowsToRotateHalf) {
  std::vector<float> w;
  std::string dir = testing::MakeTempDir("l2c");
  testing::WriteStringToFile(dir + "/m.bin", MakeBin(&w));
  FOCAL_ASSERT_OK(ConvertLlama2c(dir + "/m.bin", Tok(), dir + "/out"));
  auto store = TensorStore::OpenDir(dir + "/out");
  ASSERT_TRUE(store.ok()) << store.status();
  const int64_t C = 16, V = 512;
  const float* wq_src = w.data() + V * C + C;  // after embeddings and rms_att
  const TensorInfo* q = store->Find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  const float* wq = reinterpret_cast<const float*>(q->data);
  // head_dim 4: source rows (0,1,2,3) of head 0 are pairs (0,1), (2,3); HF
  // order is (0, 2, 1, 3).
  const int perm[4] = {0, 2, 1, 3};
  for (int h = 0; h < 4; ++h) {
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(std::memcmp(wq + (h * 4 + r) * C, wq_src + (h * 4 + perm[r]) * C, C * 4), 0)
          << "head " << h << " row " << r;
    }
  }
  // The directory loads as a model, tokenizer included.
  kernels::CpuBackend backend(1);
  auto m = LanguageModel::Load(dir + "/out", backend);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE((*m)->config().tie_word_embeddings);
  EXPECT_EQ((*m)->config().max_position_embeddings, 32);
}

TEST(Llama2cConverterTest, UntiedClassifier) {
  std::vector<float> w;
  std::string dir = testing::MakeTempDir("l2c");
  testing::WriteStringToFile(dir + "/m.bin", MakeBin(&w, /*shared=*/false));
  FOCAL_ASSERT_OK(ConvertLlama2c(dir + "/m.bin", Tok(), dir + "/out"));
  auto store = TensorStore::OpenDir(dir + "/out");
  ASSERT_TRUE(store.ok());
  const TensorInfo* head = store->Find("lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(std::memcmp(head->data, w.data() + w.size() - 512 * 16, 512 * 16 * 4), 0);
}

TEST(Llama2cConverterTest, BadInputs) {
  std::vector<float> w;
  std::string dir = testing::MakeTempDir("l2c");
  std::string bin = MakeBin(&w);
  testing::WriteStringToFile(dir + "/trunc.bin", bin.substr(0, bin.size() - 4));
  EXPECT_THAT(ConvertLlama2c(dir + "/trunc.bin", Tok(), dir + "/o"),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("trunc.bin"), HasSubstr("header implies"))));
  testing::WriteStringToFile(dir + "/short.bin", "abc");
  EXPECT_THAT(ConvertLlama2c(dir + "/short.bin", Tok(), dir + "/o"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("too short")));
  std::string bad = bin;
  const int32_t zero = 0;
  std::memcpy(bad.data() + 12, &zero, 4);  // n_heads = 0
  testing::WriteStringToFile(dir + "/bad.bin", bad);
  EXPECT_THAT(ConvertLlama2c(dir + "/bad.bin", Tok(), dir + "/o"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("n_heads")));
  testing::WriteStringToFile(dir + "/ok.bin", bin);
  EXPECT_THAT(ConvertLlama2c(dir + "/ok.bin", "/no/tokenizer.model", dir + "/o"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/tokenizer.model")));
  EXPECT_THAT(ConvertLlama2c("/no/model.bin", Tok(), dir + "/o"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/model.bin")));
  EXPECT_FALSE(std::filesystem::exists(dir + "/o/model.safetensors"));
}

// The conversion of the original llama2.c release is pinned file by file:
// every golden made from stories260K (HF, lm-eval, diagnostics) was made from
// exactly these bytes, and the build's copy must be them too.
TEST(Llama2cConverterTest, Stories260KConversionIsPinned) {
  const std::string bin = testing::SharedPath("models/stories260K/stories260K.bin");
  FOCAL_REQUIRE_FILE(bin, "../shared beside the source tree");
  std::string out = testing::MakeTempDir("stories");
  FOCAL_ASSERT_OK(ConvertLlama2c(bin, testing::SharedPath("models/stories260K/tok512.model"), out));
  const std::pair<const char*, const char*> kFiles[] = {
      {"config.json", "dde6edfcfb0682e74cccffb5418f167d4700d3fbfb74d624e11d2ab71385408e"},
      {"model.safetensors", "407a7c581bdd66972383ce9ad24857713fb98786d06ea564a2fe9b34ebe77dfd"},
      {"tokenizer.model", "dfff07d929db979913f166ec94a6f5ecad4c70cfed8eb5c9cbe7e464455e46f5"},
      {"tokenizer_config.json", "c50a6def63179134dc24ddffc947c4e5c058620c92df2264920603663b74bceb"},
      {"special_tokens_map.json",
       "55e710664e4c3ec1cf8feb03fd446057d867d22dd075bed864fe7f008e6f58b8"},
  };
  for (const auto& [file, sha] : kFiles) {
    EXPECT_EQ(Sha256Hex(testing::ReadFileOrDie(out + "/" + file)), sha) << file;
    EXPECT_EQ(Sha256Hex(testing::ReadFileOrDie(testing::Stories260KDir() + "/" + file)), sha)
        << "the build's copy: " << file;
  }
}

}  // namespace
}  // namespace focal::model
