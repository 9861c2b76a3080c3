// SPDX-License-Identifier: Apache-2.0
#include "tests/harness/lm_eval_parity.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "absl/strings/strip.h"
#include "base/asset_root.h"
#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/runner.h"
#include "tasks/metric_registry.h"
#include "tests/testing/test_util.h"

namespace focal::harness {
namespace {

using ::focal::testing::JsonInts;
using ::focal::testing::ReadJsonLines;

// The reference script's model_sha256: a file's SHA-256, or for a directory
// the SHA-256 of "<name> <sha256>\n" over its files in name order.
std::string ModelSha256(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return Sha256Hex(testing::ReadFileOrDie(path));
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string listing;
  for (const std::string& n : names) {
    listing += n + " " + Sha256Hex(testing::ReadFileOrDie(path + "/" + n)) + "\n";
  }
  return Sha256Hex(listing);
}

}  // namespace

std::map<std::string, std::string> SharedTaskFiles() {
  const std::string d = testing::SharedPath("data/");
  return {{"arc_easy", d + "arc/ARC-Easy-Test.jsonl"},
          {"arc_challenge", d + "arc/ARC-Challenge-Dev.jsonl"},
          {"hellaswag", d + "hellaswag/hellaswag_val_full.txt.bz2"},
          {"piqa", d + "piqa/valid.jsonl"},  // labels: valid-labels.lst beside it
          {"boolq", d + "boolq/dev.jsonl"},
          {"lambada_openai", d + "lambada/lambada_test.jsonl"},
          {"lambada_standard", d + "lambada/lambada_test_plain_text.txt"}};
}

ParityCase FetchedDataCase(std::string model, std::string model_hint, const std::string& golden,
                           const std::map<std::string, std::string>& files, int64_t limit) {
  ParityCase c;
  c.model = std::move(model);
  c.model_hint = std::move(model_hint);
  c.golden_dir = testing::SourcePath("tests/testdata/golden/" + golden + "/");
  c.data_root = DataCacheDir() + "/";
  for (const auto& [task, rel] : files) {
    c.data[task] = c.data_root + rel;
    c.required.push_back(c.data[task]);
  }
  c.data_hint = "bash scripts/fetch_data.sh";
  c.limit = limit;
  return c;
}

ParityCase SharedDataCase(std::string model, std::string model_hint, const std::string& golden,
                          int64_t limit) {
  ParityCase c;
  c.model = std::move(model);
  c.model_hint = std::move(model_hint);
  c.golden_dir = testing::SourcePath("tests/testdata/golden/" + golden + "/");
  c.data = SharedTaskFiles();
  for (const auto& [task, path] : c.data) c.required.push_back(path);
  c.required.push_back(testing::SharedPath("data/piqa/valid-labels.lst"));
  c.limit = limit;
  return c;
}

void LmEvalParity::RequireInputs(const ParityCase& c) {
  FOCAL_REQUIRE_FILE(c.model, c.model_hint);
  for (const std::string& f : c.required) {
    FOCAL_REQUIRE_FILE(f, c.data_hint);
  }
}

std::unique_ptr<LmEvalParity> LmEvalParity::Run(const ParityCase& c) {
  if (!std::filesystem::exists(c.model)) return nullptr;
  for (const std::string& f : c.required) {
    if (!std::filesystem::exists(f)) return nullptr;
  }
  std::unique_ptr<LmEvalParity> p(new LmEvalParity(c));
  const std::string dir = testing::MakeTempDir("lmeval_parity");
  RunOptions o;
  o.models = {c.model};
  o.tasks.clear();
  for (const auto& [task, path] : c.data) o.tasks += (o.tasks.empty() ? "" : ",") + task;
  o.data = c.data;
  o.fewshot_data = c.fewshot_data;
  o.num_fewshot = c.num_fewshot;
  o.limit = c.limit;
  o.device = "cpu";
  o.samples = dir + "/samples.jsonl";
  o.progress = false;
  o.keep_requests = true;  // the exact token ids scored, per task in doc order
  std::ostringstream out;
  std::vector<engine::ModelDetails> details;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunEvaluation(o, out, &details);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || details.size() != 1) return nullptr;
  std::printf("[ lm-eval ] %s, %zu tasks x %lld docs, %d-shot: %.1f s\n",
              std::filesystem::path(c.model).filename().c_str(), c.data.size(),
              static_cast<long long>(c.limit), c.num_fewshot, secs);
  p->results_ = *std::move(r);
  p->details_ = std::move(details[0]);
  for (JsonValue& v : ReadJsonLines(o.samples)) {
    p->samples_[v.Find("task")->string_value()].push_back(std::move(v));
  }
  return p;
}

