// SPDX-License-Identifier: Apache-2.0
#include "model/weights.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/dtype.h"

namespace focal::model {
namespace {

std::string ShapeStr(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ", "), "]");
}

// "FILE: tensor 'NAME'", with the file's own name for a renamed (GGUF) tensor.
std::string Where(const TensorInfo& t) {
  if (t.source_name.empty()) return absl::StrCat(t.file, ": tensor '", t.name, "'");
  return absl::StrCat(t.file, ": tensor '", t.source_name, "' (", t.name, ")");
}

class Loader {
 public:
  Loader(const TensorStore& store, kernels::Backend* backend) : store_(store), backend_(backend) {}

  // Uploads `name`, which must have exactly `shape`.
  absl::StatusOr<kernels::Buffer> Take(const std::string& name, std::vector<int64_t> shape) {
    const TensorInfo* t = store_.Find(name);
    if (t == nullptr) {
      return absl::NotFoundError(absl::StrCat(absl::StrJoin(store_.files(), ", "),
                                              ": checkpoint is missing tensor '", name, "' (shape ",
                                              ShapeStr(shape), ")"));
    }
    used_.insert(name);
    if (t->shape != shape) {
      return absl::InvalidArgumentError(absl::StrCat(Where(*t), " has shape ", ShapeStr(t->shape),
                                                     " but the config implies ", ShapeStr(shape)));
    }
    kernels::DType dt;
    if (t->dtype == "F32") {
      dt = kernels::DType::kF32;
    } else if (t->dtype == "F16") {
      dt = kernels::DType::kF16;
    } else if (t->dtype == "BF16") {
      dt = kernels::DType::kBF16;
    } else {
      return absl::UnimplementedError(
          absl::StrCat(Where(*t), " has dtype ", t->dtype, " (supported: F32, F16, BF16)"));
    }
    dtypes_.insert(t->dtype);
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    num_params_ += numel;
    int64_t rows = shape.size() == 2 ? shape[0] : 1;
    if (backend_ == nullptr) return kernels::Buffer();  // validate only
    if (t->data != nullptr || !t->materialize) {
      return backend_->UploadWeight(t->data, dt, rows, numel / rows);
    }
    // Computed on demand (a quantized GGUF tensor): freed here once the
    // backend has its own copy, else owned by the buffer that uses it.
    FOCAL_ASSIGN_OR_RETURN(std::vector<float> values, t->materialize());
    FOCAL_ASSIGN_OR_RETURN(kernels::Buffer buf,
                           backend_->UploadWeight(values.data(), dt, rows, numel / rows));
    if (buf.tensor().data != values.data()) return buf;
    auto keep = std::make_shared<std::vector<float>>(std::move(values));  // same memory
    return kernels::Buffer(buf.tensor(), [keep](void*) {});
  }

  absl::StatusOr<float> TakeScalar(const std::string& name) {
    const TensorInfo* t = store_.Find(name);
    if (t == nullptr) return 0.0f;
    used_.insert(name);
    if (t->shape != std::vector<int64_t>{1}) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(*t), " has shape ", ShapeStr(t->shape), ", expected [1]"));
    }
    num_params_ += 1;
    if (t->dtype != "F32" && t->dtype != "BF16" && t->dtype != "F16") {
      return absl::UnimplementedError(absl::StrCat(Where(*t), " has dtype ", t->dtype));
    }
    if (backend_ == nullptr) return 0.0f;  // validate only: the data may not be loaded
    if (t->data == nullptr && t->materialize) {
      FOCAL_ASSIGN_OR_RETURN(std::vector<float> values, t->materialize());
      return values.at(0);
    }
    if (t->dtype == "F32") {
      float f;
      std::memcpy(&f, t->data, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, t->data, 2);
    return t->dtype == "BF16" ? kernels::Bf16ToF32(h) : kernels::F16ToF32(h);
  }

  // Everything not consumed is unexpected, except RoPE buffers that old
  // checkpoints carry (recomputed here from the config).
  absl::Status CheckAllUsed(bool tied, bool ignore_focal) {
    for (const auto& [name, info] : store_.tensors()) {
      if (used_.count(name)) continue;
      if (absl::EndsWith(name, "rotary_emb.inv_freq")) continue;
      if (tied && name == "lm_head.weight") continue;  // tied: HF ignores it too
      // A --focal-temperature retrofit of a learned checkpoint drops its tau.
      if (ignore_focal && absl::StrContains(name, "focal_tau")) continue;
      if (absl::StrContains(name, "focal_tau")) {
        return absl::InvalidArgumentError(
            absl::StrCat(info.file, ": unexpected tensor '", name,
                         "': config.json has no \"focal_attention\": {\"mode\": \"learned\"}"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(info.file, ": unexpected tensor '",
                       info.source_name.empty() ? name : info.source_name, "' for this config"));
    }
    return absl::OkStatus();
  }

  int64_t num_params() const { return num_params_; }
  std::string dtype() const {
    return dtypes_.size() == 1 ? *dtypes_.begin() : std::string("mixed");
  }

 private:
  const TensorStore& store_;
  kernels::Backend* backend_;
  std::set<std::string> used_;
  std::set<std::string> dtypes_;
  int64_t num_params_ = 0;
};

}  // namespace

