// SPDX-License-Identifier: Apache-2.0
// HELMET prompt construction: seconds per sample for each HELMET task at 8K
// to 128K tokens, with the Llama 2 (sentencepiece, ../shared) and SmolLM2
// (byte-level BPE, the default model) tokenizers, one thread; and the memory
// of building all samples of one run (the samples' bytes, and the process's
// peak RSS). Data from ../shared/data/helmet.
// Usage: helmet_bench [--samples N] [--lengths 8192,...] [--tasks T,...]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/helmet.h"
#include "datasets/long_context.h"
#include "engine/long_context_runner.h"
#include "model/gguf.h"
#include "model/tokenizer.h"
#include "model/tokenizer_loader.h"

namespace {

struct TaskDef {
  const char* task;
  const char* generator;
  const char* dataset;
};
constexpr TaskDef kTasks[] = {
    {"helmet_icl_trec_coarse", "helmet_icl", "trec_coarse"},
    {"helmet_icl_trec_fine", "helmet_icl", "trec_fine"},
    {"helmet_icl_banking77", "helmet_icl", "banking77"},
    {"helmet_icl_clinc150", "helmet_icl", "clinc150"},
    {"helmet_icl_nlu", "helmet_icl", "nlu"},
    {"helmet_json_kv", "helmet_json_kv", ""},
    {"helmet_rag_nq", "helmet_rag_nq", ""},
};

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t samples = 2;
  std::vector<int64_t> lengths = {8192, 16384, 32768, 65536, 131072};
  std::vector<std::string> only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--lengths")) {
      lengths.clear();
      for (absl::string_view p : absl::StrSplit(argv[i + 1], ',')) {
        int64_t v;
        if (absl::SimpleAtoi(p, &v)) lengths.push_back(v);
      }
    }
    if (!std::strcmp(argv[i], "--tasks")) only = absl::StrSplit(argv[i + 1], ',');
  }
  const std::string shared = focal::AssetRoot() + "/../shared";
  std::vector<std::pair<std::string, std::unique_ptr<focal::model::Tokenizer>>> toks;
  if (auto t = focal::model::LoadTokenizer(shared + "/models/llama2-tokenizer"); t.ok()) {
    toks.emplace_back("Llama 2 (sentencepiece)", *std::move(t));
  }
  // The default model's cache, as every command finds it.
  if (auto g = focal::model::GgufFile::Open(focal::DefaultModelPath()); g.ok()) {
    if (auto t = focal::model::LoadTokenizer(**g); t.ok()) {
      toks.emplace_back("SmolLM2 (byte-level BPE)", *std::move(t));
    }
  }
  if (toks.empty()) {
    std::fprintf(stderr,
                 "no tokenizer: needs ../shared/models/llama2-tokenizer or the default model\n");
    return 1;
  }
  std::printf(
      "HELMET prompt construction, %lld samples per task and length, one thread; "
      "seconds per sample\n",
      static_cast<long long>(samples));
  for (const auto& [name, tok] : toks) {
    focal::datasets::GeneratorOptions o =
        focal::engine::TokenizerGeneratorOptions(*tok, tok->adds_bos());
    o.num_samples = samples;

    std::printf("\n%s\n\n| task |", name.c_str());
    for (int64_t len : lengths) std::printf(" %lld |", static_cast<long long>(len));
    std::printf("\n|---|");
    for (size_t i = 0; i < lengths.size(); ++i) std::printf("---:|");
    std::printf("\n");
    int64_t bytes = 0;
    for (const TaskDef& d : kTasks) {
      if (!only.empty() && std::find(only.begin(), only.end(), d.task) == only.end()) continue;
      std::printf("| %s |", d.task);
      for (int64_t len : lengths) {
        focal::datasets::GeneratorRequest req;
        req.task = d.task;
        req.length = len;
        req.settings = o;
        if (d.dataset[0] != '\0') {
          req.options["dataset"] = d.dataset;
          const auto files = focal::datasets::HelmetIclFiles(d.dataset);
          if (!files.ok()) return 1;
          for (const auto& [role, rel] : *files) req.files[role] = shared + "/data/" + rel;
        }
        req.files["nq"] = shared + "/data/helmet/lost-in-the-middle/nq-open-oracle.jsonl.gz";
        req.gold_depth = 0.5;
        const auto t0 = std::chrono::steady_clock::now();
        auto s = focal::datasets::FindGenerator(d.generator)->make(req);
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!s.ok()) {
          std::printf(" error |");
          std::fprintf(stderr, "%s\n", std::string(s.status().message()).c_str());
          continue;
        }
        for (const auto& x : *s) bytes += static_cast<int64_t>(x.input.size());
        std::printf(" %.3f s |", secs / static_cast<double>(s->size()));
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    std::printf("\nprompt bytes built: %.1f MiB; peak RSS so far %.0f MiB\n", bytes / 1048576.0,
                PeakRssMiB());
  }
  return 0;
}