JsonValue LmEvalParity::Aggregate() const {
  auto agg = ParseJson(testing::ReadFileOrDie(case_.golden_dir + "aggregate.json"),
                       case_.golden_dir + "aggregate.json");
  EXPECT_TRUE(agg.ok()) << agg.status();
  return agg.ok() ? *std::move(agg) : JsonValue();
}

// The allowed |ll - golden| for a continuation of n tokens (the rule in
// tests/testdata/golden/lm_eval_tolerance.json), with the case's per-token
// allowance.
double LmEvalParity::LlTolerance(double golden, size_t n_tokens) const {
  const LmEvalTolerance& t = LmEvalTolerances();
  return t.absolute + t.float32_ulps * std::ldexp(1.0, std::ilogb(golden) - 23) +
         case_.per_token_tolerance * static_cast<double>(n_tokens);
}

const LmEvalTolerance& LmEvalTolerances() {
  static const LmEvalTolerance* t = [] {
    const std::string path = testing::SourcePath("tests/testdata/golden/lm_eval_tolerance.json");
    auto* out = new LmEvalTolerance;  // zeros fail every comparison loudly
    auto json = ParseJson(testing::ReadFileOrDie(path), path);
    if (!json.ok()) {
      ADD_FAILURE() << json.status();
      return out;
    }
    for (auto [key, field] :
         {std::pair{"absolute", &out->absolute}, std::pair{"float32_ulps", &out->float32_ulps},
          std::pair{"per_token_large_vocab", &out->per_token_large_vocab}}) {
      const JsonValue* v = json->Find(key);
      if (v == nullptr || !v->is_number()) {
        ADD_FAILURE() << path << ": " << key << " is not a number";
      } else {
        *field = v->number();
      }
    }
    return out;
  }();
  return *t;
}

// The goldens belong to this model file and these data files.
void LmEvalParity::GoldensMatchTheInputs() const {
  const ParityCase& c = case_;
  const JsonValue agg = Aggregate();
  const JsonValue* meta = agg.Find("_meta");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(ModelSha256(c.model), meta->Find("model_sha256")->string_value())
      << c.model << " is not the model the goldens were made with";
  const std::string root = c.data_root.empty() ? testing::SharedPath("data/") : c.data_root;
  for (const char* key : {"data", "fewshot_data"}) {
    const JsonValue* files = meta->Find(key);
    ASSERT_NE(files, nullptr) << key;
    for (const auto& [task, per_task] : files->members()) {
      for (const auto& [rel, sha] : per_task.members()) {
        EXPECT_EQ(Sha256Hex(testing::ReadFileOrDie(root + rel)), sha.string_value())
            << key << " " << task << ": " << rel;
      }
    }
  }
  // The few-shot files we pass are those that filled lm-eval's training split.
  std::map<std::string, std::string> fewshot;
  for (const auto& [task, per_task] : meta->Find("fewshot_data")->members()) {
    fewshot[task] = root + per_task.members().front().first;
  }
  EXPECT_EQ(fewshot, c.fewshot_data);
  EXPECT_EQ(meta->Find("limit")->integer(), c.limit);
  EXPECT_EQ(meta->Find("num_fewshot")->integer(), c.num_fewshot);
  EXPECT_EQ(meta->Find("max_length")->integer(), results_.models(0).max_length());
  // BOS exactly where lm-eval's tokenizer adds one.
  EXPECT_EQ(meta->Find("add_special_tokens_adds")->bool_value(),
            results_.models(0).bos_policy() != "no-bos")
      << results_.models(0).bos_policy();
  for (const auto& t : results_.models(0).tasks()) EXPECT_EQ(t.num_fewshot(), c.num_fewshot);
}

