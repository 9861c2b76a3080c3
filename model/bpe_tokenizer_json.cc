// SPDX-License-Identifier: Apache-2.0
// BpeTokenizer::Load: reads an HF tokenizer.json (and tokenizer_config.json
// beside it) into a BpeSpec. Malformed fields are InvalidArgument; well-formed
// components we do not implement are Unimplemented; both name the file and
// the field ("model.merges[3]", "pre_tokenizer.pretokenizers[0].type").
// One parser of one file layout, kept whole (~540 lines) so that each
// component's checks sit beside the others'.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/bpe_tokenizer.h"
#include "model/bpe_tokenizer_impl.h"
#include "model/unicode.h"

namespace focal::model {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  absl::Status Bad(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field, ": ", what));
  }
  absl::Status Unsupported(absl::string_view field, absl::string_view what) const {
    return absl::UnimplementedError(absl::StrCat(file_, ": ", field, ": ", what));
  }

  absl::StatusOr<const JsonValue*> Get(const JsonValue& obj, absl::string_view key,
                                       absl::string_view field) const {
    const JsonValue* v = obj.Find(key);
    if (v == nullptr) return Bad(field, "is missing");
    return v;
  }
  absl::StatusOr<std::string> String(const JsonValue& obj, absl::string_view key,
                                     absl::string_view field) const {
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* v, Get(obj, key, field));
    if (!v->is_string()) return Bad(field, "must be a string");
    return v->string_value();
  }
  // Absent or null gives `dflt`.
  absl::StatusOr<bool> Bool(const JsonValue& obj, absl::string_view key, absl::string_view field,
                            bool dflt) const {
    const JsonValue* v = obj.Find(key);
    if (v == nullptr || v->is_null()) return dflt;
    if (!v->is_bool()) return Bad(field, "must be true or false");
    return v->bool_value();
  }
  absl::StatusOr<const std::vector<JsonValue>*> Array(const JsonValue& obj, absl::string_view key,
                                                      absl::string_view field) const {
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* v, Get(obj, key, field));
    if (!v->is_array()) return Bad(field, "must be an array");
    return &v->array();
  }
  // A string holding exactly one character (Rust `char` fields).
  absl::StatusOr<char32_t> Char(const JsonValue& obj, absl::string_view key,
                                absl::string_view field) const {
    FOCAL_ASSIGN_OR_RETURN(std::string s, String(obj, key, field));
    size_t pos = 0;
    if (s.empty() || !IsValidUtf8(s)) return Bad(field, "must be one character");
    const char32_t c = DecodeUtf8(s, &pos);
    if (pos != s.size()) return Bad(field, "must be one character");
    return c;
  }
  absl::StatusOr<std::string> Type(const JsonValue& v, absl::string_view field) const {
    if (!v.is_object()) return Bad(field, "must be an object");
    return String(v, "type", absl::StrCat(field, ".type"));
  }
  // A {"String": s} pattern; {"Regex": r} is refused unless `regex_ok`
  // (then *is_regex is set).
  absl::StatusOr<std::string> Pattern(const JsonValue& obj, absl::string_view field, bool regex_ok,
                                      bool* is_regex) const {
    const std::string f = absl::StrCat(field, ".pattern");
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* p, Get(obj, "pattern", f));
    if (!p->is_object() || p->members().size() != 1 || !p->members()[0].second.is_string()) {
      return Bad(f, "must be {\"String\": ...} or {\"Regex\": ...}");
    }
    const auto& [kind, value] = p->members()[0];
    if (kind == "String") {
      if (is_regex) *is_regex = false;
      return value.string_value();
    }
    if (kind == "Regex" && regex_ok) {
      *is_regex = true;
      return value.string_value();
    }
    if (kind == "Regex") {
      return Unsupported(
          f, absl::StrCat("regex patterns are not implemented here (", value.string_value(), ")"));
    }
    return Bad(f, absl::StrCat("unknown pattern kind '", kind, "'"));
  }

 private:
  std::string file_;
};

