// SPDX-License-Identifier: Apache-2.0
// Prompt-construction time per long-context sample: each RULER task and
// hotpotqa_long at 4K/16K/32K tokens, counted with a real tokenizer (Llama 2's
// from ../shared when present, else the bundled one) over the ../shared data
// (else the bundled samples). Usage: long_context_bench [--samples N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/asset_root.h"
#include "datasets/hotpotqa_long.h"
#include "datasets/ruler.h"
#include "model/sentencepiece_tokenizer.h"

int main(int argc, char** argv) {
  int64_t samples = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::atoll(argv[i + 1]);
  }
  const std::string root = focal::AssetRoot();
  const std::string shared = root + "/../shared";
  const bool have_shared = std::filesystem::exists(shared + "/data");
  const std::string tok_path = have_shared
                                   ? shared + "/models/llama2-tokenizer/tokenizer.model"
                                   : std::string(FOCAL_STORIES260K_DIR) + "/tokenizer.model";
  auto tok = focal::model::SentencePieceTokenizer::Load(tok_path);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", std::string(tok.status().message()).c_str());
    return 1;
  }
  focal::datasets::GeneratorOptions o;
  o.num_samples = samples;
  o.count_tokens = [&](absl::string_view t) -> absl::StatusOr<int64_t> {
    auto ids = (*tok)->Encode(t, true);
    if (!ids.ok()) return ids.status();
    return static_cast<int64_t>(ids->size());
  };
  const std::string d = have_shared ? shared + "/data/" : root + "/datasets/samples/";
  o.essay_haystack = d + (have_shared ? "haystack/PaulGrahamEssays.json" : "haystack_essays.json");
  o.squad = d + (have_shared ? "squad/xquad.en.json" : "squad_sample.json");
  o.hotpotqa =
      d + (have_shared ? "hotpotqa/hotpot_dev_distractor_500.jsonl" : "hotpotqa_sample.jsonl");
  o.word_list = root + "/datasets/words/ruler_words.txt";
  std::printf("prompt construction, %lld samples per task and length; tokenizer %s; data %s\n\n",
              static_cast<long long>(samples), tok_path.c_str(), d.c_str());
  std::printf("| task | 4096 | 16384 | 32768 |\n|---|---:|---:|---:|\n");
  std::vector<std::string> tasks = focal::datasets::RulerTaskNames();
  tasks.push_back("hotpotqa_long");
  for (const std::string& task : tasks) {
    std::printf("| %s |", task.c_str());
    for (int64_t len : {4096, 16384, 32768}) {
      auto t0 = std::chrono::steady_clock::now();
      auto s = task == "hotpotqa_long" ? focal::datasets::MakeHotpotQaLongSamples(len, 0.5, o)
                                       : focal::datasets::MakeRulerSamples(task, len, o);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!s.ok()) {
        std::printf(" error |");
      } else {
        std::printf(" %.3f s |", secs / static_cast<double>(s->size()));
      }
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  std::printf("\n(seconds per sample, one search per task and length included)\n");
  return 0;
}
