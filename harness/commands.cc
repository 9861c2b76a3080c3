// SPDX-License-Identifier: Apache-2.0
#include "harness/commands.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "kernels/backend.h"
#include "model/language_model.h"
#include "model/tools/llama2c_converter.h"
#include "reports/benchmark_table.h"
#include "reports/merge.h"
#include "reports/results_writer.h"

namespace focal::harness {
namespace {

struct Loaded {
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<model::LanguageModel> model;
};

absl::StatusOr<Loaded> Load(const ModelFlags& flags, bool require_tokenizer,
                            bool validate_only = false) {
  Loaded l;
  std::string device_note;
  FOCAL_ASSIGN_OR_RETURN(l.backend, kernels::CreateBackend(flags.device, flags.threads,
                                                           &device_note, flags.precision));
  if (!device_note.empty()) std::cerr << device_note << "\n";
  model::LoadOptions opts;
  opts.focal_temperature = flags.focal_temperature;
  opts.require_tokenizer = require_tokenizer;
  opts.validate_only = validate_only;
  std::string dir = flags.model_dir;
  if (dir.empty()) {
    FOCAL_ASSIGN_OR_RETURN(dir, FindDefaultModel());
  }
  FOCAL_ASSIGN_OR_RETURN(l.model, model::LanguageModel::Load(dir, *l.backend, opts));
  return l;
}

const char* RopeName(const model::RopeScaling& r) {
  switch (r.type) {
    case model::RopeScaling::Type::kNone:
      return "none";
    case model::RopeScaling::Type::kLinear:
      return "linear";
    case model::RopeScaling::Type::kLlama3:
      return "llama3";
  }
  return "?";
}

}  // namespace

absl::Status RunInspect(const ModelFlags& flags, std::ostream& out) {
  FOCAL_ASSIGN_OR_RETURN(Loaded l,
                         Load(flags, /*require_tokenizer=*/false, /*validate_only=*/true));
  const model::ModelConfig& c = l.model->config();
  const model::LlamaWeights& w = l.model->weights();
  const model::GgufFile* gguf = l.model->gguf();
  out << "model:        " << l.model->dir() << "\n";
  if (gguf != nullptr) {
    // The file as stored: its format version, architecture and tensor types.
    std::map<std::string, int> counts;
    for (const model::GgufTensor& t : gguf->tensors()) ++counts[model::GgmlTypeName(t.type)];
    std::vector<std::pair<std::string, int>> types(counts.begin(), counts.end());
    std::stable_sort(types.begin(), types.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    absl::StatusOr<std::string> arch = gguf->GetString("general.architecture");
    out << "gguf:         " << gguf->path() << " (GGUF v" << gguf->version() << ", architecture "
        << (arch.ok() ? *arch : "?") << ", " << gguf->tensors().size() << " tensors)\n"
        << "tensor types: "
        << absl::StrJoin(
               types, ", ",
               [](std::string* o, const auto& t) { absl::StrAppend(o, t.first, " x", t.second); })
        << "\n";
  }
  out << "architecture: " << c.architecture << "\n"
      << "attention:    " << c.Variant() << "\n"
      << "parameters:   " << w.num_parameters << "\n";
  if (gguf != nullptr) {
    out << "dtype:        F32 (dequantized from the GGUF tensor types on load)\n";
  } else {
    out << "dtype:        " << w.dtype << " (config torch_dtype " << c.torch_dtype << ")\n";
  }
  out << "layers:       " << c.num_layers << "\n"
      << "hidden:       " << c.hidden_size << " (ffn " << c.intermediate_size << ")\n"
      << "heads:        " << c.num_heads << " query, " << c.num_kv_heads << " kv, head_dim "
      << c.head_dim << "\n"
      << "vocab:        " << c.vocab_size << (c.tie_word_embeddings ? " (tied embeddings)" : "")
      << "\n"
      << "max_position: " << c.max_position_embeddings << "\n"
      << "rope:         theta " << c.rope_theta << ", scaling " << RopeName(c.rope_scaling);
  if (c.rope_scaling.type != model::RopeScaling::Type::kNone) {
    out << " (factor " << c.rope_scaling.factor << ")";
  }
  out << "\n"
      << "rms_norm_eps: " << c.rms_norm_eps << "\n";
  if (const model::Tokenizer* t = l.model->tokenizer()) {
    out << "tokenizer:    " << t->name() << ", " << t->vocab_size() << " pieces, bos "
        << t->bos_id() << ", eos " << t->eos_id() << "\n";
  } else if (gguf != nullptr && gguf->Has("tokenizer.ggml.model")) {
    absl::StatusOr<std::string> kind = gguf->GetString("tokenizer.ggml.model");
    out << "tokenizer:    none loaded (the GGUF embeds a '" << (kind.ok() ? *kind : "?")
        << "' tokenizer that is not implemented)\n";
  } else {
    out << "tokenizer:    none (no tokenizer.model)\n";
  }
  out << "backend:      " << l.backend->name() << "\n";
  out << "files (sha256):\n";
  // A .gguf path is one file; a directory lists its files.
  std::string dir = l.model->dir();
  std::vector<std::string> files;
  if (std::filesystem::is_regular_file(dir)) {
    const std::filesystem::path p(dir);
    files.push_back(p.filename().string());
    dir = p.parent_path().empty() ? "." : p.parent_path().string();
  } else {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.is_regular_file()) files.push_back(e.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    FOCAL_ASSIGN_OR_RETURN(MappedFile mf, MappedFile::Open(absl::StrCat(dir, "/", f)));
    Sha256 h;
    h.Update(mf.data(), mf.size());
    out << "  " << h.HexDigest() << "  " << f << "\n";
  }
  FOCAL_ASSIGN_OR_RETURN(std::string weights_sha, model::WeightsSha256(l.model->store()));
  out << "weights_sha256: " << weights_sha << "\n";
  return absl::OkStatus();
}

absl::Status RunGenerate(const ModelFlags& flags, const std::string& prompt, int64_t max_new_tokens,
                         std::ostream& out) {
  if (max_new_tokens < 0) return absl::InvalidArgumentError("--max-new-tokens must be >= 0");
  FOCAL_ASSIGN_OR_RETURN(Loaded l, Load(flags, /*require_tokenizer=*/true));
  const model::Tokenizer& tok = *l.model->tokenizer();
  // BOS as the tokenizer's convention has it (HF's add_special_tokens): a
  // GPT-2 style tokenizer has none and adds none.
  FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(prompt, tok.adds_bos()));
  if (ids.empty()) {
    // Nothing to condition on: start from the token lm-eval uses for an
    // empty context (BOS, else EOS, e.g. GPT-2's <|endoftext|>).
    const int32_t start = tok.bos_id() >= 0 ? tok.bos_id() : tok.eos_id();
    if (start < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the prompt is empty and the tokenizer (", tok.path(),
                       ") has no BOS or EOS token to start from: give --prompt"));
    }
    ids.push_back(start);
  }
  const std::vector<int64_t> stop = l.model->StopIds();
  FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> gen,
                         l.model->transformer().Generate(ids, max_new_tokens, stop));
  std::vector<int32_t> all = ids;
  all.insert(all.end(), gen.begin(), gen.end());
  FOCAL_ASSIGN_OR_RETURN(std::string text, tok.DecodeGenerated(all));
  out << text << "\n";
  return absl::OkStatus();
}

