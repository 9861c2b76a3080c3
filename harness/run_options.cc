// SPDX-License-Identifier: Apache-2.0
// The run options the CLI parses beyond CLI11's types: --shard (I/N, or from
// a Slurm job array or Kubernetes Indexed Job), model specs DIR@t=T@bf16, and the
// task list --list-tasks prints, --lengths and --gold-depth.
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/status_macros.h"
#include "datasets/hotpotqa_long.h"
#include "harness/runner.h"
#include "harness/task_data.h"

namespace focal::harness {

namespace {

// An environment variable that must be a non-negative integer when set.
absl::StatusOr<std::optional<int64_t>> EnvInt(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (v == nullptr) return std::nullopt;
  int64_t x = 0;
  if (!absl::SimpleAtoi(v, &x) || x < 0 || x > INT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard auto: ", name, "='", v, "' is not a non-negative integer"));
  }
  return x;
}

}  // namespace

absl::Status ParseShard(const std::string& text, int* index, int* count, const EnvLookup& env_in,
                        std::string* source) {
  const EnvLookup env = env_in ? env_in : [](const char* name) { return std::getenv(name); };
  if (text == "auto" || absl::StartsWith(text, "auto/")) {
    int64_t want = 0;  // the count given after "auto/"; 0 = none
    if (text != "auto" &&
        (!absl::SimpleAtoi(text.substr(5), &want) || want < 1 || want > INT32_MAX)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shard '", text, "': the count after auto/ must be a positive integer"));
    }
    FOCAL_ASSIGN_OR_RETURN(auto task_id, EnvInt(env, "SLURM_ARRAY_TASK_ID"));
    FOCAL_ASSIGN_OR_RETURN(auto task_count, EnvInt(env, "SLURM_ARRAY_TASK_COUNT"));
    FOCAL_ASSIGN_OR_RETURN(auto task_min, EnvInt(env, "SLURM_ARRAY_TASK_MIN"));
    FOCAL_ASSIGN_OR_RETURN(auto task_max, EnvInt(env, "SLURM_ARRAY_TASK_MAX"));
    FOCAL_ASSIGN_OR_RETURN(auto k8s_index, EnvInt(env, "JOB_COMPLETION_INDEX"));
    int64_t i = 0, n = 0;
    std::string from;
    if (task_id.has_value() && want > 0) {
      // The count is given: the task id is the shard, so resubmitting some
      // tasks of an array (--array=2) runs those shards.
      i = *task_id;
      n = want;
      from = absl::StrCat("SLURM_ARRAY_TASK_ID=", i, " of ", n, " shards");
    } else if (task_id.has_value()) {
      if (!task_count.has_value()) {
        return absl::InvalidArgumentError(
            "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
      }
      const int64_t lo = task_min.value_or(0);
      n = *task_count;
      i = *task_id - lo;
      // Shards are every N-th document: the array's ids must be lo..lo+N-1.
      if (task_max.has_value() && *task_max - lo + 1 != n) {
        return absl::InvalidArgumentError(
            absl::StrCat("--shard auto: the Slurm array ", lo, "-", *task_max, " has ", n,
                         " tasks; shards need consecutive task ids (no step, e.g. --array=0-",
                         n - 1, "), or give the count as --shard auto/N"));
      }
      from = absl::StrCat("SLURM_ARRAY_TASK_ID=", *task_id, " of ", n);
    } else if (k8s_index.has_value()) {
      if (want == 0) {
        return absl::InvalidArgumentError(
            "--shard auto: JOB_COMPLETION_INDEX is set but the Job's completions are not "
            "visible to the pod: give them as --shard auto/N");
      }
      i = *k8s_index;
      n = want;
      from = absl::StrCat("JOB_COMPLETION_INDEX=", i, " of ", n);
    } else {
      return absl::InvalidArgumentError(
          "--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
          "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --shard I/N");
    }
    if (i < 0 || i >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shard auto: shard ", i, " is outside 0..", n - 1, " (", from, ")"));
    }
    *index = static_cast<int>(i);
    *count = static_cast<int>(n);
    if (source != nullptr) *source = from;
    return absl::OkStatus();
  }
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], index) ||
      !absl::SimpleAtoi(parts[1], count) || *count < 1 || *index < 0 || *index >= *count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard '", text, "' must be I/N with 0 <= I < N (e.g. 0/4), auto or auto/N"));
  }
  if (source != nullptr) source->clear();
  return absl::OkStatus();
}

absl::Status ListTasks(const RunOptions& o, std::ostream& out) {
  FOCAL_ASSIGN_OR_RETURN(tasks::TaskRegistry registry, LoadRegistry(o));
  out << "tasks:\n";
  for (const std::string& n : registry.TaskNames()) {
    out << "  " << n << "  " << registry.Find(n)->spec().description() << "\n";
  }
  out << "groups:\n";
  for (const auto& [g, names] : registry.Groups()) {
    out << "  " << g << ": ";
    for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
    out << "\n";
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& spec) {
  ModelSpec m;
  std::string rest = spec;
  // Suffixes from the end: "@t=T", "@bf16", "@fp32", each at most once.
  for (size_t at = rest.rfind('@'); at != std::string::npos; at = rest.rfind('@')) {
    const std::string suffix = rest.substr(at + 1);
    if (absl::StartsWith(suffix, "t=") && !m.temperature.has_value()) {
      double t;
      if (!absl::SimpleAtod(suffix.substr(2), &t) || !(t > 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("model '", spec, "': the temperature after '@t=' must be a number > 0"));
      }
      m.temperature = t;
    } else if ((suffix == "bf16" || suffix == "fp32") && m.precision.empty()) {
      m.precision = suffix;
    } else {
      break;  // part of the path
    }
    rest.resize(at);
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("model '", spec, "' names no model"));
  }
  if (rest == "default") {
    FOCAL_ASSIGN_OR_RETURN(rest, FindDefaultModel());
  }
  m.dir = rest;
  return m;
}

absl::StatusOr<std::vector<std::unique_ptr<kernels::Backend>>> CreateModelBackends(
    const RunOptions& o, size_t index, std::string* note) {
  const std::string& precision =
      index < o.model_precisions.size() && !o.model_precisions[index].empty()
          ? o.model_precisions[index]
          : o.precision;
  return kernels::CreateBackends(o.device, o.threads, note, precision);
}

absl::StatusOr<std::vector<int64_t>> ParseLengths(const std::string& text) {
  std::vector<int64_t> out;
  for (absl::string_view p : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int64_t v;
    if (!absl::SimpleAtoi(p, &v) || v <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--lengths: '", p, "' is not a positive integer"));
    }
    if (!out.empty() && v <= out.back()) {
      return absl::InvalidArgumentError("--lengths must be strictly increasing, e.g. 4096,8192");
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError("--lengths is empty");
  return out;
}

absl::StatusOr<std::vector<double>> ParseGoldDepths(const std::string& text) {
  if (text == "sweep") return datasets::HotpotQaSweepDepths();
  double d;
  if (!absl::SimpleAtod(text, &d) || d < 0 || d > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gold-depth '", text, "' must be a number in [0, 1] or 'sweep'"));
  }
  return std::vector<double>{d};
}

}  // namespace focal::harness
