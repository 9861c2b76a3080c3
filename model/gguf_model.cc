// SPDX-License-Identifier: Apache-2.0
#include "model/gguf_model.h"

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "model/dequant.h"

namespace focal::model {
namespace {

// Per-layer GGUF suffix -> HF suffix (after "blk.N." / "model.layers.N.").
const std::pair<const char*, const char*> kLayerNames[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
    {"attn_focal_tau.weight", "self_attn.focal_tau.weight"},
    {"attn_focal_tau.bias", "self_attn.focal_tau.bias"},
};
const std::pair<const char*, const char*> kGlobalNames[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};
const char* const kFocalKeys[] = {"mode", "temperature", "tau_min", "tau_max", "reduction"};

// Metadata reads for the config, with errors naming the file and key.
class Meta {
 public:
  explicit Meta(const GgufFile& f) : f_(f) {}

  absl::Status Error(absl::string_view key, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(f_.path(), ": metadata key '", key, "' ", what));
  }
  absl::StatusOr<int64_t> Int(absl::string_view key, std::optional<int64_t> def,
                              int64_t min_value) const {
    if (!f_.Has(key) && def.has_value()) return *def;
    FOCAL_ASSIGN_OR_RETURN(const int64_t v, f_.GetInt(key));
    if (v < min_value) return Error(key, absl::StrCat("must be >= ", min_value, ", got ", v));
    return v;
  }
  absl::StatusOr<double> Float(absl::string_view key, std::optional<double> def) const {
    if (!f_.Has(key) && def.has_value()) return *def;
    FOCAL_ASSIGN_OR_RETURN(const double v, f_.GetFloat(key));
    if (!std::isfinite(v)) return Error(key, absl::StrCat("must be finite, got ", v));
    return v;
  }

