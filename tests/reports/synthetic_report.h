// SPDX-License-Identifier: Apache-2.0
// A fixed synthetic comparison (short-context rows, RULER per length,
// HotpotQA per depth, logit agreement, attention diagnostics) behind the
// report golden files. Every value is written out here, so the goldens show
// exactly how each writer renders them.
#ifndef FOCAL_TESTS_REPORTS_SYNTHETIC_REPORT_H_
#define FOCAL_TESTS_REPORTS_SYNTHETIC_REPORT_H_

#include <cstdint>
#include <string>

#include "reports/results.pb.h"

namespace focal::reports {

inline MetricComparison* AddRow(ComparisonReport* rep, const std::string& task,
                                const std::string& metric, int64_t length, double base,
                                double focal, double ci_low, double ci_high) {
  MetricComparison* r = rep->add_rows();
  r->set_task(task);
  r->set_metric(metric);
  r->set_context_length(length);
  r->set_focal_variant("focal(t=0.4)");
  r->set_focal_model("models/focal");
  r->set_n(200);
  r->set_base(base);
  r->set_focal(focal);
  r->set_diff(focal - base);
  r->set_rel_diff(base != 0 ? (focal - base) / base : 0);
  r->set_ci_low(ci_low);
  r->set_ci_high(ci_high);
  r->set_higher_is_better(true);
  r->set_significant(ci_low > 0 || ci_high < 0);
  r->set_wins(30);
  r->set_ties(150);
  r->set_losses(20);
  return r;
}

inline ComparisonReport MakeReport() {
  ComparisonReport rep;
  ModelRun* b = rep.mutable_runs()->add_models();
  b->set_model_path("models/base");
  b->set_variant("base");
  b->set_weights_sha256("0123456789abcdef0123");
  b->set_effective_length(2048);
  ModelRun* f = rep.mutable_runs()->add_models();
  f->set_model_path("models/focal");
  f->set_variant("focal(t=0.4)");
  f->set_weights_sha256("fedcba9876543210fedc");
  f->set_effective_length(4096);
  rep.set_bootstrap_iters(10000);
  rep.set_bootstrap_seed(1234);
  rep.set_confidence(0.95);

  AddRow(&rep, "arc_easy", "acc", 0, 0.60, 0.66, 0.02, 0.10)->set_mcnemar_p(0.0123);
  AddRow(&rep, "hellaswag", "acc_norm", 0, 0.42, 0.40, -0.06, 0.02)->set_mcnemar_p(0.41);
  AddRow(&rep, "piqa<x>&y", "acc", 0, 0.70, 0.71, -0.03, 0.05)->set_mcnemar_p(0.77);
  MetricComparison* ppl = AddRow(&rep, "wikitext", "perplexity", 0, 21.5, 20.1, 0.91, 0.97);
  ppl->set_diff(20.1 / 21.5);
  ppl->set_rel_diff(20.1 / 21.5 - 1);
  ppl->set_higher_is_better(false);
  ppl->set_significant(true);

  const int64_t lengths[] = {1024, 2048, 4096};
  const double niah_base[] = {98.0, 90.0, 61.0}, niah_focal[] = {99.0, 94.0, 78.0};
  const double vt_base[] = {88.0, 80.0, 52.0}, vt_focal[] = {90.0, 85.0, 70.0};
  for (int i = 0; i < 3; ++i) {
    AddRow(&rep, "ruler_niah_single_1", "acc", lengths[i], niah_base[i], niah_focal[i], -1.0,
           2.0 + 4.0 * i);
    AddRow(&rep, "ruler_vt", "acc", lengths[i], vt_base[i], vt_focal[i], 0.5, 3.0 + 6.0 * i);
    LengthComparison* l = rep.add_lengths();
    l->set_focal_variant("focal(t=0.4)");
    l->set_context_length(lengths[i]);
    l->set_base_average((niah_base[i] + vt_base[i]) / 2);
    l->set_focal_average((niah_focal[i] + vt_focal[i]) / 2);
    l->set_relative_improvement((l->focal_average() - l->base_average()) / l->base_average());
    // The 1024 row is as a report from before category intervals reads.
    const double ci_low[] = {0, 0.5, 9.0}, ci_high[] = {0, 8.5, 26.0};
    if (i == 0) continue;
    l->set_ci_low(ci_low[i]);
    l->set_ci_high(ci_high[i]);
    l->set_num_pairs(400);
  }
  const double depths[] = {0.0, 0.5, 1.0};
  const double hq_base[2][3] = {{62.0, 48.0, 60.0}, {50.0, 31.0, 47.0}};
  const double hq_focal[2][3] = {{63.0, 55.0, 61.0}, {54.0, 44.0, 52.0}};
  for (int li = 0; li < 2; ++li) {
    for (int di = 0; di < 3; ++di) {
      AddRow(&rep, "hotpotqa_long", "substring_match", lengths[li], hq_base[li][di],
             hq_focal[li][di], -4.0, 9.0)
          ->set_gold_depth(depths[di]);
    }
  }
  return rep;
}

// MakeReport plus agreement rows and attention diagnostics for both models
// (two layers, two heads; needle mass on the NIAH task only).
inline ComparisonReport MakeReportWithDiagnostics() {
  ComparisonReport rep = MakeReport();
  const double kl[2][5] = {{0.0123, 0.0011, 0.0098, 0.0456, 0.1234},
                           {0.0456, 0.0032, 0.0301, 0.1500, 0.4321}};
  const char* tasks[] = {"arc_easy", "hellaswag"};
  for (int t = 0; t < 2; ++t) {
    LogitAgreement* a = rep.add_agreement();
    a->set_task(tasks[t]);
    a->set_focal_variant("focal(t=0.4)");
    a->set_focal_index(1);
    a->set_tokens(1000 + 500 * t);
    a->set_mean_kl(kl[t][0]);
    a->set_kl_stderr(kl[t][1]);
    a->set_median_kl(kl[t][2]);
    a->set_p99_kl(kl[t][3]);
    a->set_max_kl(kl[t][4]);
    a->set_same_argmax(0.95 - 0.1 * t);
    a->set_same_argmax_stderr(0.005);
  }
  // entropy[model][task][layer][head]
  const double ent[2][2][2][2] = {{{{2.0, 2.2}, {1.6, 1.8}}, {{2.5, 2.7}, {2.1, 2.3}}},
                                  {{{1.0, 1.2}, {0.7, 0.9}}, {{1.4, 1.6}, {1.1, 1.3}}}};
  const double mass[2][2][2] = {{{0.10, 0.20}, {0.15, 0.25}}, {{0.30, 0.40}, {0.35, 0.45}}};
  for (int m = 0; m < 2; ++m) {
    for (int t = 0; t < 2; ++t) {
      AttentionStats* s = rep.add_attention();
      s->set_model_index(m);
      s->set_variant(m == 0 ? "base" : "focal(t=0.4)");
      s->set_task(t == 0 ? "arc_easy" : "ruler_niah_single_1");
      if (t == 1) s->set_context_length(4096);
      s->set_samples(8);
      for (int l = 0; l < 2; ++l) {
        AttentionLayer* al = s->add_layers();
        al->set_layer(l);
        for (int h = 0; h < 2; ++h) {
          al->add_head_entropy(ent[m][t][l][h]);
          if (t == 1) al->add_head_needle_mass(mass[m][l][h]);
        }
      }
    }
  }
  return rep;
}

}  // namespace focal::reports

#endif  // FOCAL_TESTS_REPORTS_SYNTHETIC_REPORT_H_
