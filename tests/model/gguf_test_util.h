// SPDX-License-Identifier: Apache-2.0
// Shared by the GGUF test sources (gguf_test*.cc, one binary): byte-level
// helpers, a small valid file, a llama header, a converter that writes an HF
// checkpoint as llama.cpp's converter does, and the model-loading fixture.
#ifndef FOCAL_TESTS_MODEL_GGUF_TEST_UTIL_H_
#define FOCAL_TESTS_MODEL_GGUF_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dtype.h"
#include "model/config.h"
#include "model/dequant.h"
#include "model/gguf.h"
#include "model/gguf_model.h"
#include "model/language_model.h"
#include "model/safetensors.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/gguf_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {

// Test-only header: the GGUF tests use these names unqualified.
using ::focal::testing::GgufBuilder;
using ::focal::testing::GgufStr;
using ::focal::testing::GgufU32;
using ::focal::testing::GgufU64;
using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

inline constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kQ2_K = 10, kBF16 = 30;

inline std::string WriteBytes(const std::string& bytes, const std::string& name = "model.gguf") {
  std::string path = testing::MakeTempDir("gguf") + "/" + name;
  testing::WriteStringToFile(path, bytes);
  return path;
}

inline absl::StatusOr<std::unique_ptr<GgufFile>> OpenBytes(const std::string& bytes) {
  return GgufFile::Open(WriteBytes(bytes));
}

inline std::vector<float> Iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// A valid file: a few metadata entries and two F32 tensors, the last ending
// exactly at the end of the file (no trailing padding), so every proper
// prefix is damaged.
inline GgufBuilder Small() {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", 2);
  b.AddStringArray("tokenizer.ggml.tokens", {"<unk>", "a", "bc"});
  b.AddF32Array("tokenizer.ggml.scores", {0, -1, -2});
  b.AddF32Tensor("a", {2, 3}, Iota(6));
  b.AddF32Tensor("b", {8}, Iota(8, 10));
  return b;
}

// The metadata a llama GGUF must have, with small sizes: a start for tests
// of the config and tensor checks.
inline GgufBuilder LlamaHeader(uint32_t layers, uint32_t width, uint32_t heads, uint32_t context) {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", layers);
  b.AddU32("llama.context_length", context);
  b.AddU32("llama.embedding_length", width);
  b.AddU32("llama.feed_forward_length", width);
  b.AddU32("llama.attention.head_count", heads);
  b.AddF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  return b;
}

// --- Llama checkpoints -----------------------------------------------------------

// HF -> GGUF tensor names, written out independently of gguf_model.cc's table.
inline std::string GgufName(const std::string& hf) {
  static const std::map<std::string, std::string> kGlobal = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"}};
  static const std::map<std::string, std::string> kLayer = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
      {"self_attn.focal_tau.weight", "attn_focal_tau.weight"},
      {"self_attn.focal_tau.bias", "attn_focal_tau.bias"}};
  if (auto it = kGlobal.find(hf); it != kGlobal.end()) return it->second;
  std::vector<std::string> parts = absl::StrSplit(hf, absl::MaxSplits('.', 3));
  EXPECT_EQ(parts.size(), 4u) << hf;
  EXPECT_EQ(parts[0] + "." + parts[1], "model.layers") << hf;
  auto it = kLayer.find(parts[3]);
  EXPECT_NE(it, kLayer.end()) << hf;
  return absl::StrCat("blk.", parts[2], ".", it->second);
}