 private:
  const GgufFile& f_;
};

absl::Status ParseRopeScaling(const GgufFile& f, const Meta& m, RopeScaling& out) {
  // As llama.cpp reads it: the type defaults to linear, the factor to 1 (the
  // legacy key llama.rope.scale_linear is its older name).
  std::string type = "linear";
  if (f.Has("llama.rope.scaling.type")) {
    FOCAL_ASSIGN_OR_RETURN(type, f.GetString("llama.rope.scaling.type"));
  }
  double factor = 0;
  if (f.Has("llama.rope.scaling.factor")) {
    FOCAL_ASSIGN_OR_RETURN(factor, m.Float("llama.rope.scaling.factor", std::nullopt));
  } else if (f.Has("llama.rope.scale_linear")) {
    FOCAL_ASSIGN_OR_RETURN(factor, m.Float("llama.rope.scale_linear", std::nullopt));
  }
  if (type == "none") return absl::OkStatus();
  if (type != "linear") {
    return absl::UnimplementedError(absl::StrCat(f.path(),
                                                 ": metadata key 'llama.rope.scaling.type' = '",
                                                 type, "' is not supported (none or linear)"));
  }
  if (factor < 0) return m.Error("llama.rope.scaling.factor", "must be > 0");
  if (factor == 0 || factor == 1) return absl::OkStatus();  // no scaling
  out.type = RopeScaling::Type::kLinear;
  out.factor = factor;
  return absl::OkStatus();
}

absl::Status ParseFocal(const GgufFile& f, const Meta& m, int64_t num_layers, FocalConfig& out) {
  bool any = false;
  for (const auto& [key, unused] : f.metadata()) {
    if (!absl::StartsWith(key, "focal_attention.")) continue;
    any = true;
    const absl::string_view sub = absl::string_view(key).substr(16);
    bool known = false;
    for (const char* k : kFocalKeys) known = known || sub == k;
    if (!known) {
      return m.Error(key, absl::StrCat("is not a known focal_attention key (",
                                       absl::StrJoin(kFocalKeys, ", "), ")"));
    }
  }
  if (!any) return absl::OkStatus();
  const std::string mode_key = "focal_attention.mode";
  if (!f.Has(mode_key)) return m.Error(mode_key, "is missing (\"constant\" or \"learned\")");
  FOCAL_ASSIGN_OR_RETURN(const std::string mode, f.GetString(mode_key));
  if (mode == "constant") {
    out.mode = FocalConfig::Mode::kConstant;
    const std::string key = "focal_attention.temperature";
    const GgufValue* t = f.Find(key);
    if (t == nullptr) return m.Error(key, "is missing");
    std::vector<GgufValue> items;
    if (t->type() == GgufValueType::kArray) {
      if (static_cast<int64_t>(t->size()) != num_layers) {
        return m.Error(key, absl::StrCat("has ", t->size(), " values but the model has ",
                                         num_layers, " layers"));
      }
      for (uint64_t i = 0; i < t->size(); ++i) items.push_back(t->Element(i));
    } else {
      items.push_back(*t);
    }
    for (const GgufValue& x : items) {
      std::optional<double> v = x.AsFloat();
      if (!v.has_value()) return m.Error(key, "must be a float or an array of floats");
      if (!(*v > 0) || !std::isfinite(*v))
        return m.Error(key, absl::StrCat("must be > 0, got ", *v));
      out.temperature.push_back(*v);
    }
    for (const char* k : {"tau_min", "tau_max", "reduction"}) {
      const std::string other = absl::StrCat("focal_attention.", k);
      if (f.Has(other)) return m.Error(other, "is only valid with mode \"learned\"");
    }
    return absl::OkStatus();
  }
  if (mode == "learned") {
    out.mode = FocalConfig::Mode::kLearned;
    if (f.Has("focal_attention.temperature")) {
      return m.Error("focal_attention.temperature", "is only valid with mode \"constant\"");
    }
    FOCAL_ASSIGN_OR_RETURN(out.tau_min, m.Float("focal_attention.tau_min", std::nullopt));
    if (!(out.tau_min > 0)) {
      return m.Error("focal_attention.tau_min", absl::StrCat("must be > 0, got ", out.tau_min));
    }
    if (f.Has("focal_attention.tau_max")) {
      FOCAL_ASSIGN_OR_RETURN(const double tmax, m.Float("focal_attention.tau_max", std::nullopt));
      if (!(tmax >= out.tau_min)) return m.Error("focal_attention.tau_max", "must be >= tau_min");
      out.tau_max = tmax;
    }
    std::string red = "token";
    if (f.Has("focal_attention.reduction")) {
      FOCAL_ASSIGN_OR_RETURN(red, f.GetString("focal_attention.reduction"));
    }
    if (red == "token") {
      out.reduction = FocalConfig::Reduction::kToken;
    } else if (red == "sequence_mean") {
      out.reduction = FocalConfig::Reduction::kSequenceMean;
    } else {
      return m.Error("focal_attention.reduction",
                     absl::StrCat("must be \"token\" or \"sequence_mean\", got \"", red, "\""));
    }
    return absl::OkStatus();
  }
  return m.Error(mode_key, absl::StrCat("must be \"constant\" or \"learned\", got \"", mode, "\""));
}

// Splits "blk.N.rest" into N and rest.
bool SplitLayerName(absl::string_view name, int64_t* layer, absl::string_view* rest) {
  if (!absl::ConsumePrefix(&name, "blk.")) return false;
  const size_t dot = name.find('.');
  if (dot == absl::string_view::npos || dot == 0) return false;
  for (char c : name.substr(0, dot)) {
    if (c < '0' || c > '9') return false;
  }
  // One spelling per layer: "blk.07" would map onto the tensor of "blk.7".
  if (dot > 1 && name[0] == '0') return false;
  if (!absl::SimpleAtoi(name.substr(0, dot), layer)) return false;
  *rest = name.substr(dot + 1);
  return true;
}

}  // namespace

