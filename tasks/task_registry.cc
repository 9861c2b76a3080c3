// SPDX-License-Identifier: Apache-2.0
#include "tasks/task_registry.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace focal::tasks {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

absl::StatusOr<TaskSpec> ParseTaskSpec(absl::string_view text, absl::string_view source) {
  TaskSpec spec;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &spec)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", errors.first()));
  }
  return spec;
}

absl::StatusOr<TaskRegistry> TaskRegistry::Load(absl::string_view spec_dir) {
  return Load(std::vector<std::string>{std::string(spec_dir)});
}

absl::StatusOr<TaskRegistry> TaskRegistry::Load(const std::vector<std::string>& spec_dirs) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& spec_dir : spec_dirs) {
    std::error_code ec;
    if (!fs::is_directory(spec_dir, ec)) {
      return absl::NotFoundError(
          absl::StrCat("task spec directory '", spec_dir, "' does not exist"));
    }
    std::vector<std::string> here;
    for (const auto& e : fs::directory_iterator(spec_dir, ec)) {
      if (e.path().extension() == ".textproto") here.push_back(e.path().string());
    }
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  TaskRegistry reg;
  for (const std::string& f : files) {
    FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(f));
    FOCAL_ASSIGN_OR_RETURN(TaskSpec spec, ParseTaskSpec(text, f));
    auto task = Task::FromSpec(spec);
    if (!task.ok()) return Annotate(task.status(), f);
    if (reg.tasks_.count(spec.name())) {
      return absl::AlreadyExistsError(
          absl::StrCat(f, ": task '", spec.name(), "' is defined twice"));
    }
    reg.tasks_.emplace(spec.name(), std::move(*task));
  }
  return reg;
}

const Task* TaskRegistry::Find(absl::string_view name) const {
  auto it = tasks_.find(std::string(name));
  return it == tasks_.end() ? nullptr : &it->second;
}

std::vector<std::string> TaskRegistry::TaskNames() const {
  std::vector<std::string> out;
  for (const auto& [n, t] : tasks_) out.push_back(n);
  return out;
}

std::map<std::string, std::vector<std::string>> TaskRegistry::Groups() const {
  std::map<std::string, std::vector<std::string>> g;
  for (const auto& [n, t] : tasks_) {
    for (const std::string& grp : t.spec().groups()) g[grp].push_back(n);
  }
  // By the specs' order, then by name (tasks_ is sorted by name).
  for (auto& [grp, names] : g) {
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
      return tasks_.at(a).spec().order() < tasks_.at(b).spec().order();
    });
  }
  return g;
}

absl::StatusOr<std::vector<const Task*>> TaskRegistry::Resolve(absl::string_view names) const {
  std::vector<const Task*> out;
  std::set<std::string> seen;
  const auto groups = Groups();
  auto add = [&](const std::string& n) {
    if (seen.insert(n).second) out.push_back(&tasks_.at(n));
  };
  for (absl::string_view raw : absl::StrSplit(names, ',', absl::SkipWhitespace())) {
    std::string name(raw);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name == "all") {
      for (const auto& [n, t] : tasks_) {
        if (!t.spec().exclude_from_all()) add(n);
      }
    } else if (tasks_.count(name)) {
      add(name);
    } else if (auto g = groups.find(name); g != groups.end()) {
      for (const std::string& n : g->second) add(n);
    } else {
      std::string best;
      int best_d = 1 << 30;
      std::vector<std::string> all = TaskNames();
      for (const auto& [gn, unused] : groups) all.push_back(gn);
      for (const std::string& cand : all) {
        int d = EditDistance(name, cand);
        if (d < best_d) {
          best_d = d;
          best = cand;
        }
      }
      return absl::NotFoundError(absl::StrCat("unknown task '", name, "'; did you mean '", best,
                                              "'? (known: ", absl::StrJoin(all, ", "), ")"));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("no tasks given (--tasks)");
  return out;
}

}  // namespace focal::tasks
