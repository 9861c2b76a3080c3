// SPDX-License-Identifier: Apache-2.0
#include "model/language_model.h"

#include <algorithm>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/file_util.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "model/gguf_model.h"
#include "model/tokenizer_loader.h"

namespace focal::model {

absl::StatusOr<std::optional<std::string>> FindGgufCheckpoint(absl::string_view path) {
  namespace fs = std::filesystem;
  const std::string p(path);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    if (absl::EndsWithIgnoreCase(p, ".gguf")) return p;
    return absl::InvalidArgumentError(
        absl::StrCat("model path '", path,
                     "' is a file but not a .gguf checkpoint (give a .gguf file or a "
                     "checkpoint directory)"));
  }
  if (!fs::is_directory(p, ec) || fs::exists(absl::StrCat(p, "/config.json"), ec)) {
    return std::nullopt;
  }
  std::vector<std::string> ggufs;
  for (const auto& e : fs::directory_iterator(p, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && absl::EndsWithIgnoreCase(name, ".gguf")) ggufs.push_back(name);
  }
  if (ggufs.empty()) return std::nullopt;
  if (ggufs.size() > 1) {
    std::sort(ggufs.begin(), ggufs.end());
    return absl::InvalidArgumentError(
        absl::StrCat("model directory '", path, "' holds ", ggufs.size(), " .gguf files (",
                     absl::StrJoin(ggufs, ", "), "); give the path of one"));
  }
  return (fs::path(p) / ggufs[0]).string();
}

absl::StatusOr<std::unique_ptr<LanguageModel>> LanguageModel::Load(absl::string_view dir,
                                                                   kernels::Backend& backend,
                                                                   const LoadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(std::string(dir), ec)) {
    return absl::NotFoundError(absl::StrCat("model directory '", dir, "' does not exist"));
  }
  FOCAL_ASSIGN_OR_RETURN(std::optional<std::string> gguf_path, FindGgufCheckpoint(dir));
  std::unique_ptr<LanguageModel> m(new LanguageModel());
  m->dir_ = std::string(dir);
  if (gguf_path.has_value()) {
    FOCAL_ASSIGN_OR_RETURN(m->gguf_, GgufFile::Open(*gguf_path));
    FOCAL_ASSIGN_OR_RETURN(m->config_, GgufModelConfig(*m->gguf_));
  } else {
    FOCAL_ASSIGN_OR_RETURN(m->config_, LoadModelConfig(dir));
  }
  if (options.focal_temperature.has_value()) {
    FOCAL_RETURN_IF_ERROR(OverrideFocalTemperature(m->config_, *options.focal_temperature));
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tok =
      m->gguf_ != nullptr ? LoadTokenizer(*m->gguf_) : LoadTokenizer(dir);
  if (tok.ok()) {
    if ((*tok)->vocab_size() > m->config_.vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat((*tok)->path(), ": tokenizer has ", (*tok)->vocab_size(), " pieces but ",
                       m->gguf_ != nullptr ? "the GGUF's vocab size" : "config.json vocab_size",
                       " is ", m->config_.vocab_size));
    }
    m->tokenizer_ = *std::move(tok);
  } else if (options.require_tokenizer ||
             !(absl::IsNotFound(tok.status()) || absl::IsUnimplemented(tok.status()))) {
    // Optional means a missing or not yet supported tokenizer is tolerated;
    // a tokenizer file that fails to load is still an error.
    return tok.status();
  }
  if (m->gguf_ != nullptr) {
    FOCAL_ASSIGN_OR_RETURN(
        m->store_, GgufTensorStore(m->gguf_, m->config_,
                                   options.validate_only ? GgufData::kNone : GgufData::kOnUpload));
  } else {
    FOCAL_ASSIGN_OR_RETURN(m->store_, TensorStore::OpenDir(dir));
  }
  if (!options.validate_only) FOCAL_RETURN_IF_ERROR(CheckWeightsFit(m->store_, backend));
  FOCAL_ASSIGN_OR_RETURN(m->weights_, LoadLlamaWeights(m->config_, m->store_,
                                                       options.validate_only ? nullptr : &backend));
  if (!options.validate_only) {
    m->transformer_ =
        std::make_unique<Transformer>(m->config_, m->weights_, backend, options.transformer);
  }
  return m;
}

absl::StatusOr<std::unique_ptr<Transformer>> LanguageModel::TransformerOn(
    kernels::Backend& backend) const {
  FOCAL_CHECK(transformer_ != nullptr);  // not after a validate_only load
  if (!backend.CanUseBuffersOf(transformer_->backend())) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir_, ": the weights on ", transformer_->backend().name(),
                     " cannot be read by ", backend.name(), "; load the model there"));
  }
  return std::make_unique<Transformer>(config_, weights_, backend, transformer_->options());
}

std::vector<int64_t> LanguageModel::StopIds() const {
  if (!config_.eos_token_ids.empty()) return config_.eos_token_ids;
  if (tokenizer_ && tokenizer_->eos_id() >= 0) return {tokenizer_->eos_id()};
  return {};
}

absl::StatusOr<std::string> WeightsSha256(const TensorStore& store) {
  Sha256 h;
  for (const std::string& path : store.files()) {
    FOCAL_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
    h.Update(f.data(), f.size());
  }
  return h.HexDigest();
}

}  // namespace focal::model