void LmEvalParity::EveryRequestMatches() const {
  const ParityCase& c = case_;
  const JsonValue agg = Aggregate();
  const JsonValue* meta = agg.Find("_meta");
  ASSERT_NE(meta, nullptr);
  const int64_t max_length = meta->Find("max_length")->integer();
  int64_t total_requests = 0, total_own = 0;
  for (const auto& [task, path] : c.data) {
    SCOPED_TRACE(task);
    const std::vector<JsonValue> golden = ReadJsonLines(c.golden_dir + task + ".jsonl");
    ASSERT_EQ(samples_.count(task), 1u);
    const std::vector<JsonValue>& ours = samples_.at(task);
    // limit 0: the whole split, as the results count it.
    int64_t docs = c.limit;
    for (const auto& t : results_.models(0).tasks()) {
      if (t.task() == task && c.limit == 0) docs = t.num_docs_total();
    }
    ASSERT_EQ(static_cast<int64_t>(golden.size()), docs);
    ASSERT_EQ(ours.size(), golden.size());
    const std::vector<engine::TokenizedRequest>& toks = details_.at(task).requests;
    size_t next = 0;  // index into toks: requests in doc order
    double max_diff = 0;
    double max_per_token = 0;
    int64_t checked = 0, truncated = 0, own_tokenizer = 0;
    for (size_t di = 0; di < golden.size(); ++di) {
      const JsonValue& g = golden[di];
      const JsonValue& o = ours[di];
      const int64_t id = g.Find("doc_id")->integer();
      ASSERT_EQ(o.Find("doc_index")->integer(), id);
      const auto& reqs = g.Find("requests")->array();
      const auto& conts = o.Find("continuations")->array();
      ASSERT_EQ(reqs.size(), conts.size()) << "doc " << id;
      // Multiple-input tasks (WinoGrande) log one context per request.
      const JsonValue* contexts = o.Find("contexts");
      for (size_t k = 0; k < reqs.size(); ++k) {
        const JsonValue& r = reqs[k];
        const std::string& context = contexts != nullptr ? contexts->array()[k].string_value()
                                                         : o.Find("context")->string_value();
        ASSERT_EQ(Sha256Hex(context), r.Find("context_sha256")->string_value())
            << "doc " << id << ": the context differs from lm-eval's";
        ASSERT_EQ(Sha256Hex(conts[k].string_value()), r.Find("continuation_sha256")->string_value())
            << "doc " << id << " request " << k << ": the continuation differs from lm-eval's";
        // Where the model's own tokenizer (which we follow) encodes the pair
        // differently from transformers' (see the script), the golden holds
        // those ids with their HF loglikelihood; compare against them.
        const JsonValue* own = r.Find("model_tokenizer");
        const JsonValue& want_req = own != nullptr ? *own : r;
        std::vector<int32_t> full = JsonInts(*want_req.Find("context_tokens"));
        const std::vector<int32_t> cont = JsonInts(*want_req.Find("continuation_tokens"));
        if (own != nullptr) {
          ++own_tokenizer;
          EXPECT_TRUE(full != JsonInts(*r.Find("context_tokens")) ||
                      cont != JsonInts(*r.Find("continuation_tokens")))
              << "doc " << id << " request " << k << ": model_tokenizer ids equal lm-eval's";
        }
        const int64_t lm_eval_total =
            static_cast<int64_t>(r.Find("context_tokens")->array().size() +
                                 r.Find("continuation_tokens")->array().size());
        EXPECT_EQ(r.Find("truncated")->integer(),
                  std::max<int64_t>(0, lm_eval_total - max_length - 1));
        full.insert(full.end(), cont.begin(), cont.end());
        // lm-eval's context + continuation, left-truncated to max_length + 1,
        // the last token dropped.
        const int64_t cut =
            std::max<int64_t>(0, static_cast<int64_t>(full.size()) - max_length - 1);
        truncated += cut > 0;
        ASSERT_LT(next, toks.size());
        const engine::TokenizedRequest& tr = toks[next++];
        EXPECT_EQ(tr.input, std::vector<int32_t>(full.begin() + cut, full.end() - 1))
            << "doc " << id << " request " << k;
        EXPECT_EQ(tr.continuation, cont) << "doc " << id << " request " << k;
        EXPECT_EQ(tr.truncated, cut > 0) << "doc " << id << " request " << k;
        const double want = want_req.Find("ll")->number();
        const double ll = o.Find("loglikelihoods")->array()[k].number();
        max_diff = std::max(max_diff, std::abs(ll - want));
        EXPECT_LE(std::abs(ll - want), LlTolerance(want, cont.size()))
            << "doc " << id << " request " << k;
        max_per_token = std::max(max_per_token, std::abs(ll - want) / cont.size());
        EXPECT_EQ(o.Find("is_greedy")->array()[k].bool_value(),
                  want_req.Find("is_greedy")->bool_value())
            << "doc " << id << " request " << k;
        ++checked;
      }
      if (const JsonValue* gold = g.Find("gold")) {
        EXPECT_EQ(o.Find("gold")->integer(), gold->integer()) << "doc " << id;
      } else if (contexts != nullptr) {
        // Multiple input: lm-eval logs the shared continuation (without the
        // target delimiter) as the target; the gold index is in the metrics.
        absl::string_view cont = conts[0].string_value();
        absl::ConsumePrefix(&cont, " ");
        EXPECT_EQ(Sha256Hex(cont), g.Find("gold_sha256")->string_value()) << "doc " << id;
      } else {
        EXPECT_EQ(Sha256Hex(o.Find("gold")->string_value()), g.Find("gold_sha256")->string_value())
            << "doc " << id;
      }
      const JsonValue* own_metrics = g.Find("model_tokenizer_metrics");
      for (const auto& [name, value] :
           (own_metrics != nullptr ? own_metrics : g.Find("metrics"))->members()) {
        const JsonValue* ov = o.Find("metrics")->Find(name);
        ASSERT_NE(ov, nullptr) << name;
        if (name == "perplexity") {  // lm-eval's per-doc value is the loglikelihood
          const JsonValue& r0 =
              reqs[0].Find("model_tokenizer") ? *reqs[0].Find("model_tokenizer") : reqs[0];
          EXPECT_LE(std::abs(ov->number() - value.number()),
                    LlTolerance(value.number(), r0.Find("continuation_tokens")->array().size()))
              << "doc " << id;
        } else {
          EXPECT_EQ(ov->number(), value.number()) << name << " doc " << id;
        }
      }
    }
    EXPECT_EQ(next, toks.size());
    total_requests += checked;
    total_own += own_tokenizer;
    std::printf(
        "[ lm-eval ] %-16s %4lld requests (%lld truncated, %lld by the model's own tokenizer), "
        "max |ll - lm-eval| = %.2g (per token %.2g)\n",
        task.c_str(), static_cast<long long>(checked), static_cast<long long>(truncated),
        static_cast<long long>(own_tokenizer), max_diff, max_per_token);
  }
  EXPECT_EQ(total_requests, meta->Find("requests")->integer());
  EXPECT_EQ(total_own, meta->Find("requests_model_tokenizer_differs")->integer());
}