absl::Status ParseNormalizer(const Reader& r, const JsonValue& v, const std::string& field,
                             std::vector<NormalizerStep>* out) {
  if (v.is_null()) return absl::OkStatus();
  FOCAL_ASSIGN_OR_RETURN(std::string type, r.Type(v, field));
  if (type == "Sequence") {
    FOCAL_ASSIGN_OR_RETURN(auto* list, r.Array(v, "normalizers", field + ".normalizers"));
    for (size_t i = 0; i < list->size(); ++i) {
      FOCAL_RETURN_IF_ERROR(
          ParseNormalizer(r, (*list)[i], absl::StrCat(field, ".normalizers[", i, "]"), out));
    }
  } else if (type == "Prepend") {
    NormalizerStep s;
    s.type = NormalizerStep::Type::kPrepend;
    FOCAL_ASSIGN_OR_RETURN(s.content, r.String(v, "prepend", field + ".prepend"));
    out->push_back(std::move(s));
  } else if (type == "Replace") {
    NormalizerStep s;
    s.type = NormalizerStep::Type::kReplace;
    FOCAL_ASSIGN_OR_RETURN(s.pattern, r.Pattern(v, field, false, nullptr));
    if (s.pattern.empty()) return r.Unsupported(field + ".pattern", "an empty pattern");
    FOCAL_ASSIGN_OR_RETURN(s.content, r.String(v, "content", field + ".content"));
    out->push_back(std::move(s));
  } else {
    return r.Unsupported(field, absl::StrCat("normalizer type '", type, "' is not implemented"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PreTokenizerStep::Prepend> PrependScheme(const Reader& r, const JsonValue& v,
                                                        const std::string& field) {
  // add_prefix_space (older files) false means never; prepend_scheme
  // defaults to always.
  PreTokenizerStep::Prepend scheme = PreTokenizerStep::Prepend::kAlways;
  const JsonValue* ps = v.Find("prepend_scheme");
  if (ps != nullptr && !ps->is_null()) {
    if (!ps->is_string()) return r.Bad(field + ".prepend_scheme", "must be a string");
    const std::string& s = ps->string_value();
    if (s == "always") {
      scheme = PreTokenizerStep::Prepend::kAlways;
    } else if (s == "first") {
      scheme = PreTokenizerStep::Prepend::kFirst;
    } else if (s == "never") {
      scheme = PreTokenizerStep::Prepend::kNever;
    } else {
      return r.Bad(field + ".prepend_scheme", absl::StrCat("unknown scheme '", s, "'"));
    }
  }
  FOCAL_ASSIGN_OR_RETURN(bool add_prefix,
                         r.Bool(v, "add_prefix_space", field + ".add_prefix_space", true));
  if (!add_prefix) {
    if (ps != nullptr && !ps->is_null() && scheme != PreTokenizerStep::Prepend::kNever) {
      return r.Bad(field, "add_prefix_space false contradicts prepend_scheme");
    }
    scheme = PreTokenizerStep::Prepend::kNever;
  }
  return scheme;
}

absl::Status ParsePreTokenizer(const Reader& r, const JsonValue& v, const std::string& field,
                               std::vector<PreTokenizerStep>* out) {
  if (v.is_null()) return absl::OkStatus();
  FOCAL_ASSIGN_OR_RETURN(std::string type, r.Type(v, field));
  PreTokenizerStep s;
  if (type == "Sequence") {
    FOCAL_ASSIGN_OR_RETURN(auto* list, r.Array(v, "pretokenizers", field + ".pretokenizers"));
    for (size_t i = 0; i < list->size(); ++i) {
      FOCAL_RETURN_IF_ERROR(
          ParsePreTokenizer(r, (*list)[i], absl::StrCat(field, ".pretokenizers[", i, "]"), out));
    }
    return absl::OkStatus();
  } else if (type == "ByteLevel") {
    s.type = PreTokenizerStep::Type::kByteLevel;
    FOCAL_ASSIGN_OR_RETURN(s.add_prefix_space,
                           r.Bool(v, "add_prefix_space", field + ".add_prefix_space", true));
    FOCAL_ASSIGN_OR_RETURN(s.use_regex, r.Bool(v, "use_regex", field + ".use_regex", true));
  } else if (type == "Split") {
    s.type = PreTokenizerStep::Type::kSplit;
    bool is_regex = false;
    FOCAL_ASSIGN_OR_RETURN(std::string pattern, r.Pattern(v, field, true, &is_regex));
    if (is_regex) {
      s.regex = RecognizeSplitRegex(pattern);
      if (!s.regex.has_value()) {
        return r.Unsupported(field + ".pattern",
                             absl::StrCat("Split regex '", pattern,
                                          "' is not one we implement (GPT-2, Llama 3, Qwen2)"));
      }
    } else {
      if (pattern.empty()) return r.Unsupported(field + ".pattern", "an empty pattern");
      s.literal = std::move(pattern);
    }
    FOCAL_ASSIGN_OR_RETURN(std::string behavior, r.String(v, "behavior", field + ".behavior"));
    if (behavior == "Removed") {
      s.behavior = SplitBehavior::kRemoved;
    } else if (behavior == "Isolated") {
      s.behavior = SplitBehavior::kIsolated;
    } else if (behavior == "MergedWithPrevious") {
      s.behavior = SplitBehavior::kMergedWithPrevious;
    } else if (behavior == "MergedWithNext") {
      s.behavior = SplitBehavior::kMergedWithNext;
    } else if (behavior == "Contiguous") {
      s.behavior = SplitBehavior::kContiguous;
    } else {
      return r.Bad(field + ".behavior", absl::StrCat("unknown behavior '", behavior, "'"));
    }
    FOCAL_ASSIGN_OR_RETURN(s.invert, r.Bool(v, "invert", field + ".invert", false));
  } else if (type == "Digits") {
    s.type = PreTokenizerStep::Type::kDigits;
    FOCAL_ASSIGN_OR_RETURN(s.individual_digits,
                           r.Bool(v, "individual_digits", field + ".individual_digits", false));
  } else if (type == "Metaspace") {
    s.type = PreTokenizerStep::Type::kMetaspace;
    FOCAL_ASSIGN_OR_RETURN(char32_t rep, r.Char(v, "replacement", field + ".replacement"));
    AppendUtf8(rep, &s.replacement);
    FOCAL_ASSIGN_OR_RETURN(s.prepend_scheme, PrependScheme(r, v, field));
    FOCAL_ASSIGN_OR_RETURN(s.split, r.Bool(v, "split", field + ".split", true));
  } else {
    return r.Unsupported(field, absl::StrCat("pre-tokenizer type '", type, "' is not implemented"));
  }
  out->push_back(std::move(s));
  return absl::OkStatus();
}

absl::Status ParseDecoder(const Reader& r, const JsonValue& v, const std::string& field,
                          std::vector<DecoderStep>* out) {
  FOCAL_ASSIGN_OR_RETURN(std::string type, r.Type(v, field));
  DecoderStep d;
  if (type == "Sequence") {
    FOCAL_ASSIGN_OR_RETURN(auto* list, r.Array(v, "decoders", field + ".decoders"));
    for (size_t i = 0; i < list->size(); ++i) {
      FOCAL_RETURN_IF_ERROR(
          ParseDecoder(r, (*list)[i], absl::StrCat(field, ".decoders[", i, "]"), out));
    }
    return absl::OkStatus();
  } else if (type == "ByteLevel") {
    d.type = DecoderStep::Type::kByteLevel;
  } else if (type == "Replace") {
    d.type = DecoderStep::Type::kReplace;
    FOCAL_ASSIGN_OR_RETURN(d.pattern, r.Pattern(v, field, false, nullptr));
    if (d.pattern.empty()) return r.Unsupported(field + ".pattern", "an empty pattern");
    FOCAL_ASSIGN_OR_RETURN(d.content, r.String(v, "content", field + ".content"));
  } else if (type == "ByteFallback") {
    d.type = DecoderStep::Type::kByteFallback;
  } else if (type == "Fuse") {
    d.type = DecoderStep::Type::kFuse;
  } else if (type == "Strip") {
    d.type = DecoderStep::Type::kStrip;
    FOCAL_ASSIGN_OR_RETURN(d.strip_char, r.Char(v, "content", field + ".content"));
    for (auto [key, dst] : {std::pair{"start", &d.start}, std::pair{"stop", &d.stop}}) {
      FOCAL_ASSIGN_OR_RETURN(const JsonValue* n, r.Get(v, key, absl::StrCat(field, ".", key)));
      if (!n->is_integer() || n->integer() < 0) {
        return r.Bad(absl::StrCat(field, ".", key), "must be a non-negative integer");
      }
      *dst = static_cast<size_t>(n->integer());
    }
  } else if (type == "Metaspace") {
    d.type = DecoderStep::Type::kMetaspace;
    FOCAL_ASSIGN_OR_RETURN(d.replacement, r.Char(v, "replacement", field + ".replacement"));
    FOCAL_ASSIGN_OR_RETURN(PreTokenizerStep::Prepend scheme, PrependScheme(r, v, field));
    d.prepend = scheme != PreTokenizerStep::Prepend::kNever;
  } else {
    return r.Unsupported(field, absl::StrCat("decoder type '", type, "' is not implemented"));
  }
  out->push_back(std::move(d));
  return absl::OkStatus();
}

// The special tokens add_special_tokens=True puts before and after a single
// text. TemplateProcessing names them in "single"; ByteLevel adds none.
absl::Status ParsePostProcessor(const Reader& r, const JsonValue& v, const std::string& field,
                                std::vector<int32_t>* prefix, std::vector<int32_t>* suffix) {
  if (v.is_null()) return absl::OkStatus();
  FOCAL_ASSIGN_OR_RETURN(std::string type, r.Type(v, field));
  if (type == "Sequence") {
    FOCAL_ASSIGN_OR_RETURN(auto* list, r.Array(v, "processors", field + ".processors"));
    for (size_t i = 0; i < list->size(); ++i) {
      // Each processor wraps what the earlier ones produced.
      std::vector<int32_t> p, s;
      FOCAL_RETURN_IF_ERROR(
          ParsePostProcessor(r, (*list)[i], absl::StrCat(field, ".processors[", i, "]"), &p, &s));
      prefix->insert(prefix->begin(), p.begin(), p.end());
      suffix->insert(suffix->end(), s.begin(), s.end());
    }
    return absl::OkStatus();
  }
  if (type == "ByteLevel") return absl::OkStatus();
  if (type != "TemplateProcessing") {
    return r.Unsupported(field,
                         absl::StrCat("post-processor type '", type, "' is not implemented"));
  }
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* specials,
                         r.Get(v, "special_tokens", field + ".special_tokens"));
  if (!specials->is_object()) return r.Bad(field + ".special_tokens", "must be an object");
  FOCAL_ASSIGN_OR_RETURN(auto* single, r.Array(v, "single", field + ".single"));
  bool seen_text = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const std::string f = absl::StrCat(field, ".single[", i, "]");
    const JsonValue& item = (*single)[i];
    if (!item.is_object() || item.members().size() != 1 || !item.members()[0].second.is_object()) {
      return r.Bad(f, "must be {\"SpecialToken\": {...}} or {\"Sequence\": {...}}");
    }
    const auto& [kind, body] = item.members()[0];
    FOCAL_ASSIGN_OR_RETURN(std::string id, r.String(body, "id", f + ".id"));
    if (kind == "Sequence") {
      if (id != "A" || seen_text) return r.Bad(f, "the single template must hold $A once");
      seen_text = true;
    } else if (kind == "SpecialToken") {
      const JsonValue* sp = specials->Find(id);
      const std::string sf = absl::StrCat(field, ".special_tokens.", id);
      if (sp == nullptr) return r.Bad(sf, "is missing (named by the single template)");
      if (!sp->is_object()) return r.Bad(sf, "must be an object");
      FOCAL_ASSIGN_OR_RETURN(auto* ids, r.Array(*sp, "ids", sf + ".ids"));
      for (const JsonValue& n : *ids) {
        if (!n.is_integer() || n.integer() < 0 || n.integer() > INT32_MAX) {
          return r.Bad(sf + ".ids", "must hold token ids");
        }
        (seen_text ? suffix : prefix)->push_back(static_cast<int32_t>(n.integer()));
      }
    } else {
      return r.Bad(f, absl::StrCat("unknown template piece '", kind, "'"));
    }
  }
  if (!seen_text) return r.Bad(field + ".single", "has no $A");
  return absl::OkStatus();
}

absl::Status ParseModel(const Reader& r, const JsonValue& m, BpeSpec* spec) {
  FOCAL_ASSIGN_OR_RETURN(std::string type, r.Type(m, "model"));
  if (type != "BPE") {
    return r.Unsupported("model.type",
                         absl::StrCat("model type '", type, "' is not implemented (only BPE)"));
  }
  const JsonValue* dropout = m.Find("dropout");
  if (dropout != nullptr && !dropout->is_null() &&
      !(dropout->is_number() && dropout->number() == 0)) {
    return r.Unsupported("model.dropout", "BPE dropout is not implemented");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const JsonValue* v = m.Find(key);
    if (v != nullptr && !v->is_null() && !(v->is_string() && v->string_value().empty())) {
      return r.Unsupported(absl::StrCat("model.", key), "is not implemented");
    }
  }
  const JsonValue* unk = m.Find("unk_token");
  if (unk != nullptr && !unk->is_null()) {
    if (!unk->is_string()) return r.Bad("model.unk_token", "must be a string or null");
    spec->has_unk = true;
    spec->unk_token = unk->string_value();
  }
  FOCAL_ASSIGN_OR_RETURN(spec->fuse_unk, r.Bool(m, "fuse_unk", "model.fuse_unk", false));
  FOCAL_ASSIGN_OR_RETURN(spec->byte_fallback,
                         r.Bool(m, "byte_fallback", "model.byte_fallback", false));
  FOCAL_ASSIGN_OR_RETURN(spec->ignore_merges,
                         r.Bool(m, "ignore_merges", "model.ignore_merges", false));

  FOCAL_ASSIGN_OR_RETURN(const JsonValue* vocab, r.Get(m, "vocab", "model.vocab"));
  if (!vocab->is_object()) return r.Bad("model.vocab", "must be an object of token: id");
  spec->vocab.reserve(vocab->members().size());
  for (const auto& [token, id] : vocab->members()) {
    if (!id.is_integer()) {
      return r.Bad("model.vocab", absl::StrCat("the id of token '", token, "' is not an integer"));
    }
    spec->vocab.emplace_back(token, id.integer());
  }

  // Merges: "a b" strings (lines starting "#version" skipped) or [a, b].
  FOCAL_ASSIGN_OR_RETURN(auto* merges, r.Array(m, "merges", "model.merges"));
  spec->merges.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const JsonValue& e = (*merges)[i];
    const std::string f = absl::StrCat("model.merges[", i, "]");
    if (e.is_string()) {
      const std::string& line = e.string_value();
      if (line.rfind("#version", 0) == 0) continue;
      const size_t sp = line.find(' ');
      if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos) {
        return r.Bad(f, absl::StrCat("'", line, "' is not two tokens separated by one space"));
      }
      spec->merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    } else if (e.is_array() && e.array().size() == 2 && e.array()[0].is_string() &&
               e.array()[1].is_string()) {
      spec->merges.emplace_back(e.array()[0].string_value(), e.array()[1].string_value());
    } else {
      return r.Bad(f, "must be \"a b\" or [\"a\", \"b\"]");
    }
  }
  return absl::OkStatus();
}

