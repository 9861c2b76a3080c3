// SPDX-License-Identifier: Apache-2.0
// llama2.c legacy layout (run.c): int32 dim, hidden_dim, n_layers, n_heads,
// n_kv_heads, vocab_size (negative: separate classifier), seq_len; then fp32
// token_embedding (V,C), rms_att (L,C), wq (L,C,C), wk (L,KV,C), wv (L,KV,C),
// wo (L,C,C), rms_ffn (L,C), w1 (L,F,C), w2 (L,C,F), w3 (L,F,C), rms_final (C),
// two RoPE tables (seq_len * head_size / 2 each, unused), [wcls (V,C)].
#include "model/tools/llama2c_converter.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file_util.h"
#include "base/json_writer.h"
#include "base/status_macros.h"
#include "model/safetensors_writer.h"
#include "model/sentencepiece_tokenizer.h"

namespace focal::model {
namespace {

// Meta's checkpoints rotate interleaved pairs (2i, 2i+1); HF's rotate_half
// pairs (i, i + D/2). Row h*D + 2i + j moves to h*D + j*D/2 + i (this is
// llama2.c export.py's permute_reverse done forwards).
std::vector<float> PermuteRope(const float* w, int64_t heads, int64_t rows, int64_t cols) {
  const int64_t hd = rows / heads, half = hd / 2;
  std::vector<float> out(rows * cols);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t src = h * hd + 2 * i + j, dst = h * hd + j * half + i;
        std::memcpy(&out[dst * cols], &w[src * cols], cols * sizeof(float));
      }
    }
  }
  return out;
}

}  // namespace