// llama.cpp's converter: w.reshape(n_head, 2, rows / n_head / 2, cols)
// .swapaxes(1, 2).reshape(rows, cols), i.e. out[h][i][j] = in[h][j][i] over
// (head, half-index, half) row indices.
inline std::string PermuteLikeLlamaCpp(const std::string& raw, int64_t rows, int64_t n_head) {
  const size_t row_bytes = raw.size() / rows;
  const int64_t half = rows / n_head / 2;
  std::string out(raw.size(), '\0');
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t out_row = (h * half + i) * 2 + j;
        const int64_t in_row = (h * 2 + j) * half + i;
        out.replace(out_row * row_bytes, row_bytes, raw, in_row * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

struct ConvertOptions {
  bool permute = true;
  bool vocab_from_tokens = false;  // write a token list instead of llama.vocab_size
  bool llama_specials = false;     // that list starts <unk> <s> </s>, not t0 t1 t2
};

// Writes the HF checkpoint `hf_dir` as a llama GGUF, as llama.cpp's converter
// would (metadata keys, names, permuted Q/K rows, tied output omitted), with
// focal attention in our focal_attention.* convention.
inline GgufBuilder ConvertToGguf(const std::string& hf_dir, const ConvertOptions& o = {}) {
  GgufBuilder b;
  auto config = LoadModelConfig(hf_dir);
  EXPECT_TRUE(config.ok()) << config.status();
  auto store = TensorStore::OpenDir(hf_dir);
  EXPECT_TRUE(store.ok()) << store.status();
  const ModelConfig& c = *config;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", static_cast<uint32_t>(c.num_layers));
  b.AddU32("llama.context_length", static_cast<uint32_t>(c.max_position_embeddings));
  b.AddU32("llama.embedding_length", static_cast<uint32_t>(c.hidden_size));
  b.AddU32("llama.feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
  b.AddU32("llama.attention.head_count", static_cast<uint32_t>(c.num_heads));
  b.AddU32("llama.attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
  b.AddF32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  b.AddF32("llama.rope.freq_base", static_cast<float>(c.rope_theta));
  b.AddU32("llama.rope.dimension_count", static_cast<uint32_t>(c.head_dim));
  if (c.head_dim * c.num_heads != c.hidden_size) {
    b.AddU32("llama.attention.key_length", static_cast<uint32_t>(c.head_dim));
  }
  if (c.rope_scaling.type == RopeScaling::Type::kLinear) {
    b.AddString("llama.rope.scaling.type", "linear");
    b.AddF32("llama.rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
  }
  if (o.vocab_from_tokens) {
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < c.vocab_size; ++i) tokens.push_back(absl::StrCat("t", i));
    if (o.llama_specials) {
      tokens[0] = "<unk>";
      tokens[1] = "<s>";
      tokens[2] = "</s>";
    }
    b.AddString("tokenizer.ggml.model", "llama");
    b.AddStringArray("tokenizer.ggml.tokens", tokens);
  } else {
    b.AddU32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  }
  if (c.bos_token_id.has_value()) {
    b.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*c.bos_token_id));
  }
  if (!c.eos_token_ids.empty()) {
    b.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(c.eos_token_ids[0]));
  }
  if (c.focal.mode == FocalConfig::Mode::kConstant) {
    b.AddString("focal_attention.mode", "constant");
    // float64 keeps config.json's temperatures exactly.
    if (c.focal.temperature.size() == 1) {
      b.AddF64("focal_attention.temperature", c.focal.temperature[0]);
    } else {
      b.AddF64Array("focal_attention.temperature", c.focal.temperature);
    }
  } else if (c.focal.mode == FocalConfig::Mode::kLearned) {
    b.AddString("focal_attention.mode", "learned");
    b.AddF64("focal_attention.tau_min", c.focal.tau_min);
    if (c.focal.tau_max.has_value()) b.AddF64("focal_attention.tau_max", *c.focal.tau_max);
    b.AddString("focal_attention.reduction",
                c.focal.reduction == FocalConfig::Reduction::kToken ? "token" : "sequence_mean");
  }
  for (const auto& [name, info] : store->tensors()) {
    if (c.tie_word_embeddings && name == "lm_head.weight") continue;
    std::string raw(reinterpret_cast<const char*>(info.data), info.bytes);
    const int64_t rows = info.shape[0];
    if (o.permute && absl::EndsWith(name, "q_proj.weight")) {
      raw = PermuteLikeLlamaCpp(raw, rows, c.num_heads);
    } else if (o.permute && absl::EndsWith(name, "k_proj.weight")) {
      raw = PermuteLikeLlamaCpp(raw, rows, c.num_kv_heads);
    }
    const uint32_t type = info.dtype == "F32" ? kF32 : info.dtype == "F16" ? kF16 : kBF16;
    b.AddTensor(GgufName(name), type, std::vector<uint64_t>(info.shape.rbegin(), info.shape.rend()),
                raw);
  }
  return b;
}

inline std::string ModelPath(const std::string& name) {
  return testing::SourcePath("tests/testdata/models/" + name);
}

class GgufModelTest : public ::testing::Test {
 protected:
  kernels::CpuBackend backend_{2};

  absl::StatusOr<std::unique_ptr<LanguageModel>> Load(const std::string& path,
                                                      bool require_tokenizer = false,
                                                      bool validate_only = false) {
    LoadOptions o;
    o.require_tokenizer = require_tokenizer;
    o.validate_only = validate_only;
    return LanguageModel::Load(path, backend_, o);
  }

  // Log-probabilities of every token after the first.
  std::vector<double> LogProbs(LanguageModel& m, const std::vector<int32_t>& tokens) {
    Transformer& tf = m.transformer();
    auto cache = tf.NewCache(static_cast<int64_t>(tokens.size()));
    EXPECT_TRUE(cache.ok());
    std::vector<int64_t> rows;
    std::vector<int32_t> targets;
    for (size_t i = 1; i < tokens.size(); ++i) {
      rows.push_back(static_cast<int64_t>(i) - 1);
      targets.push_back(tokens[i]);
    }
    std::vector<SeqInput> batch = {{&*cache, tokens, rows, targets}};
    std::vector<std::vector<TokenScore>> out;
    absl::Status s = tf.Forward(batch, out);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<double> lp;
    for (const TokenScore& t : out.at(0)) lp.push_back(t.logprob);
    return lp;
  }

  std::vector<int32_t> RandomTokens(int64_t vocab, int n) {
    std::mt19937 rng(11);
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = static_cast<int32_t>(rng() % vocab);
    return t;
  }
};

}  // namespace focal::model

#endif  // FOCAL_TESTS_MODEL_GGUF_TEST_UTIL_H_
