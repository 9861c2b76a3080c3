// SPDX-License-Identifier: Apache-2.0
#include "harness/compare.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "engine/diagnostics.h"
#include "google/protobuf/util/json_util.h"
#include "harness/commands.h"
#include "kernels/backend.h"
#include "model/language_model.h"
#include "reports/comparison.h"
#include "reports/html_report.h"
#include "reports/merge.h"
#include "reports/results_writer.h"
#include "tasks/metric_registry.h"

namespace focal::harness {
namespace {

// Attention summaries of every model into the report ("task@len@depth" keys
// split back into their parts).
void AddAttention(const reports::RunResults& runs, const std::vector<engine::ModelDetails>& details,
                  reports::ComparisonReport& rep) {
  for (size_t mi = 0; mi < details.size(); ++mi) {
    for (const auto& [key, d] : details[mi]) {
      if (!d.attention.has_value() || d.attention->samples == 0) continue;
      const engine::AttentionSummary& a = *d.attention;
      reports::AttentionStats* st = rep.add_attention();
      st->set_model_index(static_cast<int>(mi));
      st->set_variant(runs.models(static_cast<int>(mi)).variant());
      std::vector<std::string> parts = absl::StrSplit(key, '@');
      st->set_task(parts[0]);
      int64_t len = 0;
      double depth = 0;
      if (parts.size() > 1 && absl::SimpleAtoi(parts[1], &len)) st->set_context_length(len);
      if (parts.size() > 2 && absl::SimpleAtod(parts[2], &depth)) st->set_gold_depth(depth);
      st->set_samples(a.samples);
      for (int l = 0; l < a.num_layers; ++l) {
        reports::AttentionLayer* al = st->add_layers();
        al->set_layer(l);
        for (int h = 0; h < a.num_heads; ++h) {
          al->add_head_entropy(a.entropy[l * a.num_heads + h]);
          if (!a.mass.empty()) al->add_head_needle_mass(a.mass[l * a.num_heads + h]);
        }
      }
    }
  }
}

// Loads the base beside each focal model in turn and compares their
// distributions on the base's (identical) loglikelihood requests.
absl::Status AddAgreement(const RunOptions& o, const std::vector<engine::ModelDetails>& details,
                          reports::ComparisonReport& rep) {
  // Each model on the first device of the --device list (this pass is
  // short), at its own precision.
  std::vector<std::unique_ptr<kernels::Backend>> backends(o.models.size());
  auto load = [&](size_t i) -> absl::StatusOr<std::unique_ptr<model::LanguageModel>> {
    std::string device_note;
    FOCAL_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<kernels::Backend>> b,
                           CreateModelBackends(o, i, &device_note));
    if (!device_note.empty()) std::cerr << device_note << "\n";
    backends[i] = std::move(b[0]);
    model::LoadOptions lo;
    lo.focal_temperature = o.model_temperatures[i];
    lo.transformer.allow_length_extrapolation = o.allow_length_extrapolation;
    return model::LanguageModel::Load(o.models[i], *backends[i], lo);
  };
  std::unique_ptr<model::LanguageModel> base;
  for (size_t i = 1; i < o.models.size(); ++i) {
    std::unique_ptr<model::LanguageModel> focal;
    const reports::ModelRun& bm = rep.runs().models(0);
    const reports::ModelRun& fm = rep.runs().models(static_cast<int>(i));
    for (const auto& [task, d] : details[0]) {
      if (d.requests.empty()) continue;
      // Finished tasks are kept in the cache directory: a rerun resumes.
      const std::string cache_path =
          absl::StrCat(o.cache_dir, "/agreement-",
                       Sha256Hex(absl::StrCat(task, "|", d.requests_sha256, "|", CacheIdentity(bm),
                                              "|", CacheIdentity(fm)))
                           .substr(0, 16),
                       ".json");
      if (auto cached = ReadFile(cache_path); cached.ok()) {
        reports::LogitAgreement a;
        if (google::protobuf::util::JsonStringToMessage(*cached, &a).ok()) {
          // The cached numbers hold for this pair wherever it now stands
          // in --focal's list.
          a.set_focal_index(static_cast<int>(i));
          a.set_focal_variant(reports::VariantLabel(fm, bm));
          *rep.add_agreement() = std::move(a);
          continue;
        }
      }
      if (base == nullptr) {
        FOCAL_ASSIGN_OR_RETURN(base, load(0));
      }
      if (focal == nullptr) {
        FOCAL_ASSIGN_OR_RETURN(focal, load(i));
      }
      auto s = engine::MeasureAgreement(base->transformer(), focal->transformer(), d.requests,
                                        o.batch_tokens);
      if (!s.ok()) return Annotate(s.status(), absl::StrCat("logit agreement on ", task));
      reports::LogitAgreement* a = rep.add_agreement();
      a->set_task(task);
      a->set_focal_variant(reports::VariantLabel(fm, bm));
      a->set_focal_index(static_cast<int>(i));
      a->set_tokens(s->tokens);
      a->set_mean_kl(s->mean_kl);
      a->set_kl_stderr(s->kl_stderr);
      a->set_median_kl(s->median_kl);
      a->set_p99_kl(s->p99_kl);
      a->set_max_kl(s->max_kl);
      a->set_same_argmax(s->same_argmax);
      a->set_same_argmax_stderr(s->same_argmax_stderr);
      FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ToPrettyJson(*a));
      FOCAL_RETURN_IF_ERROR(WriteFileAtomic(cache_path, json));
    }
  }
  return absl::OkStatus();
}

