// SPDX-License-Identifier: Apache-2.0
#include "model/config.h"

#include <cmath>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/status_macros.h"

namespace focal::model {
namespace {

// Field access with errors that name the file and the field.
class Fields {
 public:
  Fields(const JsonValue& obj, absl::string_view source, absl::string_view prefix)
      : obj_(obj), source_(source), prefix_(prefix) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": field '", prefix_, field, "' ", what));
  }
  const JsonValue* Get(absl::string_view field) const {
    const JsonValue* v = obj_.Find(field);
    return (v == nullptr || v->is_null()) ? nullptr : v;
  }
  absl::StatusOr<int64_t> Int(absl::string_view field, std::optional<int64_t> def,
                              int64_t min_value) const {
    const JsonValue* v = Get(field);
    if (v == nullptr) {
      if (def.has_value()) return *def;
      return Error(field, "is missing");
    }
    if (!v->is_integer()) return Error(field, "must be an integer");
    if (v->integer() < min_value) {
      return Error(field, absl::StrCat("must be >= ", min_value, ", got ", v->integer()));
    }
    return v->integer();
  }
  absl::StatusOr<double> Number(absl::string_view field, std::optional<double> def) const {
    const JsonValue* v = Get(field);
    if (v == nullptr) {
      if (def.has_value()) return *def;
      return Error(field, "is missing");
    }
    if (!v->is_number()) return Error(field, "must be a number");
    // The kernels compute in float: 1e400 (parsed as inf) or 1e39 would turn
    // every score into inf or NaN without a word.
    if (!(std::abs(v->number()) <= std::numeric_limits<float>::max())) {
      return Error(field, absl::StrCat("must be a finite number within float range, got ",
                                       absl::StrFormat("%g", v->number())));
    }
    return v->number();
  }
  absl::StatusOr<bool> Bool(absl::string_view field, bool def) const {
    const JsonValue* v = Get(field);
    if (v == nullptr) return def;
    if (!v->is_bool()) return Error(field, "must be true or false");
    return v->bool_value();
  }
  absl::StatusOr<std::string> String(absl::string_view field, std::string def) const {
    const JsonValue* v = Get(field);
    if (v == nullptr) return def;
    if (!v->is_string()) return Error(field, "must be a string");
    return v->string_value();
  }

 private:
  const JsonValue& obj_;
  std::string source_;
  std::string prefix_;
};

absl::Status ParseRopeScaling(const JsonValue& v, absl::string_view source,
                              absl::string_view prefix, RopeScaling& out) {
  if (!v.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": field '", prefix.substr(0, prefix.size() - 1), "' must be null or an object"));
  }
  Fields f(v, source, prefix);
  // Newer configs say "rope_type", older ones "type".
  FOCAL_ASSIGN_OR_RETURN(std::string type, f.String("rope_type", ""));
  if (type.empty()) {
    FOCAL_ASSIGN_OR_RETURN(type, f.String("type", ""));
  }
  if (type.empty() || type == "default") return absl::OkStatus();
  if (type != "linear" && type != "llama3") {
    return absl::UnimplementedError(absl::StrCat(source, ": ", prefix, "rope_type '", type,
                                                 "' is not supported (none, linear or llama3)"));
  }
  FOCAL_ASSIGN_OR_RETURN(out.factor, f.Number("factor", std::nullopt));
  if (!(out.factor > 0)) return f.Error("factor", "must be > 0");
  if (type == "linear") {
    out.type = RopeScaling::Type::kLinear;
    return absl::OkStatus();
  }
  out.type = RopeScaling::Type::kLlama3;
  FOCAL_ASSIGN_OR_RETURN(out.low_freq_factor, f.Number("low_freq_factor", std::nullopt));
  FOCAL_ASSIGN_OR_RETURN(out.high_freq_factor, f.Number("high_freq_factor", std::nullopt));
  FOCAL_ASSIGN_OR_RETURN(out.original_max_position_embeddings,
                         f.Int("original_max_position_embeddings", std::nullopt, 1));
  if (!(out.high_freq_factor > out.low_freq_factor) || !(out.low_freq_factor > 0)) {
    return f.Error("high_freq_factor", "must be greater than low_freq_factor > 0");
  }
  return absl::OkStatus();
}