void LmEvalParity::AggregatesMatch() const {
  const ParityCase& c = case_;
  const JsonValue agg = Aggregate();
  ASSERT_EQ(results_.models_size(), 1);
  ASSERT_EQ(results_.models(0).tasks_size(), static_cast<int>(c.data.size()));
  for (const auto& t : results_.models(0).tasks()) {
    SCOPED_TRACE(t.task());
    const JsonValue* g = agg.Find(t.task());
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(t.num_docs(), g->Find("n")->integer());
    // The golden per-document values, for our aggregation on lm-eval's inputs.
    // `expected_docs`: the same with model_tokenizer_metrics where present
    // (what we must produce); `own_changed`: whether that changes any value.
    std::map<std::string, std::vector<double>> golden_docs, expected_docs;
    bool own_changed = false;
    double ll_tol = 0;  // the largest per-request tolerance of EveryRequestMatches
    for (const JsonValue& d : ReadJsonLines(c.golden_dir + t.task() + ".jsonl")) {
      const JsonValue* own = d.Find("model_tokenizer_metrics");
      for (const auto& [name, v] : d.Find("metrics")->members()) {
        golden_docs[name].push_back(v.number());
        const double e = own != nullptr ? own->Find(name)->number() : v.number();
        expected_docs[name].push_back(e);
        own_changed |= e != v.number();
      }
      for (const JsonValue& r : d.Find("requests")->array()) {
        const JsonValue* o = r.Find("model_tokenizer");
        const JsonValue& w = o != nullptr ? *o : r;
        ll_tol = std::max(ll_tol, LlTolerance(w.Find("ll")->number(),
                                              w.Find("continuation_tokens")->array().size()));
      }
    }
    for (const auto& mv : t.metrics()) {
      SCOPED_TRACE(mv.name());
      const double want = g->Find(mv.name())->number();
      const double want_se = g->Find(mv.name() + "_stderr")->number();
      const tasks::MetricDef& def = *tasks::FindMetric(mv.name());
      const std::vector<double>& xs = golden_docs[mv.name()];
      ASSERT_EQ(static_cast<int64_t>(xs.size()), t.num_docs());
      if (mv.name() == "perplexity") {
        // Our aggregation on lm-eval's own loglikelihoods reproduces its
        // numbers (the bootstrap replays CPython's Random(i) draws).
        EXPECT_NEAR(tasks::AggregateValue(def, xs) / want, 1.0, 1e-12);
        EXPECT_NEAR(tasks::AggregateStderr(def, xs) / want_se, 1.0, 1e-9);
        // Our loglikelihoods differ from lm-eval's by at most d = ll_tol
        // each, so log(perplexity) = -mean(ll) differs by at most d. A
        // bootstrap draw's exp(-mean) is the golden one times e^(m + r), m the
        // mean difference, |r| <= 2d its variation across draws; the stderr
        // (a standard deviation of those draws) then moves by at most a
        // factor e^d and 2d * (an rms draw ~ perplexity) in absolute terms.
        // (With model_tokenizer loglikelihoods in place of some of lm-eval's,
        // the reference is our aggregation of the substituted values.)
        const std::vector<double>& es = expected_docs[mv.name()];
        const double ref = own_changed ? tasks::AggregateValue(def, es) : want;
        const double ref_se = own_changed ? tasks::AggregateStderr(def, es) : want_se;
        EXPECT_LE(std::abs(std::log(mv.value() / ref)), ll_tol);
        EXPECT_LE(std::abs(mv.stderr() / ref_se - 1.0), 1.1 * ll_tol * (1.0 + 2.0 * ref / ref_se));
      } else {
        // Identical per-document 0/1 values: the same mean and sample stderr.
        EXPECT_EQ(tasks::AggregateValue(def, xs), want);
        EXPECT_NEAR(tasks::AggregateStderr(def, xs), want_se, 1e-12);
        const std::vector<double>& es = expected_docs[mv.name()];
        EXPECT_EQ(mv.value(), tasks::AggregateValue(def, es));
        EXPECT_NEAR(mv.stderr(), tasks::AggregateStderr(def, es), 1e-12);
        if (!own_changed) {
          EXPECT_EQ(mv.value(), want);
          EXPECT_NEAR(mv.stderr(), want_se, 1e-12);
        }
      }
    }
  }
}

}  // namespace focal::harness