absl::StatusOr<ModelConfig> GgufModelConfig(const GgufFile& f) {
  Meta m(f);
  FOCAL_ASSIGN_OR_RETURN(const std::string arch, f.GetString("general.architecture"));
  if (arch != "llama") {
    return absl::UnimplementedError(
        absl::StrCat(f.path(), ": GGUF architecture '", arch, "' is not supported (llama)"));
  }
  if (f.Has("llama.expert_count")) {
    FOCAL_ASSIGN_OR_RETURN(const int64_t experts, f.GetInt("llama.expert_count"));
    if (experts > 0) {
      return absl::UnimplementedError(absl::StrCat(
          f.path(), ": mixture-of-experts (llama.expert_count = ", experts, ") is not supported"));
    }
  }
  if (f.FindTensor("rope_freqs.weight") != nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(f.path(),
                     ": tensor 'rope_freqs.weight' (llama3-style RoPE frequency factors) is not "
                     "supported"));
  }
  ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  FOCAL_ASSIGN_OR_RETURN(c.hidden_size, m.Int("llama.embedding_length", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.intermediate_size, m.Int("llama.feed_forward_length", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_layers, m.Int("llama.block_count", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_heads, m.Int("llama.attention.head_count", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_kv_heads, m.Int("llama.attention.head_count_kv", c.num_heads, 1));
  FOCAL_ASSIGN_OR_RETURN(c.max_position_embeddings, m.Int("llama.context_length", std::nullopt, 1));
  if (c.num_heads % c.num_kv_heads != 0) {
    return m.Error("llama.attention.head_count_kv",
                   absl::StrCat("(", c.num_kv_heads, ") must divide llama.attention.head_count (",
                                c.num_heads, ")"));
  }
  if (f.Has("llama.attention.key_length")) {
    FOCAL_ASSIGN_OR_RETURN(c.head_dim, m.Int("llama.attention.key_length", std::nullopt, 2));
  } else {
    if (c.hidden_size % c.num_heads != 0) {
      return m.Error("llama.embedding_length",
                     "is not divisible by llama.attention.head_count (give "
                     "llama.attention.key_length)");
    }
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) return m.Error("llama.attention.key_length", "must be even for RoPE");
  if (f.Has("llama.attention.value_length")) {
    FOCAL_ASSIGN_OR_RETURN(const int64_t vl,
                           m.Int("llama.attention.value_length", std::nullopt, 1));
    if (vl != c.head_dim) {
      return absl::UnimplementedError(
          absl::StrCat(f.path(), ": metadata key 'llama.attention.value_length' = ", vl,
                       " differs from the key length ", c.head_dim, " (not supported)"));
    }
  }
  if (f.Has("llama.rope.dimension_count")) {
    FOCAL_ASSIGN_OR_RETURN(const int64_t rd, m.Int("llama.rope.dimension_count", std::nullopt, 1));
    if (rd != c.head_dim) {
      return absl::UnimplementedError(absl::StrCat(
          f.path(), ": metadata key 'llama.rope.dimension_count' = ", rd,
          " rotates part of each head (head_dim ", c.head_dim, "); partial RoPE is not supported"));
    }
  }
  FOCAL_ASSIGN_OR_RETURN(c.rms_norm_eps,
                         m.Float("llama.attention.layer_norm_rms_epsilon", std::nullopt));
  if (!(c.rms_norm_eps > 0))
    return m.Error("llama.attention.layer_norm_rms_epsilon", "must be > 0");
  FOCAL_ASSIGN_OR_RETURN(c.rope_theta, m.Float("llama.rope.freq_base", 10000.0));
  if (!(c.rope_theta > 1)) return m.Error("llama.rope.freq_base", "must be > 1");
  FOCAL_RETURN_IF_ERROR(ParseRopeScaling(f, m, c.rope_scaling));

  // Vocabulary: the token list, else llama.vocab_size, else the embedding.
  std::optional<int64_t> from_tokens, from_key;
  if (const GgufValue* tokens = f.Find("tokenizer.ggml.tokens")) {
    if (tokens->type() != GgufValueType::kArray) {
      return m.Error("tokenizer.ggml.tokens",
                     absl::StrCat("is ", tokens->TypeString(), ", expected array[string]"));
    }
    from_tokens = static_cast<int64_t>(tokens->size());
  }
  if (f.Has("llama.vocab_size")) {
    FOCAL_ASSIGN_OR_RETURN(from_key, m.Int("llama.vocab_size", std::nullopt, 1));
  }
  if (from_tokens.has_value() && from_key.has_value() && *from_tokens != *from_key) {
    return m.Error(
        "llama.vocab_size",
        absl::StrCat("= ", *from_key, " but tokenizer.ggml.tokens has ", *from_tokens, " tokens"));
  }
  if (from_tokens.has_value()) {
    c.vocab_size = *from_tokens;
  } else if (from_key.has_value()) {
    c.vocab_size = *from_key;
  } else if (const GgufTensor* e = f.FindTensor("token_embd.weight");
             e != nullptr && e->dims.size() == 2) {
    c.vocab_size = e->dims[1];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(f.path(),
                     ": no vocabulary size (no tokenizer.ggml.tokens, llama.vocab_size or "
                     "2-D token_embd.weight)"));
  }
  if (c.vocab_size < 1) return m.Error("tokenizer.ggml.tokens", "is empty");
  c.tie_word_embeddings = f.FindTensor("output.weight") == nullptr;
  if (f.Has("tokenizer.ggml.bos_token_id")) {
    FOCAL_ASSIGN_OR_RETURN(c.bos_token_id, m.Int("tokenizer.ggml.bos_token_id", std::nullopt, 0));
  }
  if (f.Has("tokenizer.ggml.eos_token_id")) {
    FOCAL_ASSIGN_OR_RETURN(const int64_t eos,
                           m.Int("tokenizer.ggml.eos_token_id", std::nullopt, 0));
    c.eos_token_ids.push_back(eos);
  }
  FOCAL_RETURN_IF_ERROR(ParseFocal(f, m, c.num_layers, c.focal));
  return c;
}

std::optional<std::string> HfTensorName(absl::string_view gguf_name) {
  for (const auto& [g, h] : kGlobalNames) {
    if (gguf_name == g) return std::string(h);
  }
  int64_t layer;
  absl::string_view rest;
  if (!SplitLayerName(gguf_name, &layer, &rest)) return std::nullopt;
  for (const auto& [g, h] : kLayerNames) {
    if (rest == g) return absl::StrCat("model.layers.", layer, ".", h);
  }
  return std::nullopt;
}

void UnpermuteRopeRows(const float* src, int64_t n_heads, int64_t head_dim, int64_t cols,
                       float* dst) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const float* from = src + (h * head_dim + 2 * i + j) * cols;
        float* to = dst + (h * head_dim + j * half + i) * cols;
        std::memcpy(to, from, static_cast<size_t>(cols) * sizeof(float));
      }
    }
  }
}

