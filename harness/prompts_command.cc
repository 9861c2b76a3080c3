// SPDX-License-Identifier: Apache-2.0
#include "harness/prompts_command.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/asset_root.h"
#include "base/file_util.h"
#include "base/json_writer.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "engine/long_context_runner.h"
#include "engine/scorer.h"
#include "harness/task_data.h"
#include "model/gguf.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/tokenizer_loader.h"

namespace focal::harness {
namespace {

// The tokenizer of a model directory, a GGUF file (kept open in `gguf`) or
// a tokenizer.model.
absl::StatusOr<std::unique_ptr<model::Tokenizer>> OpenTokenizer(
    const std::string& path, std::unique_ptr<model::GgufFile>& gguf) {
  if (absl::EndsWith(path, ".gguf")) {
    FOCAL_ASSIGN_OR_RETURN(gguf, model::GgufFile::Open(path));
    return model::LoadTokenizer(*gguf);
  }
  if (absl::EndsWith(path, ".model")) {
    FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<model::SentencePieceTokenizer> sp,
                           model::SentencePieceTokenizer::Load(path));
    return std::unique_ptr<model::Tokenizer>(std::move(sp));
  }
  if (!std::filesystem::is_directory(path)) {
    return absl::NotFoundError(absl::StrCat(
        "'", path, "' is neither a model directory, a .gguf file nor a tokenizer.model"));
  }
  return model::LoadTokenizer(path);
}

absl::StatusOr<std::string> Lines(const engine::PromptGroup& g, const model::Tokenizer& tok,
                                  bool add_bos) {
  std::string lines;
  for (const datasets::GenerationSample& s : g.samples) {
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> text_ids, tok.Encode(s.input, false));
    const int64_t prompt_tokens =
        static_cast<int64_t>(text_ids.size()) + (add_bos && tok.bos_id() >= 0 ? 1 : 0);
    // RULER's length where the generator recorded it, else RULER's rule.
    int64_t length = static_cast<int64_t>(text_ids.size()) + s.max_new_tokens;
    if (auto it = s.meta.find("ruler_length"); it != s.meta.end()) {
      if (!absl::SimpleAtoi(it->second, &length)) {
        return absl::InternalError(absl::StrCat("bad ruler_length '", it->second, "'"));
      }
    }
    JsonObjectWriter line(/*compact=*/true);
    line.Int("index", s.index)
        .String("input", s.input)
        .StringArray("outputs", s.outputs)
        .Int("length", length)
        .String("task", s.task)
        .Int("context_length", g.length);
    if (g.depth >= 0) line.ShortDouble("gold_depth", g.depth);
    line.Int("max_new_tokens", s.max_new_tokens)
        .StringArray("stop", s.stop)
        .Int("prompt_tokens", prompt_tokens)
        .String("prompt_sha256", Sha256Hex(s.input))
        .StringMap("meta", s.meta);
    absl::StrAppend(&lines, line.Finish(), "\n");
  }
  return lines;
}

}  // namespace

absl::Status RunPrompts(const PromptsOptions& p, std::ostream& out) {
  const RunOptions& o = p.run;
  FOCAL_ASSIGN_OR_RETURN(tasks::TaskRegistry registry, LoadRegistry(o));
  FOCAL_ASSIGN_OR_RETURN(std::vector<const tasks::Task*> selected, registry.Resolve(o.tasks));
  std::vector<const tasks::Task*> generation;
  std::vector<std::string> refused;
  for (const tasks::Task* t : selected) {
    if (t->spec().output_type() == tasks::GENERATE_UNTIL) {
      generation.push_back(t);
    } else {
      refused.push_back(t->name());
    }
  }
  if (!refused.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompts writes long-context (generation) tasks; ",
                     absl::StrJoin(refused, ", "), " score loglikelihoods of their documents"));
  }
  FOCAL_ASSIGN_OR_RETURN(const datasets::DataCatalog catalog, datasets::DataCatalog::LoadDefault());
  FOCAL_ASSIGN_OR_RETURN(engine::LongContextOptions lco,
                         MakeLongContextOptions(o, generation, catalog));
  for (const auto& [name, files] : lco.task_data) {
    if (files.origin == datasets::DataOrigin::kSample) {
      std::cerr << "focal-eval: " << name << ": " << datasets::kSampleWarning << "\n";
    }
  }
  std::string source = p.tokenizer;
  if (source.empty()) source = p.model;
  if (source.empty()) {
    FOCAL_ASSIGN_OR_RETURN(source, FindDefaultModel());
  }
  std::unique_ptr<model::GgufFile> gguf;
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<model::Tokenizer> tok, OpenTokenizer(source, gguf));
  lco.add_bos = engine::ResolveAddBos(o.bos, *tok);
  return engine::BuildPrompts(*tok, lco, [&](engine::PromptGroup g) -> absl::Status {
    FOCAL_ASSIGN_OR_RETURN(std::string lines, Lines(g, *tok, lco.add_bos));
    if (p.out_dir.empty()) {
      out << lines;
      return absl::OkStatus();
    }
    std::string dir = absl::StrCat(p.out_dir, "/", g.length, "/", g.task->name());
    if (g.depth >= 0) absl::StrAppend(&dir, "@", g.depth);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
    const std::string file = dir + "/validation.jsonl";
    FOCAL_RETURN_IF_ERROR(WriteFileAtomic(file, lines));
    out << file << ": " << g.samples.size() << " samples\n";
    return absl::OkStatus();
  });
}

}  // namespace focal::harness