// Creates report_dir and locks it: one compare per report directory at a time.
absl::StatusOr<FileLock> OpenReportDir(const std::string& report_dir) {
  std::error_code ec;
  std::filesystem::create_directories(report_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create report directory '", report_dir, "': ", ec.message()));
  }
  return FileLock::Acquire(report_dir + "/report");
}

// Every report file of `rep` into report_dir (atomically), the Markdown to `out`.
absl::Status WriteReports(const reports::ComparisonReport& rep, const std::string& report_dir,
                          std::ostream& out) {
  const std::string md = reports::ComparisonMarkdown(rep);
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.md", md));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.html", reports::ComparisonHtml(rep)));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.csv", reports::ComparisonCsv(rep)));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/table.tex", reports::ComparisonLatex(rep)));
  if (!rep.attention().empty()) {
    FOCAL_RETURN_IF_ERROR(
        WriteFileAtomic(report_dir + "/attention.csv", reports::ComparisonAttentionCsv(rep)));
  }
  FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ComparisonJson(rep));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/report.json", json));
  out << md;
  return absl::OkStatus();
}

// The shard's per-document values of model `mi`, keyed as the in-process
// comparison keys them ("task", or "task@length[@depth]"), per metric, and
// where each value came from (document index) for ordering.
absl::Status CollectDocValues(
    const reports::RunResults& shard, int mi,
    std::map<std::string, std::map<std::string, std::vector<std::pair<int64_t, double>>>>& out) {
  const reports::ModelRun& m = shard.models(mi);
  for (const reports::TaskResult& t : m.tasks()) {
    if (t.docs_size() != t.num_docs()) {
      return absl::FailedPreconditionError(
          absl::StrCat("compare --from-shards: shard ", shard.config().shard_index(),
                       " has no per-document "
                       "values for ",
                       t.task(), " (was it run with --shard I/N?)"));
    }
    for (const reports::DocValues& d : t.docs()) {
      std::string key = t.task();
      if (d.context_length() > 0) absl::StrAppend(&key, "@", d.context_length());
      if (d.has_gold_depth()) absl::StrAppend(&key, "@", d.gold_depth());
      // The metrics of this document's (length, depth), in TaskResult order.
      int pos = 0;
      for (const reports::MetricValue& mv : t.metrics()) {
        if (mv.context_length() != d.context_length() ||
            mv.has_gold_depth() != d.has_gold_depth() ||
            (d.has_gold_depth() && mv.gold_depth() != d.gold_depth())) {
          continue;
        }
        if (pos >= d.values_size()) {
          return absl::FailedPreconditionError(absl::StrCat("compare --from-shards: document ",
                                                            d.doc_index(), " of ", key, " lacks ",
                                                            mv.name()));
        }
        const tasks::MetricDef* def = tasks::FindMetric(mv.name());
        if (def == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat("compare --from-shards: ", key, ": unknown metric '", mv.name(), "'"));
        }
        // Shards store reported-scale values; comparisons take per-document ones.
        out[key][mv.name()].emplace_back(d.doc_index(), d.values(pos++) / def->scale);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCompare(RunOptions o, const std::string& base_spec,
                        const std::vector<std::string>& focal_specs, const std::string& report_dir,
                        const CompareSettings& settings, std::ostream& out) {
  if (o.focal_temperature.has_value()) {
    return absl::InvalidArgumentError(
        "compare: give temperatures per model (--focal DIR@t=T), not --focal-temperature");
  }
  std::string default_model;
  if (base_spec.empty() || focal_specs.empty()) {
    FOCAL_ASSIGN_OR_RETURN(default_model, FindDefaultModel());
  }
  std::vector<std::string> specs = {base_spec.empty() ? default_model : base_spec};
  if (focal_specs.empty()) {
    specs.push_back(absl::StrCat(default_model, "@t=0.4"));
  } else {
    specs.insert(specs.end(), focal_specs.begin(), focal_specs.end());
  }
  o.models.clear();
  o.model_temperatures.clear();
  o.model_precisions.clear();
  for (const std::string& s : specs) {
    FOCAL_ASSIGN_OR_RETURN(ModelSpec m, ParseModelSpec(s));
    o.models.push_back(m.dir);
    o.model_temperatures.push_back(m.temperature);
    o.model_precisions.push_back(m.precision);
  }
  FOCAL_ASSIGN_OR_RETURN(FileLock report_lock, OpenReportDir(report_dir));
  o.out = report_dir + "/results.json";
  o.samples = report_dir + "/samples.jsonl";
  if (o.cache_dir.empty()) o.cache_dir = report_dir + "/cache";
  o.keep_requests = settings.logit_agreement;
  o.attention_samples = settings.attention_samples;
  std::vector<engine::ModelDetails> details;
  std::ostringstream table;
  FOCAL_ASSIGN_OR_RETURN(reports::RunResults runs, RunEvaluation(o, table, &details));
  std::vector<reports::PerDocScores> scores;
  for (const engine::ModelDetails& md : details) {
    reports::PerDocScores p;
    for (const auto& [task, d] : md) {
      p.values[task] = d.per_doc;
      p.requests_sha256[task] = d.requests_sha256;
    }
    scores.push_back(std::move(p));
  }
  reports::CompareOptions co;
  co.bootstrap_iters = settings.bootstrap_iters;
  co.seed = settings.bootstrap_seed;
  FOCAL_ASSIGN_OR_RETURN(reports::ComparisonReport rep, reports::BuildComparison(runs, scores, co));
  AddAttention(runs, details, rep);
  if (settings.logit_agreement) FOCAL_RETURN_IF_ERROR(AddAgreement(o, details, rep));
  return WriteReports(rep, report_dir, out);
}

absl::Status RunCompareFromShards(const std::vector<std::string>& shard_dirs,
                                  const std::string& report_dir, const CompareSettings& settings,
                                  std::ostream& out) {
  // Each shard is a finished `compare --shard I/N` report directory: its
  // report.json exists only if its models scored identical requests.
  if (shard_dirs.empty()) return absl::InvalidArgumentError("compare --from-shards: no shards");
  std::vector<reports::RunResults> shards;
  std::vector<reports::ComparisonReport> reports_of;
  for (const std::string& dir : shard_dirs) {
    FOCAL_ASSIGN_OR_RETURN(std::string rj, ReadFile(dir + "/results.json"));
    FOCAL_ASSIGN_OR_RETURN(reports::RunResults r,
                           reports::ResultsFromJson(rj, dir + "/results.json"));
    FOCAL_ASSIGN_OR_RETURN(std::string cj, ReadFile(dir + "/report.json"));
    reports::ComparisonReport c;
    if (auto st = google::protobuf::util::JsonStringToMessage(cj, &c); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(dir, "/report.json: not a comparison report: ", st.ToString()));
    }
    shards.push_back(std::move(r));
    reports_of.push_back(std::move(c));
  }
  FOCAL_ASSIGN_OR_RETURN(reports::RunResults merged, reports::MergeShards(shards));
  // Shard order, for the chained request checksums.
  std::vector<size_t> order(shards.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return shards[a].config().shard_index() < shards[b].config().shard_index();
  });
  std::vector<reports::PerDocScores> scores(merged.models_size());
  for (int mi = 0; mi < merged.models_size(); ++mi) {
    std::map<std::string, std::map<std::string, std::vector<std::pair<int64_t, double>>>> values;
    for (size_t i : order) FOCAL_RETURN_IF_ERROR(CollectDocValues(shards[i], mi, values));
    for (auto& [key, metrics] : values) {
      for (auto& [name, xs] : metrics) {
        std::sort(xs.begin(), xs.end());  // document order, as one process scores them
        for (const auto& x : xs) scores[mi].values[key][name].push_back(x.second);
      }
      // Identical requests were checked per shard; chain the shards' checksums.
      std::string chained;
      for (size_t i : order) {
        auto it = reports_of[i].requests_sha256().find(key);
        absl::StrAppend(&chained, it == reports_of[i].requests_sha256().end() ? "-" : it->second);
      }
      scores[mi].requests_sha256[key] = Sha256Hex(chained);
    }
  }
  reports::CompareOptions co;
  co.bootstrap_iters = settings.bootstrap_iters;
  co.seed = settings.bootstrap_seed;
  for (const reports::ComparisonReport& c : reports_of) {
    if (c.bootstrap_iters() != reports_of[0].bootstrap_iters() ||
        c.bootstrap_seed() != reports_of[0].bootstrap_seed()) {
      return absl::InvalidArgumentError(
          "compare --from-shards: the shards used different --bootstrap or --bootstrap-seed");
    }
  }
  if (co.bootstrap_iters <= 0) co.bootstrap_iters = reports_of[0].bootstrap_iters();
  if (settings.bootstrap_seed_from_shards) co.seed = reports_of[0].bootstrap_seed();
  FOCAL_ASSIGN_OR_RETURN(reports::ComparisonReport rep,
                         reports::BuildComparison(merged, scores, co));
  FOCAL_ASSIGN_OR_RETURN(FileLock report_lock, OpenReportDir(report_dir));
  FOCAL_ASSIGN_OR_RETURN(std::string json, reports::ResultsToJson(merged));
  FOCAL_RETURN_IF_ERROR(WriteFileAtomic(report_dir + "/results.json", json));
  return WriteReports(rep, report_dir, out);
}

}  // namespace focal::harness