// What is wrong with a temperature or tau as a softmax scale 1/t, which the
// attention kernels multiply by in float; nullopt when nothing.
std::optional<std::string> ScaleProblem(double t) {
  if (!(t > 0)) return absl::StrCat("must be > 0, got ", t);
  if (!std::isfinite(t)) return absl::StrCat("must be finite, got ", t);
  if (!(1.0 / t <= std::numeric_limits<float>::max())) {
    return absl::StrCat("is too small (1/", t, " overflows float), got ", t);
  }
  return std::nullopt;
}

absl::Status ParseFocal(const JsonValue& v, absl::string_view source, int64_t num_layers,
                        FocalConfig& out) {
  if (!v.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": field 'focal_attention' must be an object"));
  }
  Fields f(v, source, "focal_attention.");
  for (const auto& [key, unused] : v.members()) {
    if (key != "mode" && key != "temperature" && key != "tau_min" && key != "tau_max" &&
        key != "reduction") {
      return f.Error(key, "is not a known focal_attention field");
    }
  }
  const JsonValue* mode = f.Get("mode");
  if (mode == nullptr) return f.Error("mode", "is missing (\"constant\" or \"learned\")");
  if (!mode->is_string()) return f.Error("mode", "must be \"constant\" or \"learned\"");
  if (mode->string_value() == "constant") {
    out.mode = FocalConfig::Mode::kConstant;
    const JsonValue* t = f.Get("temperature");
    if (t == nullptr) return f.Error("temperature", "is missing");
    std::vector<const JsonValue*> items;
    if (t->is_array()) {
      for (const JsonValue& x : t->array()) items.push_back(&x);
      if (static_cast<int64_t>(items.size()) != num_layers) {
        return f.Error("temperature",
                       absl::StrCat("has ", items.size(), " values but the model has ", num_layers,
                                    " layers"));
      }
    } else {
      items.push_back(t);
    }
    for (const JsonValue* x : items) {
      if (!x->is_number()) return f.Error("temperature", "must be a number or a list of numbers");
      if (auto bad = ScaleProblem(x->number())) return f.Error("temperature", *bad);
      out.temperature.push_back(x->number());
    }
    for (const char* k : {"tau_min", "tau_max", "reduction"}) {
      if (f.Get(k) != nullptr) return f.Error(k, "is only valid with mode \"learned\"");
    }
    return absl::OkStatus();
  }
  if (mode->string_value() == "learned") {
    out.mode = FocalConfig::Mode::kLearned;
    if (f.Get("temperature") != nullptr) {
      return f.Error("temperature", "is only valid with mode \"constant\"");
    }
    FOCAL_ASSIGN_OR_RETURN(out.tau_min, f.Number("tau_min", std::nullopt));
    if (auto bad = ScaleProblem(out.tau_min)) return f.Error("tau_min", *bad);
    if (f.Get("tau_max") != nullptr) {
      FOCAL_ASSIGN_OR_RETURN(double tmax, f.Number("tau_max", std::nullopt));
      if (!(tmax >= out.tau_min)) return f.Error("tau_max", "must be >= tau_min");
      out.tau_max = tmax;
    }
    FOCAL_ASSIGN_OR_RETURN(std::string red, f.String("reduction", "token"));
    if (red == "token") {
      out.reduction = FocalConfig::Reduction::kToken;
    } else if (red == "sequence_mean") {
      out.reduction = FocalConfig::Reduction::kSequenceMean;
    } else {
      return f.Error("reduction",
                     absl::StrCat("must be \"token\" or \"sequence_mean\", got \"", red, "\""));
    }
    return absl::OkStatus();
  }
  return f.Error("mode", absl::StrCat("must be \"constant\" or \"learned\", got \"",
                                      mode->string_value(), "\""));
}

}  // namespace