absl::Status RunScore(const ModelFlags& flags, const std::string& text, bool add_bos,
                      std::ostream& out) {
  FOCAL_ASSIGN_OR_RETURN(Loaded l, Load(flags, /*require_tokenizer=*/true));
  const model::Tokenizer& tok = *l.model->tokenizer();
  // BOS only where the tokenizer's convention adds one, as lm-eval's
  // `--add-bos auto` (a tokenizer without BOS is not an error).
  FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(text, add_bos && tok.adds_bos()));
  if (ids.size() < 2) {
    return absl::InvalidArgumentError(
        "--text gives fewer than 2 tokens: nothing to score (every token after the first)");
  }
  model::Transformer& tf = l.model->transformer();
  FOCAL_ASSIGN_OR_RETURN(model::KvCache cache, tf.NewCache(static_cast<int64_t>(ids.size())));
  std::vector<int64_t> rows;
  std::vector<int32_t> targets;
  for (size_t i = 1; i < ids.size(); ++i) {
    rows.push_back(static_cast<int64_t>(i) - 1);
    targets.push_back(ids[i]);
  }
  model::SeqInput in{&cache, ids, rows, targets};
  std::vector<std::vector<model::TokenScore>> scores;
  FOCAL_RETURN_IF_ERROR(tf.Forward(absl::MakeConstSpan(&in, 1), scores));
  for (size_t i = 0; i < targets.size(); ++i) {
    out << absl::StrFormat("{\"position\": %d, \"token_id\": %d, \"logprob\": %.9g}\n", i + 1,
                           targets[i], scores[0][i].logprob);
  }
  return absl::OkStatus();
}

absl::Status RunMerge(const std::vector<std::string>& shard_files, const std::string& out_file,
                      std::ostream& out) {
  std::vector<reports::RunResults> shards;
  for (const std::string& f : shard_files) {
    FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(f));
    FOCAL_ASSIGN_OR_RETURN(reports::RunResults r, reports::ResultsFromJson(text, f));
    shards.push_back(std::move(r));
  }
  FOCAL_ASSIGN_OR_RETURN(reports::RunResults merged, reports::MergeShards(shards));
  FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ResultsToJson(merged));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(out_file, json));
  out << reports::SummaryTable(merged);
  return absl::OkStatus();
}

absl::Status RunReport(const std::vector<std::string>& files, const std::string& format,
                       const std::string& baseline, const std::string& out_file,
                       std::ostream& out) {
  std::vector<reports::RunResults> runs;
  for (const std::string& f : files) {
    FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(f));
    FOCAL_ASSIGN_OR_RETURN(reports::RunResults r, reports::ResultsFromJson(text, f));
    runs.push_back(std::move(r));
  }
  // --baseline may name one of the files: the column of its (single) model.
  std::string column = baseline;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i] != baseline) continue;
    if (runs[i].models_size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("report: --baseline ", baseline, " holds ",
                                                     runs[i].models_size(),
                                                     " models; name its column instead"));
    }
    column = reports::ModelLabel(runs[i].models(0));
  }
  FOCAL_ASSIGN_OR_RETURN(std::string table, reports::BenchmarkTable(runs, format, column));
  if (out_file.empty()) {
    out << table;
    return absl::OkStatus();
  }
  return WriteFileAtomic(out_file, table);
}

absl::Status RunConvertLlama2c(const std::string& model_bin, const std::string& tokenizer,
                               const std::string& out_dir, std::ostream& out) {
  FOCAL_RETURN_IF_ERROR(model::ConvertLlama2c(model_bin, tokenizer, out_dir));
  out << "wrote " << out_dir << " (config.json, model.safetensors, tokenizer.model)\n";
  return absl::OkStatus();
}

}  // namespace focal::harness