absl::Status ParseAddedTokens(const Reader& r, const JsonValue& root, BpeSpec* spec) {
  const JsonValue* list = root.Find("added_tokens");
  if (list == nullptr || list->is_null()) return absl::OkStatus();
  if (!list->is_array()) return r.Bad("added_tokens", "must be an array");
  for (size_t i = 0; i < list->array().size(); ++i) {
    const JsonValue& t = list->array()[i];
    const std::string f = absl::StrCat("added_tokens[", i, "]");
    if (!t.is_object()) return r.Bad(f, "must be an object");
    BpeAddedToken a;
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* id, r.Get(t, "id", f + ".id"));
    if (!id->is_integer() || id->integer() < 0 || id->integer() > INT32_MAX) {
      return r.Bad(f + ".id", "must be a token id");
    }
    a.id = static_cast<int32_t>(id->integer());
    FOCAL_ASSIGN_OR_RETURN(a.content, r.String(t, "content", f + ".content"));
    FOCAL_ASSIGN_OR_RETURN(a.special, r.Bool(t, "special", f + ".special", false));
    FOCAL_ASSIGN_OR_RETURN(a.lstrip, r.Bool(t, "lstrip", f + ".lstrip", false));
    FOCAL_ASSIGN_OR_RETURN(a.rstrip, r.Bool(t, "rstrip", f + ".rstrip", false));
    FOCAL_ASSIGN_OR_RETURN(a.single_word, r.Bool(t, "single_word", f + ".single_word", false));
    FOCAL_ASSIGN_OR_RETURN(a.normalized, r.Bool(t, "normalized", f + ".normalized", !a.special));
    spec->added.push_back(std::move(a));
  }
  return absl::OkStatus();
}