std::string ModelConfig::Variant() const {
  switch (focal.mode) {
    case FocalConfig::Mode::kNone:
      return "base";
    case FocalConfig::Mode::kConstant: {
      auto fmt = [](double t) { return absl::StrFormat("%g", t); };
      std::string t =
          focal.temperature.size() == 1
              ? fmt(focal.temperature[0])
              : absl::StrCat("[",
                             absl::StrJoin(focal.temperature, ",",
                                           [&](std::string* o, double x) { o->append(fmt(x)); }),
                             "]");
      return absl::StrCat("focal(t=", t, focal.overridden ? ", retrofit" : "", ")");
    }
    case FocalConfig::Mode::kLearned:
      return absl::StrCat(
          "focal(learned, ",
          focal.reduction == FocalConfig::Reduction::kToken ? "token" : "sequence_mean", ")");
  }
  return "?";
}

std::string ModelConfig::Fingerprint() const {
  auto num = [](double x) { return absl::StrFormat("%.17g", x); };
  auto nums = [&](const std::vector<double>& xs) {
    return absl::StrJoin(xs, ",", [&](std::string* o, double x) { o->append(num(x)); });
  };
  const RopeScaling& r = rope_scaling;
  return absl::StrCat(
      "architecture=", architecture, "\nhidden_size=", hidden_size,
      "\nintermediate_size=", intermediate_size, "\nnum_layers=", num_layers,
      "\nnum_heads=", num_heads, "\nnum_kv_heads=", num_kv_heads, "\nhead_dim=", head_dim,
      "\nvocab_size=", vocab_size, "\nmax_position_embeddings=", max_position_embeddings,
      "\nsliding_window=", sliding_window.has_value() ? absl::StrCat(*sliding_window) : "none",
      "\nrms_norm_eps=", num(rms_norm_eps), "\nrope_theta=", num(rope_theta),
      "\nrope_scaling=", static_cast<int>(r.type), ",", num(r.factor), ",", num(r.low_freq_factor),
      ",", num(r.high_freq_factor), ",", r.original_max_position_embeddings,
      "\ntie_word_embeddings=", tie_word_embeddings ? 1 : 0,
      "\nbos_token_id=", bos_token_id.has_value() ? absl::StrCat(*bos_token_id) : "none",
      "\neos_token_ids=", absl::StrJoin(eos_token_ids, ","),
      "\nfocal=", static_cast<int>(focal.mode), ";", nums(focal.temperature), ";",
      num(focal.tau_min), ";", focal.tau_max.has_value() ? num(*focal.tau_max) : "none", ";",
      static_cast<int>(focal.reduction), "\n");
}

double ModelConfig::ConstantScale(int64_t layer) const {
  double t = 1.0;
  if (focal.mode == FocalConfig::Mode::kConstant) {
    t = focal.temperature.size() == 1 ? focal.temperature[0] : focal.temperature[layer];
  }
  // t multiplies sqrt(d); t = 1 gives exactly the base scale.
  return 1.0 / (t * std::sqrt(static_cast<double>(head_dim)));
}

