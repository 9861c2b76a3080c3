// SPDX-License-Identifier: Apache-2.0
#include "reports/merge.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "reports/length_summary.h"
#include "tasks/metric_registry.h"

namespace focal::reports {
namespace {

// Each string goes in with its length, so that equal keys mean equal fields
// and the same number of models and tasks: with plain separators a task
// named "a|b" matched the tasks "a" and "b" of another shard, and the merge
// then indexed past that shard's tasks.
void AppendField(std::string* key, absl::string_view s) {
  absl::StrAppend(key, s.size(), ":", s, "|");
}

// A metric's or document's (length, depth) group; -1 stands for no depth.
template <typename T>
std::pair<int64_t, double> Group(const T& v) {
  return {v.context_length(), v.has_gold_depth() ? v.gold_depth() : -1.0};
}

std::string ConfigKey(const RunResults& r) {
  RunConfig c = r.config();
  c.clear_shard_index();
  std::string key;
  AppendField(&key, c.SerializeAsString());
  for (const ModelRun& m : r.models()) {
    AppendField(&key, m.weights_sha256());
    AppendField(&key, m.config_sha256());
    AppendField(&key, m.variant());
    AppendField(&key, m.bos_policy());
    absl::StrAppend(&key, m.max_length(), "|");
    for (const TaskResult& t : m.tasks()) {
      AppendField(&key, t.task());
      AppendField(&key, t.data_sha256());
    }
  }
  return key;
}

}  // namespace

absl::StatusOr<RunResults> MergeShards(const std::vector<RunResults>& shards) {
  if (shards.empty()) return absl::InvalidArgumentError("merge: no shard results given");
  const int32_t n = shards[0].config().shard_count();
  if (n < 2) {
    return absl::InvalidArgumentError("merge: the first file is not a sharded run (--shard I/N)");
  }
  const std::string key = ConfigKey(shards[0]);
  // By shard index. A map, not n slots: n comes from the file (a shard count
  // of 10^9 asked for 8 GB here).
  std::map<int32_t, const RunResults*> given;
  for (size_t i = 0; i < shards.size(); ++i) {
    const RunResults& s = shards[i];
    const int32_t idx = s.config().shard_index();
    if (s.config().shard_count() != n || idx < 0 || idx >= n) {
      return absl::InvalidArgumentError(absl::StrCat("merge: file ", i + 1, " is shard ", idx, "/",
                                                     s.config().shard_count(), ", expected I/", n));
    }
    if (ConfigKey(s) != key) {
      return absl::FailedPreconditionError(
          absl::StrCat("merge: shard ", idx, "/", n,
                       " comes from a different run (tasks, limit, seed, data or model differ)"));
    }
    if (!given.emplace(idx, &s).second) {
      return absl::InvalidArgumentError(absl::StrCat("merge: shard ", idx, "/", n, " given twice"));
    }
  }
  // The first gap is at most at given.size(), so this stops early.
  std::vector<const RunResults*> by_index;
  for (int32_t i = 0; i < n; ++i) {
    auto it = given.find(i);
    if (it == given.end()) {
      return absl::InvalidArgumentError(absl::StrCat("merge: shard ", i, "/", n, " is missing"));
    }
    by_index.push_back(it->second);
  }
  RunResults out = *by_index[0];
  out.mutable_config()->set_shard_index(0);
  out.mutable_config()->set_shard_count(1);
  for (int mi = 0; mi < out.models_size(); ++mi) {
    ModelRun* m = out.mutable_models(mi);
    double wall = 0;
    int64_t tokens = 0, cached = 0;
    for (const RunResults* s : by_index) {
      wall += s->models(mi).wall_seconds();
      tokens += s->models(mi).tokens_processed();
      cached += s->models(mi).cached_requests();
    }
    m->set_wall_seconds(wall);
    m->set_tokens_processed(tokens);
    m->set_cached_requests(cached);
    m->set_tokens_per_second(wall > 0 ? tokens / wall : 0);
    for (int ti = 0; ti < m->tasks_size(); ++ti) {
      TaskResult* t = m->mutable_tasks(ti);
      // The metric list comes from the shard with the most: a shard that
      // holds no sample of a task, or of one length, lists fewer.
      for (const RunResults* s : by_index) {
        const TaskResult& st = s->models(mi).tasks(ti);
        if (st.metrics_size() > t->metrics_size()) *t->mutable_metrics() = st.metrics();
      }
      std::set<std::pair<std::pair<int64_t, double>, std::string>> listed;
      for (const MetricValue& mv : t->metrics()) listed.emplace(Group(mv), mv.name());
      std::vector<DocValues> docs;
      int64_t requests = 0, truncated = 0;
      for (const RunResults* s : by_index) {
        const TaskResult& st = s->models(mi).tasks(ti);
        for (const MetricValue& mv : st.metrics()) {
          if (!listed.count({Group(mv), mv.name()})) {
            return absl::FailedPreconditionError(absl::StrCat(
                "merge: shard ", s->config().shard_index(), " has ", st.task(), " ", mv.name(),
                " at length ", mv.context_length(), ", which no shard with more metrics has"));
          }
        }
        if (st.docs_size() != st.num_docs()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "merge: shard ", s->config().shard_index(), " has no per-document values for ",
              st.task(), " (written by an older focal-eval?)"));
        }
        docs.insert(docs.end(), st.docs().begin(), st.docs().end());
        requests += st.num_requests();
        truncated += st.truncated_requests();
      }
      // Per (length, depth) group, in document order, as the unsharded run
      // sums them. Short-context tasks have one group.
      std::sort(docs.begin(), docs.end(), [](const DocValues& a, const DocValues& b) {
        return std::make_pair(Group(a), a.doc_index()) < std::make_pair(Group(b), b.doc_index());
      });
      for (size_t d = 1; d < docs.size(); ++d) {
        if (Group(docs[d]) == Group(docs[d - 1]) &&
            docs[d].doc_index() == docs[d - 1].doc_index()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "merge: document ", docs[d].doc_index(), " of ", t->task(), " is in two shards"));
        }
      }
      t->set_num_docs(static_cast<int64_t>(docs.size()));
      t->set_num_requests(requests);
      t->set_truncated_requests(truncated);
      t->clear_docs();
      std::map<std::pair<int64_t, double>, int> seen;  // metrics so far per group
      for (int k = 0; k < t->metrics_size(); ++k) {
        MetricValue* mv = t->mutable_metrics(k);
        const auto g = Group(*mv);
        const int pos = seen[g]++;
        std::vector<double> xs;
        for (const DocValues& d : docs) {
          if (Group(d) != g) continue;
          if (pos >= d.values_size()) {
            return absl::FailedPreconditionError(absl::StrCat("merge: document ", d.doc_index(),
                                                              " of ", t->task(),
                                                              " lacks a value for ", mv->name()));
          }
          xs.push_back(d.values(pos));
        }
        mv->set_n(static_cast<int64_t>(xs.size()));
        const tasks::MetricDef* def = tasks::FindMetric(mv->name());
        if (def == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat("merge: ", t->task(), ": unknown metric '", mv->name(), "'"));
        }
        // Shards keep reported-scale values (sharded runs write them so).
        mv->set_value(tasks::AggregateValue(*def, xs));
        mv->set_stderr(tasks::AggregateStderr(*def, xs));
      }
    }
    // The per-length category averages and RULER's effective length, from
    // the merged scores.
    if (m->ruler_by_length_size() > 0 || m->category_by_length_size() > 0) {
      if (absl::Status st = SetLengthSummaries(*m); !st.ok()) return st;
    }
  }
  return out;
}

}  // namespace focal::reports