// The id of `content` as the library's token_to_id finds it: added tokens
// first, then the model vocabulary; -1 when neither has it.
int32_t TokenToId(const BpeTokenizer::Impl& impl, absl::string_view content) {
  for (size_t id = 0; id < impl.kind.size(); ++id) {
    if ((impl.kind[id] == BpeTokenizer::Impl::kAdded ||
         impl.kind[id] == BpeTokenizer::Impl::kSpecial) &&
        impl.id_to_token[id] == content) {
      return static_cast<int32_t>(id);
    }
  }
  auto it = impl.vocab.find(content);
  return it == impl.vocab.end() ? -1 : it->second;
}

// tokenizer_config.json: bos_token / eos_token (a string, {"content": ...}
// or null) and add_bos_token / add_eos_token.
absl::Status ApplyTokenizerConfig(const std::string& path, absl::string_view text,
                                  BpeTokenizer::Impl* impl) {
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(text, path));
  const Reader r(path);
  if (!root.is_object()) return r.Bad("(top level)", "must be an object");
  int32_t ids[2] = {-1, -1};
  bool named[2] = {false, false};
  const char* token_keys[2] = {"bos_token", "eos_token"};
  for (int k = 0; k < 2; ++k) {
    const JsonValue* v = root.Find(token_keys[k]);
    if (v == nullptr || v->is_null()) continue;
    std::string content;
    if (v->is_string()) {
      content = v->string_value();
    } else if (v->is_object()) {
      FOCAL_ASSIGN_OR_RETURN(content,
                             r.String(*v, "content", absl::StrCat(token_keys[k], ".content")));
    } else {
      return r.Bad(token_keys[k], "must be a string, {\"content\": ...} or null");
    }
    ids[k] = TokenToId(*impl, content);
    if (ids[k] < 0) {
      return r.Bad(token_keys[k], absl::StrCat("'", content, "' is not a token of ", impl->path));
    }
    named[k] = true;
  }
  if (named[0]) impl->bos_id = ids[0];
  if (named[1]) impl->eos_id = ids[1];
  const char* add_keys[2] = {"add_bos_token", "add_eos_token"};
  for (int k = 0; k < 2; ++k) {
    const JsonValue* v = root.Find(add_keys[k]);
    if (v == nullptr || v->is_null()) continue;
    if (!v->is_bool()) return r.Bad(add_keys[k], "must be true or false");
    const int32_t id = k == 0 ? impl->bos_id : impl->eos_id;
    if (v->bool_value() && id < 0) {
      return r.Bad(add_keys[k], absl::StrCat("is true but there is no ", token_keys[k]));
    }
    std::vector<int32_t>& dst = k == 0 ? impl->prefix : impl->suffix;
    dst.clear();
    if (v->bool_value()) dst.push_back(id);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Load(absl::string_view path_view) {
  const std::string path(path_view);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("tokenizer '", path, "' does not exist"));
  }
  // One read serves both the hash and the parse, so they cannot disagree.
  FOCAL_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  // HF's tokenizers reads the file as UTF-8 text, and the pre-tokenizers and
  // decoders here read its tokens as UTF-8 (the JSON reader passes bytes on).
  if (!IsValidUtf8(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid UTF-8"));
  }
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(bytes, path));
  const Reader r(path);
  if (!root.is_object()) return r.Bad("(top level)", "must be an object");
  if (const JsonValue* version = root.Find("version");
      version != nullptr && !(version->is_string() && version->string_value() == "1.0")) {
    return r.Unsupported("version", "only tokenizer.json version \"1.0\" is known");
  }
  BpeSpec spec;
  spec.source = path;
  const JsonValue* model = root.Find("model");
  if (model == nullptr || model->is_null()) return r.Bad("model", "is missing");
  FOCAL_RETURN_IF_ERROR(ParseModel(r, *model, &spec));
  if (const JsonValue* v = root.Find("normalizer")) {
    FOCAL_RETURN_IF_ERROR(ParseNormalizer(r, *v, "normalizer", &spec.normalizer));
  }
  if (const JsonValue* v = root.Find("pre_tokenizer")) {
    FOCAL_RETURN_IF_ERROR(ParsePreTokenizer(r, *v, "pre_tokenizer", &spec.pre_tokenizer));
  }
  if (const JsonValue* v = root.Find("decoder"); v != nullptr && !v->is_null()) {
    spec.has_decoder = true;
    FOCAL_RETURN_IF_ERROR(ParseDecoder(r, *v, "decoder", &spec.decoder));
  }
  if (const JsonValue* v = root.Find("post_processor")) {
    FOCAL_RETURN_IF_ERROR(ParsePostProcessor(r, *v, "post_processor", &spec.prefix, &spec.suffix));
  }
  FOCAL_RETURN_IF_ERROR(ParseAddedTokens(r, root, &spec));
  // Without tokenizer_config.json, BOS and EOS are what the post-processor
  // puts around the text, when that is one token.
  if (spec.prefix.size() == 1) spec.bos_id = spec.prefix[0];
  if (spec.suffix.size() == 1) spec.eos_id = spec.suffix[0];
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, BuildBpeImpl(std::move(spec)));

  Sha256 hash;
  hash.Update(bytes);
  const std::string config_path =
      (std::filesystem::path(path).parent_path() / "tokenizer_config.json").string();
  if (std::filesystem::exists(config_path, ec)) {
    FOCAL_ASSIGN_OR_RETURN(const std::string config, ReadFile(config_path));
    FOCAL_RETURN_IF_ERROR(ApplyTokenizerConfig(config_path, config, impl.get()));
    hash.Update(config);
  }
  impl->sha256 = hash.HexDigest();
  return std::unique_ptr<BpeTokenizer>(new BpeTokenizer(std::move(impl)));
}

}  // namespace focal::model