absl::Status CheckWeightsFit(const TensorStore& store, kernels::Backend& backend) {
  int64_t need = 0;
  bool widened = false;  // F16/BF16 matrices widened to F32
  for (const auto& [name, t] : store.tensors()) {
    kernels::DType dt;
    if (t.dtype == "F32") {
      dt = kernels::DType::kF32;
    } else if (t.dtype == "F16") {
      dt = kernels::DType::kF16;
    } else if (t.dtype == "BF16") {
      dt = kernels::DType::kBF16;
    } else {
      continue;  // LoadLlamaWeights names it
    }
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) return absl::OkStatus();
    }  // (LoadLlamaWeights refuses such a shape, naming it)
    const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
    int64_t bytes = backend.UploadBytes(dt, rows, rows > 0 ? numel / rows : 0);
    if (bytes < 0) return absl::OkStatus();  // the backend cannot say
    if (t.data == nullptr && t.materialize && bytes == 0) {
      // Dequantized on upload and used in place: the F32 copy is the new memory.
      bytes = numel * static_cast<int64_t>(sizeof(float));
      widened = widened || rows > 1;
    }
    need += bytes;
    widened = widened || (rows > 1 && dt != kernels::DType::kF32 && bytes > numel * 2);
  }
  const int64_t have = backend.AvailableMemoryBytes();
  if (have < 0 || need <= have) return absl::OkStatus();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const std::vector<std::string> files = store.files();
  const std::string where =
      files.size() == 1 ? files[0]
                        : absl::StrCat(std::filesystem::path(files[0]).parent_path().string(), " (",
                                       files.size(), " files)");
  return absl::ResourceExhaustedError(absl::StrCat(
      where, ": the weights need ", absl::StrFormat("%.2f GiB", need / gib), " of new memory on ",
      backend.name(), ", but ", absl::StrFormat("%.2f GiB", have / gib), " is available",
      widened ? "; --precision bf16 keeps the matrices at 2 bytes (BF16 ones in place)" : ""));
}

absl::StatusOr<LlamaWeights> LoadLlamaWeights(const ModelConfig& c, const TensorStore& store,
                                              kernels::Backend* backend) {
  Loader ld(store, backend);
  LlamaWeights w;
  const int64_t C = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  // The config's sizes are checked against the tensors below; their
  // products must not wrap first (a config.json may say anything).
  int64_t qd, kvd;
  if (__builtin_mul_overflow(c.num_heads, c.head_dim, &qd) ||
      __builtin_mul_overflow(c.num_kv_heads, c.head_dim, &kvd)) {
    return absl::InvalidArgumentError(absl::StrCat("config: num_attention_heads (", c.num_heads,
                                                   ") times head_dim (", c.head_dim,
                                                   ") is too large"));
  }
  FOCAL_ASSIGN_OR_RETURN(w.embed, ld.Take("model.embed_tokens.weight", {V, C}));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = absl::StrCat("model.layers.", l, ".");
    LayerWeights lw;
    FOCAL_ASSIGN_OR_RETURN(lw.input_norm, ld.Take(p + "input_layernorm.weight", {C}));
    FOCAL_ASSIGN_OR_RETURN(lw.wq, ld.Take(p + "self_attn.q_proj.weight", {qd, C}));
    FOCAL_ASSIGN_OR_RETURN(lw.wk, ld.Take(p + "self_attn.k_proj.weight", {kvd, C}));
    FOCAL_ASSIGN_OR_RETURN(lw.wv, ld.Take(p + "self_attn.v_proj.weight", {kvd, C}));
    FOCAL_ASSIGN_OR_RETURN(lw.wo, ld.Take(p + "self_attn.o_proj.weight", {C, qd}));
    FOCAL_ASSIGN_OR_RETURN(lw.post_norm, ld.Take(p + "post_attention_layernorm.weight", {C}));
    FOCAL_ASSIGN_OR_RETURN(lw.w_gate, ld.Take(p + "mlp.gate_proj.weight", {F, C}));
    FOCAL_ASSIGN_OR_RETURN(lw.w_up, ld.Take(p + "mlp.up_proj.weight", {F, C}));
    FOCAL_ASSIGN_OR_RETURN(lw.w_down, ld.Take(p + "mlp.down_proj.weight", {C, F}));
    if (c.focal.mode == FocalConfig::Mode::kLearned) {
      FOCAL_ASSIGN_OR_RETURN(lw.focal_tau_w, ld.Take(p + "self_attn.focal_tau.weight", {C}));
      FOCAL_ASSIGN_OR_RETURN(lw.focal_tau_b, ld.TakeScalar(p + "self_attn.focal_tau.bias"));
    }
    w.layers.push_back(std::move(lw));
  }
  FOCAL_ASSIGN_OR_RETURN(w.final_norm, ld.Take("model.norm.weight", {C}));
  if (!c.tie_word_embeddings) {
    FOCAL_ASSIGN_OR_RETURN(w.lm_head, ld.Take("lm_head.weight", {V, C}));
  }
  FOCAL_RETURN_IF_ERROR(ld.CheckAllUsed(c.tie_word_embeddings, c.focal.overridden));
  if (backend != nullptr) FOCAL_RETURN_IF_ERROR(backend->Sync());
  w.num_parameters = ld.num_params();
  w.dtype = ld.dtype();
  return w;
}

}  // namespace focal::model