namespace {

// The F32 values of `t` in HF's row order (`rope_heads` > 0: Q or K rows to
// put back from llama.cpp's interleaved order).
absl::StatusOr<std::vector<float>> HfOrderValues(const GgufTensor& t, const std::string& path,
                                                 int64_t rope_heads, int64_t head_dim,
                                                 int64_t cols) {
  FOCAL_ASSIGN_OR_RETURN(std::vector<float> values, DequantizeTensor(t, path));
  if (rope_heads > 0) {
    std::vector<float> hf_order(values.size());
    UnpermuteRopeRows(values.data(), rope_heads, head_dim, cols, hf_order.data());
    values.swap(hf_order);
  }
  return values;
}

}  // namespace

absl::StatusOr<TensorStore> GgufTensorStore(std::shared_ptr<const GgufFile> gguf,
                                            const ModelConfig& c, GgufData data) {
  const GgufFile& f = *gguf;
  // Tensors the config needs, named as the file names them, each checked as
  // it is named: listing them all first took gigabytes for a block_count far
  // past the file's tensors.
  const auto require = [&f](const std::string& name) {
    return f.FindTensor(name) != nullptr ? absl::OkStatus()
                                         : absl::NotFoundError(absl::StrCat(
                                               f.path(), ": GGUF is missing tensor '", name, "'"));
  };
  FOCAL_RETURN_IF_ERROR(require("token_embd.weight"));
  FOCAL_RETURN_IF_ERROR(require("output_norm.weight"));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    for (const auto& [g, h] : kLayerNames) {
      const absl::string_view suffix = g;
      if (absl::StartsWith(suffix, "attn_focal_tau")) continue;
      FOCAL_RETURN_IF_ERROR(require(absl::StrCat("blk.", l, ".", suffix)));
    }
    if (c.focal.mode == FocalConfig::Mode::kLearned) {
      FOCAL_RETURN_IF_ERROR(require(absl::StrCat("blk.", l, ".attn_focal_tau.weight")));
    }
  }

  struct Owned {
    std::shared_ptr<const GgufFile> file;
    std::vector<std::vector<float>> buffers;
  };
  auto owned = std::make_shared<Owned>();
  owned->file = gguf;
  std::map<std::string, TensorInfo> out;
  for (const GgufTensor& t : f.tensors()) {
    std::optional<std::string> hf = HfTensorName(t.name);
    if (!hf.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(f.path(), ": unexpected tensor '", t.name,
                                                     "' (no LLaMA weight has this GGUF name)"));
    }
    if (absl::StrContains(t.name, "attn_focal_tau") &&
        c.focal.mode != FocalConfig::Mode::kLearned && !c.focal.overridden) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.path(), ": unexpected tensor '", t.name,
                       "': the metadata has no focal_attention.mode = \"learned\""));
    }
    if (!CanDequantize(t.type)) {
      return absl::UnimplementedError(
          absl::StrCat(f.path(), ": tensor '", t.name, "' has type ", GgmlTypeName(t.type),
                       ", which cannot be dequantized (supported: ", DequantizableTypes(), ")"));
    }
    TensorInfo info;
    info.name = *hf;
    info.source_name = t.name;
    info.dtype = "F32";
    info.shape = t.shape();
    info.file = f.path();
    info.bytes = static_cast<size_t>(t.num_elements) * sizeof(float);
    // Q and K rows go back to HF's order; a shape the config does not expect
    // is left alone for LoadLlamaWeights to report.
    int64_t rope_heads = 0;
    if (absl::EndsWith(t.name, ".attn_q.weight")) rope_heads = c.num_heads;
    if (absl::EndsWith(t.name, ".attn_k.weight")) rope_heads = c.num_kv_heads;
    // (Sizes from the metadata: the product must not wrap; an empty tensor
    // has no rows to move.)
    int64_t rope_rows = 0;
    const bool permuted = rope_heads > 0 && info.shape.size() == 2 && info.shape[1] > 0 &&
                          !__builtin_mul_overflow(rope_heads, c.head_dim, &rope_rows) &&
                          info.shape[0] == rope_rows;
    const bool aligned = reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
    const int64_t cols = info.shape.size() == 2 ? info.shape[1] : 0;
    const int64_t move_heads = permuted ? rope_heads : 0;
    if (data == GgufData::kNone) {
      // Validation only: nothing read.
    } else if (t.type == GgmlType::kF32 && !permuted && aligned) {
      info.data = t.data;  // used in place, like safetensors F32
    } else if (data == GgufData::kOnUpload) {
      // `t` lives in `gguf`, which the closure keeps alive.
      info.materialize = [gguf, &t, move_heads, head_dim = c.head_dim, cols] {
        return HfOrderValues(t, gguf->path(), move_heads, head_dim, cols);
      };
    } else {
      FOCAL_ASSIGN_OR_RETURN(std::vector<float> values,
                             HfOrderValues(t, f.path(), move_heads, c.head_dim, cols));
      owned->buffers.push_back(std::move(values));
      info.data = reinterpret_cast<const uint8_t*>(owned->buffers.back().data());
    }
    const std::string source = t.name;
    if (!out.emplace(*hf, std::move(info)).second) {
      return absl::InvalidArgumentError(absl::StrCat(f.path(), ": tensor '", source,
                                                     "' maps onto '", *hf,
                                                     "', which another tensor already holds"));
    }
  }
  return TensorStore::FromTensors(std::move(out), {f.path()}, std::move(owned));
}

}  // namespace focal::model
