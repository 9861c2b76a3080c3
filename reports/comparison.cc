// SPDX-License-Identifier: Apache-2.0
#include "reports/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "reports/length_summary.h"
#include "reports/results_writer.h"
#include "reports/stats.h"
#include "tasks/metric_registry.h"
#include "tasks/metrics.h"

namespace focal::reports {
namespace {

bool AllBinary(const std::vector<double>& v) {
  for (double x : v) {
    if (x != 0.0 && x != 1.0) return false;
  }
  return true;
}

std::string Fmt(double x) { return std::isnan(x) ? "N/A" : absl::StrFormat("%.4f", x); }

std::string MetricLabel(const MetricComparison& r) {
  const double depth = r.gold_depth();
  return ::focal::reports::MetricLabel(r.metric(), r.context_length(),
                                       r.has_gold_depth() ? &depth : nullptr);
}

double MeanOf(const google::protobuf::RepeatedField<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::nan("") : s / v.size();
}

std::string AttentionTaskLabel(const AttentionStats& a) {
  std::string s = a.task();
  if (a.context_length() > 0) absl::StrAppend(&s, "@", a.context_length());
  if (a.has_gold_depth()) absl::StrAppend(&s, " depth ", a.gold_depth());
  return s;
}

std::string AgreementMarkdown(const ComparisonReport& rep) {
  if (rep.agreement().empty()) return "";
  std::string out =
      "\n## Logit agreement with the base (scored continuation tokens)\n\n"
      "KL(base || focal) of the full next-token distributions, in nats per token; same top-1: "
      "share of tokens where both models' most likely token agrees. A large KL with a high "
      "same-top-1 share means focal changed the distribution but not the answer.\n\n"
      "| Task | Variant | Tokens | Mean KL | Median KL | KL 99% | Max KL | Same top-1 |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const LogitAgreement& a : rep.agreement()) {
    absl::StrAppend(
        &out, "| ", a.task(), " | ", a.focal_variant(), " | ", a.tokens(), " | ",
        absl::StrFormat("%.6f ± %.6f", a.mean_kl(), a.kl_stderr()), " | ",
        absl::StrFormat("%.6f", a.median_kl()), " | ", absl::StrFormat("%.6f", a.p99_kl()), " | ",
        absl::StrFormat("%.6f", a.max_kl()), " | ",
        absl::StrFormat("%.2f ± %.2f%%", 100 * a.same_argmax(), 100 * a.same_argmax_stderr()),
        " |\n");
  }
  return out;
}

std::string AttentionMarkdown(const ComparisonReport& rep) {
  if (rep.attention().empty()) return "";
  const std::vector<LayerCurve> curves = AttentionCurves(rep);
  std::string header = "| Layer |", rule = "|---:|";
  for (const LayerCurve& c : curves) {
    absl::StrAppend(&header, " ", c.label, " |");
    absl::StrAppend(&rule, "---:|");
  }
  std::string out = absl::StrCat(
      "\n## Attention diagnostics\n\nEntropy (nats) of the attention distribution at the final "
      "query position of each probed prompt (the last context token), mean over heads and "
      "tasks; lower is sharper.\n\n",
      header, "\n", rule, "\n");
  size_t layers = 0;
  for (const LayerCurve& c : curves) layers = std::max(layers, c.entropy.size());
  for (size_t l = 0; l < layers; ++l) {
    absl::StrAppend(&out, "| ", l, " |");
    for (const LayerCurve& c : curves) {
      absl::StrAppend(&out, " ", l < c.entropy.size() ? Fmt(c.entropy[l]) : "-", " |");
    }
    absl::StrAppend(&out, "\n");
  }
  bool any_mass = false;
  for (const LayerCurve& c : curves) any_mass |= !c.needle_mass.empty();
  if (any_mass) {
    absl::StrAppend(&out,
                    "\nAttention mass on the queried needles' tokens (RULER NIAH), mean over "
                    "heads, tasks and lengths; higher is better focused.\n\n",
                    header, "\n", rule, "\n");
    for (size_t l = 0; l < layers; ++l) {
      absl::StrAppend(&out, "| ", l, " |");
      for (const LayerCurve& c : curves) {
        absl::StrAppend(&out, " ", l < c.needle_mass.size() ? Fmt(c.needle_mass[l]) : "-", " |");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  // Per task: mean over layers and heads.
  absl::StrAppend(&out, "\nPer task (mean over layers and heads; needle mass in parentheses):\n\n",
                  "| Task | Samples |");
  for (const LayerCurve& c : curves) absl::StrAppend(&out, " ", c.label, " |");
  absl::StrAppend(&out, "\n|---|---:|");
  for (size_t i = 0; i < curves.size(); ++i) absl::StrAppend(&out, "---:|");
  absl::StrAppend(&out, "\n");
  std::vector<std::string> keys;
  std::map<std::string, std::map<int, const AttentionStats*>> by_task;
  for (const AttentionStats& a : rep.attention()) {
    const std::string k = AttentionTaskLabel(a);
    if (by_task.find(k) == by_task.end()) keys.push_back(k);
    by_task[k][a.model_index()] = &a;
  }
  for (const std::string& k : keys) {
    const auto& m = by_task[k];
    absl::StrAppend(&out, "| ", k, " | ", m.begin()->second->samples(), " |");
    for (const LayerCurve& c : curves) {
      auto it = m.find(c.model_index);
      if (it == m.end()) {
        absl::StrAppend(&out, " - |");
        continue;
      }
      double e = 0, ms = 0;
      bool has_mass = false;
      for (const AttentionLayer& l : it->second->layers()) {
        e += MeanOf(l.head_entropy());
        if (!l.head_needle_mass().empty()) {
          ms += MeanOf(l.head_needle_mass());
          has_mass = true;
        }
      }
      const double n = std::max(1, it->second->layers_size());
      absl::StrAppend(&out, " ", Fmt(e / n));
      if (has_mass) absl::StrAppend(&out, " (", Fmt(ms / n), ")");
      absl::StrAppend(&out, " |");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

// The categories of `means` in report order: RULER, then HELMET's ICL,
// recall and RAG.
template <typename M>
std::vector<std::string> CategoryOrder(const M& means) {
  static const char* kOrder[] = {"ruler", "helmet_icl", "helmet_recall", "helmet_rag"};
  std::vector<std::string> out;
  for (const char* c : kOrder) {
    if (means.count(c) > 0) out.push_back(c);
  }
  for (const auto& [c, v] : means) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

}  // namespace

AverageCells FormatAverage(const LengthComparison& l) {
  AverageCells c;
  c.base = Fmt(l.base_average());
  c.focal = Fmt(l.focal_average());
  c.diff = Fmt(l.focal_average() - l.base_average());
  c.ci = l.has_ci_low() ? absl::StrCat("[", Fmt(l.ci_low()), ", ", Fmt(l.ci_high()), "]") : "-";
  c.pairs = l.num_pairs() > 0 ? absl::StrCat(l.num_pairs()) : "-";
  c.relative = std::isnan(l.relative_improvement())
                   ? "N/A"
                   : absl::StrFormat("%+.1f%%", 100 * l.relative_improvement());
  c.significant = l.has_ci_low() && (l.ci_low() > 0 || l.ci_high() < 0);
  return c;
}

std::vector<LayerCurve> AttentionCurves(const ComparisonReport& rep) {
  std::map<int, LayerCurve> curves;
  std::map<int, std::vector<int>> entropy_n, mass_n;
  for (const AttentionStats& a : rep.attention()) {
    LayerCurve& c = curves[a.model_index()];
    c.model_index = a.model_index();
    if (a.model_index() >= 0 && a.model_index() < rep.runs().models_size()) {
      c.label = ModelLabel(rep.runs().models(a.model_index()));
    } else {
      c.label = a.variant();
    }
    const size_t layers = static_cast<size_t>(a.layers_size());
    if (c.entropy.size() < layers) c.entropy.resize(layers, 0.0);
    entropy_n[a.model_index()].resize(std::max(entropy_n[a.model_index()].size(), layers), 0);
    for (const AttentionLayer& l : a.layers()) {
      c.entropy[l.layer()] += MeanOf(l.head_entropy());
      ++entropy_n[a.model_index()][l.layer()];
      if (l.head_needle_mass().empty()) continue;
      if (c.needle_mass.size() < layers) c.needle_mass.resize(layers, 0.0);
      mass_n[a.model_index()].resize(std::max(mass_n[a.model_index()].size(), layers), 0);
      c.needle_mass[l.layer()] += MeanOf(l.head_needle_mass());
      ++mass_n[a.model_index()][l.layer()];
    }
  }
  std::vector<LayerCurve> out;
  for (auto& [i, c] : curves) {
    for (size_t l = 0; l < c.entropy.size(); ++l) {
      c.entropy[l] = entropy_n[i][l] > 0 ? c.entropy[l] / entropy_n[i][l] : std::nan("");
    }
    for (size_t l = 0; l < c.needle_mass.size(); ++l) {
      c.needle_mass[l] = mass_n[i][l] > 0 ? c.needle_mass[l] / mass_n[i][l] : std::nan("");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string ComparisonAttentionCsv(const ComparisonReport& rep) {
  std::string out =
      "model,variant,task,context_length,gold_depth,samples,layer,head,entropy,needle_mass\n";
  for (const AttentionStats& a : rep.attention()) {
    const std::string model = a.model_index() < rep.runs().models_size()
                                  ? rep.runs().models(a.model_index()).model_path()
                                  : "";
    for (const AttentionLayer& l : a.layers()) {
      for (int h = 0; h < l.head_entropy_size(); ++h) {
        absl::StrAppend(
            &out, "\"", model, "\",\"", a.variant(), "\",", a.task(), ",", a.context_length(), ",",
            a.has_gold_depth() ? absl::StrCat(a.gold_depth()) : "", ",", a.samples(), ",",
            l.layer(), ",", h, ",", absl::StrFormat("%.8g", l.head_entropy(h)), ",",
            h < l.head_needle_mass_size() ? absl::StrFormat("%.8g", l.head_needle_mass(h)) : "",
            "\n");
      }
    }
  }
  return out;
}

absl::StatusOr<ComparisonReport> BuildComparison(const RunResults& runs,
                                                 const std::vector<PerDocScores>& scores,
                                                 const CompareOptions& o) {
  if (runs.models_size() < 2 || scores.size() != static_cast<size_t>(runs.models_size())) {
    return absl::InvalidArgumentError("a comparison needs a base and at least one focal model");
  }
  ComparisonReport rep;
  *rep.mutable_runs() = runs;
  rep.set_bootstrap_iters(o.bootstrap_iters);
  rep.set_bootstrap_seed(o.seed);
  rep.set_confidence(o.confidence);
  const PerDocScores& base = scores[0];
  for (const auto& [task, sha] : base.requests_sha256) (*rep.mutable_requests_sha256())[task] = sha;
  for (size_t k = 1; k < scores.size(); ++k) {
    const PerDocScores& focal = scores[k];
    const ModelRun& fm = runs.models(static_cast<int>(k));
    // category -> length -> its tasks' scores and per-document values
    struct CategoryCell {
      std::vector<double> base, focal;
      std::vector<PairedStratum> strata;
      bool all_means = true;  // every metric a mean of per-document values
    };
    std::map<std::string, std::map<int64_t, CategoryCell>> category_means;
    for (const auto& [task_key, metrics] : base.values) {
      auto fit = focal.values.find(task_key);
      if (fit == focal.values.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("model ", fm.model_path(), " has no results for ", task_key));
      }
      if (base.requests_sha256.at(task_key) != focal.requests_sha256.at(task_key)) {
        return absl::FailedPreconditionError(
            absl::StrCat(task_key, ": the models scored different requests (checksums ",
                         base.requests_sha256.at(task_key).substr(0, 12), " vs ",
                         focal.requests_sha256.at(task_key).substr(0, 12),
                         "; e.g. different tokenizers): refusing to pair them"));
      }
      std::vector<std::string> parts = absl::StrSplit(task_key, '@');
      const std::string task = parts[0];
      int64_t length = 0;
      double depth = -1;
      if (parts.size() > 1) (void)absl::SimpleAtoi(parts[1], &length);
      if (parts.size() > 2) (void)absl::SimpleAtod(parts[2], &depth);
      for (const auto& [metric, a] : metrics) {
        const tasks::MetricDef* def = tasks::FindMetric(metric);
        if (def == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(task_key, ": unknown metric '", metric, "'"));
        }
        const double scale = def->scale;
        const std::vector<double>& b = fit->second.at(metric);
        MetricComparison* r = rep.add_rows();
        r->set_task(task);
        r->set_metric(metric);
        r->set_context_length(length);
        if (depth >= 0) r->set_gold_depth(depth);
        r->set_focal_variant(VariantLabel(fm, runs.models(0)));
        r->set_focal_model(fm.model_path());
        r->set_n(static_cast<int64_t>(a.size()));
        // Per-document values are "higher is better" even for perplexity (each is an ll).
        WinTieLoss w = CountWinTieLoss(a, b);
        r->set_wins(w.wins);
        r->set_ties(w.ties);
        r->set_losses(w.losses);
        r->set_higher_is_better(def->higher_is_better);
        if (def->paired == tasks::PairedStatistic::kRatio) {
          r->set_base(tasks::AggregateValue(*def, a));
          r->set_focal(tasks::AggregateValue(*def, b));
          r->set_diff(r->focal() / r->base());
          r->set_rel_diff(r->diff() - 1);
          auto ci = PairedBootstrapPerplexityRatio(a, b, o.bootstrap_iters, o.seed, o.confidence);
          if (!ci.ok()) return ci.status();
          r->set_ci_low(ci->low);
          r->set_ci_high(ci->high);
          r->set_significant(ci->low > 1 || ci->high < 1);
          continue;
        }
        r->set_base(scale * tasks::AggregateValue(*def, a));
        r->set_focal(scale * tasks::AggregateValue(*def, b));
        r->set_diff(r->focal() - r->base());
        r->set_rel_diff(r->base() != 0 ? r->diff() / std::abs(r->base()) : std::nan(""));
        auto ci = PairedBootstrapDiff(a, b, o.bootstrap_iters, o.seed, o.confidence);
        if (!ci.ok()) return ci.status();
        r->set_ci_low(scale * ci->low);
        r->set_ci_high(scale * ci->high);
        r->set_significant(ci->low > 0 || ci->high < 0);
        if (AllBinary(a) && AllBinary(b)) {
          auto m = McNemarExact(a, b);
          if (!m.ok()) return m.status();
          r->set_mcnemar_p(m->p_value);
        }
        if (const std::string cat = LengthCategoryOf(task); length > 0 && !cat.empty()) {
          CategoryCell& cell = category_means[cat][length];
          cell.base.push_back(r->base());
          cell.focal.push_back(r->focal());
          cell.strata.push_back({a, b, scale});
          cell.all_means = cell.all_means && def->aggregation == tasks::Aggregation::kMean;
        }
      }
    }
    for (const std::string& cat : CategoryOrder(category_means)) {
      for (const auto& [len, v] : category_means.at(cat)) {
        LengthComparison* l = rep.add_lengths();
        l->set_focal_variant(VariantLabel(fm, runs.models(0)));
        l->set_context_length(len);
        l->set_base_average(tasks::Mean(v.base));
        l->set_focal_average(tasks::Mean(v.focal));
        l->set_relative_improvement(
            l->base_average() != 0 ? (l->focal_average() - l->base_average()) / l->base_average()
                                   : std::nan(""));
        l->set_category(cat);
        l->set_num_tasks(static_cast<int64_t>(v.base.size()));
        int64_t pairs = 0;
        for (const PairedStratum& st : v.strata) pairs += static_cast<int64_t>(st.a.size());
        l->set_num_pairs(pairs);
        if (v.all_means) {
          FOCAL_ASSIGN_OR_RETURN(
              Interval ci,
              StratifiedPairedBootstrapDiff(v.strata, o.bootstrap_iters, o.seed, o.confidence));
          l->set_ci_low(ci.low);
          l->set_ci_high(ci.high);
        }
      }
    }
  }
  return rep;
}

int64_t FewestTasks(const ComparisonReport& rep, const std::string& category) {
  int64_t fewest = kRulerTaskCount;
  for (const LengthComparison& l : rep.lengths()) {
    // Reports written before num_tasks existed have 0: unknown, not partial.
    if (LengthCategoryOf(l) == category && l.num_tasks() > 0) {
      fewest = std::min(fewest, l.num_tasks());
    }
  }
  return fewest;
}

std::vector<std::string> LengthCategories(const ComparisonReport& rep) {
  std::vector<std::string> out;
  for (const LengthComparison& l : rep.lengths()) {
    const std::string c = LengthCategoryOf(l);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string VariantLabel(const ModelRun& model, const ModelRun& base) {
  if (model.backend() == base.backend()) return model.variant();
  return absl::StrCat(model.variant(), ", ", model.backend());
}

std::string ComparisonMarkdown(const ComparisonReport& rep) {
  const ModelRun& b = rep.runs().models(0);
  std::string out = "# focal-eval comparison\n\n";
  if (!rep.runs().config().data_warning().empty()) {
    absl::StrAppend(&out, "**Warning:** ", rep.runs().config().data_warning(), "\n\n");
  }
  absl::StrAppend(&out, "Base: `", b.model_path(), "` (", VariantLabel(b, b), ", weights ",
                  b.weights_sha256().substr(0, 12), ")\n");
  for (int i = 1; i < rep.runs().models_size(); ++i) {
    const ModelRun& f = rep.runs().models(i);
    absl::StrAppend(&out, "Focal: `", f.model_path(), "` (", VariantLabel(f, b), ", weights ",
                    f.weights_sha256().substr(0, 12), ")\n");
  }
  absl::StrAppend(&out, "\nPaired per document on identical requests; ",
                  absl::StrFormat("%.0f%%", 100 * rep.confidence()),
                  " intervals by paired bootstrap (", rep.bootstrap_iters(), " resamples, seed ",
                  rep.bootstrap_seed(),
                  "); McNemar's exact test for 0/1 metrics. **Bold**: the interval excludes no "
                  "change. Perplexity rows show focal/base ratios.\n\n");
  absl::StrAppend(
      &out,
      "| Task | Metric | n | Base | Focal | Variant | Δ | rel. Δ | CI | McNemar p | W/T/L |\n"
      "|---|---|---:|---:|---:|---|---:|---:|---|---:|---|\n");
  for (const MetricComparison& r : rep.rows()) {
    std::string d = Fmt(r.diff());
    if (r.significant()) d = absl::StrCat("**", d, "**");
    absl::StrAppend(
        &out, "| ", r.task(), " | ", MetricLabel(r), " | ", r.n(), " | ", Fmt(r.base()), " | ",
        Fmt(r.focal()), " | ", r.focal_variant(), " | ", d, " | ",
        std::isnan(r.rel_diff()) ? "N/A" : absl::StrFormat("%+.1f%%", 100 * r.rel_diff()), " | [",
        Fmt(r.ci_low()), ", ", Fmt(r.ci_high()), "] | ",
        r.has_mcnemar_p() ? Fmt(r.mcnemar_p()) : "-", " | ", r.wins(), "/", r.ties(), "/",
        r.losses(), " |\n");
  }
  // A shard can hold none of a task's documents (fewer than shards): say so
  // rather than leave the task out of the table unexplained.
  std::vector<std::string> empty;
  for (const TaskResult& t : b.tasks()) {
    if (t.num_docs() == 0) empty.push_back(t.task());
  }
  if (!empty.empty()) {
    absl::StrAppend(&out, "\nNo documents of ", absl::StrJoin(empty, ", "), " in this shard (",
                    rep.runs().config().shard_index(), "/", rep.runs().config().shard_count(),
                    "); `compare --from-shards` joins the shards.\n");
  }
  for (const std::string& cat : LengthCategories(rep)) {
    absl::StrAppend(&out, "\n## ", LengthCategoryTitle(cat),
                    " average per length\n\n| Variant | Length | Base | Focal | Δ | CI | Pairs | "
                    "Relative improvement |\n|---|---:|---:|---:|---:|---|---:|---:|\n");
    for (const LengthComparison& l : rep.lengths()) {
      if (LengthCategoryOf(l) != cat) continue;
      const AverageCells c = FormatAverage(l);
      absl::StrAppend(&out, "| ", l.focal_variant(), " | ", l.context_length(), " | ", c.base,
                      " | ", c.focal, " | ",
                      c.significant ? absl::StrCat("**", c.diff, "**") : c.diff, " | ", c.ci, " | ",
                      c.pairs, " | ", c.relative, " |\n");
    }
    if (cat != "ruler") continue;
    absl::StrAppend(&out, "\nEffective length: base ", b.effective_length());
    for (int i = 1; i < rep.runs().models_size(); ++i) {
      absl::StrAppend(&out, ", ", rep.runs().models(i).variant(), " ",
                      rep.runs().models(i).effective_length());
    }
    absl::StrAppend(&out, PartialRulerLabel(cat, FewestTasks(rep, cat)), "\n");
  }
  absl::StrAppend(&out, AgreementMarkdown(rep), AttentionMarkdown(rep));
  return out;
}

std::string ComparisonCsv(const ComparisonReport& rep) {
  std::string out =
      "task,metric,context_length,gold_depth,focal_variant,n,base,focal,diff,rel_diff,ci_low,"
      "ci_high,mcnemar_p,wins,ties,losses,significant\n";
  for (const MetricComparison& r : rep.rows()) {
    absl::StrAppend(&out, r.task(), ",", r.metric(), ",", r.context_length(), ",",
                    r.has_gold_depth() ? absl::StrCat(r.gold_depth()) : "", ",\"",
                    r.focal_variant(), "\",", r.n(), ",",
                    absl::StrFormat("%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,", r.base(), r.focal(),
                                    r.diff(), r.rel_diff(), r.ci_low(), r.ci_high()),
                    r.has_mcnemar_p() ? absl::StrFormat("%.10g", r.mcnemar_p()) : "", ",", r.wins(),
                    ",", r.ties(), ",", r.losses(), ",", r.significant() ? "true" : "false", "\n");
  }
  return out;
}

std::string ComparisonLatex(const ComparisonReport& rep) {
  std::string out =
      "% generated by focal-eval compare\n\\begin{tabular}{llrrrl}\n\\toprule\n"
      "Task & Metric & Base & Focal & $\\Delta$ & 95\\% CI \\\\\n\\midrule\n";
  for (const MetricComparison& r : rep.rows()) {
    std::string d = Fmt(r.diff());
    if (r.significant()) d = absl::StrCat("\\textbf{", d, "}");
    absl::StrAppend(&out, EscapeLatex(r.task()), " & ", EscapeLatex(MetricLabel(r)), " & ",
                    Fmt(r.base()), " & ", Fmt(r.focal()), " & ", d, " & [", Fmt(r.ci_low()), ", ",
                    Fmt(r.ci_high()), "] \\\\\n");
  }
  absl::StrAppend(&out, "\\bottomrule\n\\end{tabular}\n");
  return out;
}

absl::StatusOr<std::string> ComparisonJson(const ComparisonReport& rep) {
  return ToPrettyJson(rep);
}

}  // namespace focal::reports
