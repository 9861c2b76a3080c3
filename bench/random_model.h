// SPDX-License-Identifier: Apache-2.0
// Random-weight models of real shapes for the GPU benchmarks: timing does not
// depend on the values, so the weights are cycled from a small pool of random
// BF16 numbers (matrices ~ U(-0.03, 0.03), norms 1) and uploaded as BF16.
#ifndef FOCAL_BENCH_RANDOM_MODEL_H_
#define FOCAL_BENCH_RANDOM_MODEL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/dtype.h"
#include "model/config.h"
#include "model/weights.h"

namespace focal::bench {

using kernels::Backend;
using kernels::Buffer;
using kernels::DType;

inline focal::model::ModelConfig Llama32_1B() {
  focal::model::ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 2048;
  c.intermediate_size = 8192;
  c.num_layers = 16;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 64;
  c.vocab_size = 128256;
  c.max_position_embeddings = 131072;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 500000.0;
  c.rope_scaling.type = focal::model::RopeScaling::Type::kLlama3;
  c.rope_scaling.factor = 32.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_position_embeddings = 8192;
  c.tie_word_embeddings = true;
  c.torch_dtype = "bfloat16";
  return c;
}

// Random BF16 weights: matrices ~ U(-0.03, 0.03) (cycled from a 1M-value
// pool: the values do not matter for timing), norms 1.
class WeightMaker {
 public:
  explicit WeightMaker(Backend& be) : be_(be), pool_(1 << 20) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-0.03f, 0.03f);
    for (auto& x : pool_) x = focal::kernels::F32ToBf16(u(rng));
  }
  Buffer Matrix(int64_t rows, int64_t cols) {
    std::vector<uint16_t> h(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < h.size(); ++i) h[i] = pool_[(i + offset_) % pool_.size()];
    offset_ += 7919;
    return Upload(h, rows, cols);
  }
  Buffer Ones(int64_t cols) {
    return Upload(std::vector<uint16_t>(cols, focal::kernels::F32ToBf16(1.0f)), 1, cols);
  }

 private:
  Buffer Upload(const std::vector<uint16_t>& h, int64_t rows, int64_t cols) {
    absl::StatusOr<Buffer> b = be_.UploadWeight(h.data(), DType::kBF16, rows, cols);
    if (!b.ok()) {
      std::fprintf(stderr, "%s\n", b.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(*b);
  }
  Backend& be_;
  std::vector<uint16_t> pool_;
  size_t offset_ = 0;
};

inline focal::model::LlamaWeights RandomWeights(const focal::model::ModelConfig& c, Backend& be) {
  WeightMaker mk(be);
  focal::model::LlamaWeights w;
  const int64_t C = c.hidden_size, F = c.intermediate_size;
  const int64_t qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  w.embed = mk.Matrix(c.vocab_size, C);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    focal::model::LayerWeights lw;
    lw.input_norm = mk.Ones(C);
    lw.wq = mk.Matrix(qd, C);
    lw.wk = mk.Matrix(kvd, C);
    lw.wv = mk.Matrix(kvd, C);
    lw.wo = mk.Matrix(C, qd);
    lw.post_norm = mk.Ones(C);
    lw.w_gate = mk.Matrix(F, C);
    lw.w_up = mk.Matrix(F, C);
    lw.w_down = mk.Matrix(C, F);
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = mk.Ones(C);
  if (!c.tie_word_embeddings) w.lm_head = mk.Matrix(c.vocab_size, C);
  w.dtype = "BF16";
  w.num_parameters = c.vocab_size * C * (c.tie_word_embeddings ? 1 : 2) + C +
                     c.num_layers * (2 * C + 2 * qd * C + 2 * kvd * C + 3 * F * C);
  return w;
}

// Llama-3.1-8B: 32 layers, d=4096, 32/8 heads of 128, FFN 14336, untied.
inline focal::model::ModelConfig Llama31_8B() {
  focal::model::ModelConfig c = Llama32_1B();
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_layers = 32;
  c.head_dim = 128;
  c.rope_scaling.factor = 8.0;
  c.tie_word_embeddings = false;
  return c;
}

// SmolLM2-135M, the default model: 30 layers, d=576, 9/3 heads of 64, FFN
// 1536, 49152-token tied vocabulary, RoPE theta 1e5 without scaling.
inline focal::model::ModelConfig SmolLm2_135M() {
  focal::model::ModelConfig c = Llama32_1B();
  c.hidden_size = 576;
  c.intermediate_size = 1536;
  c.num_layers = 30;
  c.num_heads = 9;
  c.num_kv_heads = 3;
  c.head_dim = 64;
  c.vocab_size = 49152;
  c.max_position_embeddings = 8192;
  c.rope_theta = 100000.0;
  c.rope_scaling = focal::model::RopeScaling{};
  c.tie_word_embeddings = true;
  return c;
}

}  // namespace focal::bench

#endif  // FOCAL_BENCH_RANDOM_MODEL_H_
