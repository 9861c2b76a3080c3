// SPDX-License-Identifier: Apache-2.0
// A task spec textproto (tasks/task_registry.h ParseTaskSpec, then
// Task::FromSpec as TaskRegistry::Load does), and what a run does with a
// task that validated: requests, few-shot prefix and scores for a document.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "datasets/generator.h"
#include "tasks/task.h"
#include "tasks/task_registry.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace focal;
  auto spec = tasks::ParseTaskSpec(fuzz::AsText(data, size), "fuzz.textproto");
  if (!spec.ok()) return 0;
  auto task = tasks::Task::FromSpec(*spec);
  if (!task.ok()) return 0;
  volatile size_t sink = 0;
  if (task->spec().output_type() == tasks::GENERATE_UNTIL) {
    sink = sink + (datasets::FindGenerator(task->spec().generator()) != nullptr);
    (void)sink;
    return 0;
  }
  // A document with the fields the bundled readers produce.
  std::vector<datasets::Doc> pool(3);
  for (size_t i = 0; i < pool.size(); ++i) {
    datasets::Doc& d = pool[i];
    d.id = std::to_string(i);
    d.index = static_cast<int64_t>(i);
    for (const char* f : {"question", "query", "goal", "passage", "text", "context", "target"}) {
      d.fields[f] = std::string(f) + " " + d.id;
    }
    d.choices = {"red", "green", "blue"};
    d.gold = static_cast<int>(i % 3);
  }
  PyRandom rnd(1234);
  auto prefix = task->FewshotPrefix(pool[0], pool, 2, /*exclude_doc=*/true, rnd);
  auto requests = task->BuildRequests(pool[0], prefix.ok() ? *prefix : "");
  if (requests.ok()) {
    std::vector<tasks::LoglikelihoodResult> results(requests->size());
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] = {-1.5 * static_cast<double>(i + 1), i == 0};
    }
    auto score = task->Score(pool[0], results);
    if (score.ok()) sink = sink + score->metrics.size();
    // Too few results must be refused, not read past.
    if (!results.empty()) {
      results.pop_back();
      sink = sink + task->Score(pool[0], results).ok();
    }
  }
  sink = sink + task->Choices(pool[0]).size();
  (void)sink;
  return 0;
}