absl::Status ConvertLlama2c(absl::string_view model_bin, absl::string_view tokenizer_model,
                            absl::string_view out_dir) {
  FOCAL_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(model_bin));
  if (f.size() < 28) {
    return absl::DataLossError(
        absl::StrCat(model_bin, ": too short for a llama2.c header (", f.size(), " bytes)"));
  }
  int32_t hdr[7];
  std::memcpy(hdr, f.data(), sizeof(hdr));
  if (static_cast<uint32_t>(hdr[0]) == 0x616b3432u) {
    return absl::UnimplementedError(
        absl::StrCat(model_bin,
                     ": llama2.c export version >= 1 ('ak42' magic) is not supported; "
                     "export with --version 0 (legacy)"));
  }
  const int64_t C = hdr[0], F = hdr[1], L = hdr[2], H = hdr[3], Hkv = hdr[4], seq_len = hdr[6];
  const bool shared = hdr[5] > 0;
  const int64_t V = shared ? hdr[5] : -int64_t{hdr[5]};
  const char* names[] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                         "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    if (hdr[i] == 0 || (i != 5 && hdr[i] < 0) || std::abs(int64_t{hdr[i]}) > (1 << 24)) {
      return absl::DataLossError(
          absl::StrCat(model_bin, ": header field ", names[i], " = ", hdr[i], " is not plausible"));
    }
  }
  if (C % H != 0 || H % Hkv != 0 || (C / H) % 2 != 0) {
    return absl::DataLossError(absl::StrCat(model_bin, ": inconsistent heads: dim ", C,
                                            ", n_heads ", H, ", n_kv_heads ", Hkv));
  }
  const int64_t D = C / H, KV = Hkv * D;
  const int64_t expected = V * C + L * C + L * C * C + 2 * L * KV * C + L * C * C + L * C +
                           3 * L * F * C + C + seq_len * D + (shared ? 0 : V * C);
  const uint64_t want_bytes = 28 + static_cast<uint64_t>(expected) * 4;
  if (f.size() != want_bytes) {
    return absl::DataLossError(absl::StrCat(model_bin, ": file has ", f.size(),
                                            " bytes but its header implies ", want_bytes,
                                            " (truncated, or not a legacy llama2.c checkpoint)"));
  }
  // Validate the tokenizer before writing anything.
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> loaded,
                         SentencePieceTokenizer::Load(tokenizer_model));
  const Tokenizer& tok = *loaded;
  if (tok.vocab_size() != V) {
    return absl::InvalidArgumentError(absl::StrCat(tokenizer_model, " has ", tok.vocab_size(),
                                                   " pieces but ", model_bin, " has vocab ", V));
  }

  std::vector<float> all(expected);
  std::memcpy(all.data(), f.data() + 28, expected * 4);
  const float* p = all.data();
  auto take = [&](int64_t n) {
    const float* r = p;
    p += n;
    return r;
  };
  std::map<std::string, F32Tensor> t;
  auto put = [&](const std::string& name, std::vector<int64_t> shape, const float* src) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    t[name] = {std::move(shape), std::vector<float>(src, src + n)};
  };
  auto layer = [](int64_t l, const char* s) { return absl::StrCat("model.layers.", l, ".", s); };
  put("model.embed_tokens.weight", {V, C}, take(V * C));
  const float* rms_att = take(L * C);
  const float* wq = take(L * C * C);
  const float* wk = take(L * KV * C);
  const float* wv = take(L * KV * C);
  const float* wo = take(L * C * C);
  const float* rms_ffn = take(L * C);
  const float* w1 = take(L * F * C);
  const float* w2 = take(L * C * F);
  const float* w3 = take(L * F * C);
  for (int64_t l = 0; l < L; ++l) {
    put(layer(l, "input_layernorm.weight"), {C}, rms_att + l * C);
    t[layer(l, "self_attn.q_proj.weight")] = {{C, C}, PermuteRope(wq + l * C * C, H, C, C)};
    t[layer(l, "self_attn.k_proj.weight")] = {{KV, C}, PermuteRope(wk + l * KV * C, Hkv, KV, C)};
    put(layer(l, "self_attn.v_proj.weight"), {KV, C}, wv + l * KV * C);
    put(layer(l, "self_attn.o_proj.weight"), {C, C}, wo + l * C * C);
    put(layer(l, "post_attention_layernorm.weight"), {C}, rms_ffn + l * C);
    put(layer(l, "mlp.gate_proj.weight"), {F, C}, w1 + l * F * C);
    put(layer(l, "mlp.down_proj.weight"), {C, F}, w2 + l * C * F);
    put(layer(l, "mlp.up_proj.weight"), {F, C}, w3 + l * F * C);
  }
  put("model.norm.weight", {C}, take(C));
  take(seq_len * D);  // llama2.c's precomputed RoPE tables: recomputed from rope_theta
  if (!shared) put("lm_head.weight", {V, C}, take(V * C));

  std::error_code ec;
  std::filesystem::create_directories(std::string(out_dir), ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create '", out_dir, "': ", ec.message()));
  }
  const std::string dir(out_dir);
  FOCAL_RETURN_IF_ERROR(WriteSafetensors(dir + "/model.safetensors", t, {{"format", "pt"}}));
  // llama2.c models use rms eps 1e-5 and theta 10000 (run.c's constants).
  const std::string config = absl::StrFormat(
      R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": %d,
  "intermediate_size": %d,
  "num_hidden_layers": %d,
  "num_attention_heads": %d,
  "num_key_value_heads": %d,
  "head_dim": %d,
  "max_position_embeddings": %d,
  "vocab_size": %d,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "rope_scaling": null,
  "hidden_act": "silu",
  "attention_bias": false,
  "mlp_bias": false,
  "tie_word_embeddings": %s,
  "bos_token_id": %d,
  "eos_token_id": %d,
  "torch_dtype": "float32"
}
)",
      C, F, L, H, Hkv, D, seq_len, V, shared ? "true" : "false", tok.bos_id(), tok.eos_id());
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(dir + "/config.json", config));
  FOCAL_ASSIGN_OR_RETURN(std::string tok_bytes, ReadFile(tokenizer_model));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(dir + "/tokenizer.model", tok_bytes));
  // What HF's AutoTokenizer needs to build the slow/fast Llama tokenizer.
  const std::string tok_config = absl::StrFormat(
      R"({
  "tokenizer_class": "LlamaTokenizer",
  "add_bos_token": true,
  "add_eos_token": false,
  "bos_token": %s,
  "eos_token": %s,
  "unk_token": %s,
  "model_max_length": %d,
  "legacy": true,
  "clean_up_tokenization_spaces": false
}
)",
      JsonQuote(tok.IdToPiece(tok.bos_id())), JsonQuote(tok.IdToPiece(tok.eos_id())),
      JsonQuote(tok.IdToPiece(0)), seq_len);
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(dir + "/tokenizer_config.json", tok_config));
  const std::string special = absl::StrFormat(
      R"({"bos_token": %s, "eos_token": %s, "unk_token": %s}
)",
      JsonQuote(tok.IdToPiece(tok.bos_id())), JsonQuote(tok.IdToPiece(tok.eos_id())),
      JsonQuote(tok.IdToPiece(0)));
  return WriteFileAtomic(dir + "/special_tokens_map.json", special);
}

}  // namespace focal::model