absl::StatusOr<ModelConfig> ParseModelConfig(absl::string_view json, absl::string_view source) {
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(json, source));
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": expected a JSON object"));
  }
  Fields f(root, source, "");
  ModelConfig c;
  const JsonValue* archs = f.Get("architectures");
  if (archs != nullptr) {
    if (!archs->is_array() || archs->array().size() != 1 || !archs->array()[0].is_string()) {
      return f.Error("architectures", "must be a list with one class name");
    }
    c.architecture = archs->array()[0].string_value();
  } else {
    FOCAL_ASSIGN_OR_RETURN(std::string mt, f.String("model_type", ""));
    if (mt == "llama") c.architecture = "LlamaForCausalLM";
    if (mt == "mistral") c.architecture = "MistralForCausalLM";
  }
  if (c.architecture != "LlamaForCausalLM" && c.architecture != "MistralForCausalLM") {
    return absl::UnimplementedError(
        absl::StrCat(source, ": architecture '", c.architecture,
                     "' is not supported (LlamaForCausalLM or MistralForCausalLM)"));
  }
  FOCAL_ASSIGN_OR_RETURN(c.hidden_size, f.Int("hidden_size", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.intermediate_size, f.Int("intermediate_size", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_layers, f.Int("num_hidden_layers", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_heads, f.Int("num_attention_heads", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.num_kv_heads, f.Int("num_key_value_heads", c.num_heads, 1));
  FOCAL_ASSIGN_OR_RETURN(c.vocab_size, f.Int("vocab_size", std::nullopt, 1));
  FOCAL_ASSIGN_OR_RETURN(c.max_position_embeddings,
                         f.Int("max_position_embeddings", int64_t{2048}, 1));
  if (c.num_heads % c.num_kv_heads != 0) {
    return f.Error(
        "num_key_value_heads",
        absl::StrCat("(", c.num_kv_heads, ") must divide num_attention_heads (", c.num_heads, ")"));
  }
  if (f.Get("head_dim") != nullptr) {
    FOCAL_ASSIGN_OR_RETURN(c.head_dim, f.Int("head_dim", std::nullopt, 2));
  } else {
    if (c.hidden_size % c.num_heads != 0) {
      return f.Error("hidden_size", "is not divisible by num_attention_heads (give head_dim)");
    }
    c.head_dim = c.hidden_size / c.num_heads;
  }
  if (c.head_dim % 2 != 0) return f.Error("head_dim", "must be even for RoPE");
  FOCAL_ASSIGN_OR_RETURN(c.rms_norm_eps, f.Number("rms_norm_eps", 1e-6));
  if (!(c.rms_norm_eps > 0)) return f.Error("rms_norm_eps", "must be > 0");
  FOCAL_ASSIGN_OR_RETURN(c.rope_theta, f.Number("rope_theta", 10000.0));
  // transformers >= 5 writes "rope_parameters" (theta and scaling in one
  // object) instead of rope_theta + rope_scaling.
  const JsonValue* rope_params = f.Get("rope_parameters");
  if (rope_params != nullptr) {
    if (!rope_params->is_object()) return f.Error("rope_parameters", "must be an object");
    if (f.Get("rope_scaling") != nullptr) {
      return f.Error("rope_parameters", "and 'rope_scaling' are both given; keep one");
    }
    Fields rp(*rope_params, source, "rope_parameters.");
    FOCAL_ASSIGN_OR_RETURN(c.rope_theta, rp.Number("rope_theta", c.rope_theta));
    if (!(c.rope_theta > 1)) return rp.Error("rope_theta", "must be > 1");
  }
  if (!(c.rope_theta > 1)) return f.Error("rope_theta", "must be > 1");
  FOCAL_ASSIGN_OR_RETURN(c.tie_word_embeddings, f.Bool("tie_word_embeddings", false));
  FOCAL_ASSIGN_OR_RETURN(c.torch_dtype, f.String("torch_dtype", ""));
  if (c.torch_dtype.empty()) {
    FOCAL_ASSIGN_OR_RETURN(c.torch_dtype, f.String("dtype", "float32"));  // transformers >= 5
  }
  FOCAL_ASSIGN_OR_RETURN(std::string act, f.String("hidden_act", "silu"));
  if (act != "silu") {
    return absl::UnimplementedError(
        absl::StrCat(source, ": hidden_act '", act, "' is not supported (silu)"));
  }
  for (const char* bias : {"attention_bias", "mlp_bias"}) {
    FOCAL_ASSIGN_OR_RETURN(bool b, f.Bool(bias, false));
    if (b)
      return absl::UnimplementedError(absl::StrCat(source, ": ", bias, " = true is not supported"));
  }
  if (f.Get("bos_token_id") != nullptr) {
    FOCAL_ASSIGN_OR_RETURN(c.bos_token_id, f.Int("bos_token_id", std::nullopt, 0));
  }
  if (const JsonValue* eos = f.Get("eos_token_id"); eos != nullptr) {
    std::vector<const JsonValue*> items;
    if (eos->is_array()) {
      for (const JsonValue& x : eos->array()) items.push_back(&x);
    } else {
      items.push_back(eos);
    }
    for (const JsonValue* x : items) {
      if (!x->is_integer() || x->integer() < 0) {
        return f.Error("eos_token_id", "must be a non-negative integer or a list of them");
      }
      c.eos_token_ids.push_back(x->integer());
    }
  }
  if (f.Get("sliding_window") != nullptr) {
    FOCAL_ASSIGN_OR_RETURN(int64_t w, f.Int("sliding_window", std::nullopt, 1));
    if (w < c.max_position_embeddings) c.sliding_window = w;
  }
  if (const JsonValue* rs = f.Get("rope_scaling"); rs != nullptr) {
    FOCAL_RETURN_IF_ERROR(ParseRopeScaling(*rs, source, "rope_scaling.", c.rope_scaling));
  } else if (rope_params != nullptr) {
    FOCAL_RETURN_IF_ERROR(
        ParseRopeScaling(*rope_params, source, "rope_parameters.", c.rope_scaling));
  }
  if (const JsonValue* fa = f.Get("focal_attention"); fa != nullptr) {
    FOCAL_RETURN_IF_ERROR(ParseFocal(*fa, source, c.num_layers, c.focal));
  }
  return c;
}

absl::StatusOr<ModelConfig> LoadModelConfig(absl::string_view model_dir) {
  std::string path = absl::StrCat(model_dir, "/config.json");
  FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseModelConfig(text, path);
}

absl::Status OverrideFocalTemperature(ModelConfig& config, double t) {
  if (auto bad = ScaleProblem(t)) {
    return absl::InvalidArgumentError(absl::StrCat("--focal-temperature ", *bad));
  }
  config.focal = FocalConfig{};
  config.focal.mode = FocalConfig::Mode::kConstant;
  config.focal.temperature = {t};
  config.focal.overridden = true;
  return absl::OkStatus();
}

std::vector<float> RopeInvFreq(const ModelConfig& c) {
  const int64_t half = c.head_dim / 2;
  std::vector<float> inv(half);
  // fp32 arithmetic in HF's order: 1 / base ** (arange(0, d, 2) / d).
  const float base = static_cast<float>(c.rope_theta);
  const float dim = static_cast<float>(c.head_dim);
  for (int64_t i = 0; i < half; ++i) {
    float e = static_cast<float>(2 * i) / dim;
    inv[i] = 1.0f / std::pow(base, e);
  }
  const RopeScaling& rs = c.rope_scaling;
  if (rs.type == RopeScaling::Type::kLinear) {
    for (float& x : inv) x = x / static_cast<float>(rs.factor);
  } else if (rs.type == RopeScaling::Type::kLlama3) {
    const float factor = static_cast<float>(rs.factor);
    const double old_len = static_cast<double>(rs.original_max_position_embeddings);
    const double low_wavelen = old_len / rs.low_freq_factor;
    const double high_wavelen = old_len / rs.high_freq_factor;
    for (float& x : inv) {
      const float wavelen = static_cast<float>(2 * M_PI) / x;
      float f = wavelen > low_wavelen ? x / factor : x;
      const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
      if (medium) {
        const float smooth = static_cast<float>((old_len / wavelen - rs.low_freq_factor) /
                                                (rs.high_freq_factor - rs.low_freq_factor));
        f = (1.0f - smooth) * f / factor + smooth * f;
      }
      x = f;
    }
  }
  return inv;
}

}  // namespace focal::model
