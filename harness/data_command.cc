// SPDX-License-Identifier: Apache-2.0
#include "harness/data_command.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "datasets/catalog.h"
#include "datasets/reader.h"
#include "harness/task_data.h"

namespace focal::harness {
namespace {

struct Row {
  std::string task, source, file, docs, check;
};

constexpr char kNotReal[] =
    "not real data: run `bash scripts/fetch_data.sh` or pass --data TASK=PATH";

// The check column of a file that was found: the catalog's verdict for
// fetched files, the reference's for user files, the sample warning.
std::string Check(const datasets::ResolvedData& d) {
  switch (d.origin) {
    case datasets::DataOrigin::kFetched:
      return "SHA-256 matches datasets/catalog.json";
    case datasets::DataOrigin::kSample:
      return kNotReal;
    default:
      return d.note.empty() ? absl::StrCat("SHA-256 ", d.sha256) : d.note;
  }
}

}  // namespace

absl::Status RunDataList(const RunOptions& o, bool verify, std::ostream& out) {
  FOCAL_ASSIGN_OR_RETURN(tasks::TaskRegistry registry, LoadRegistry(o));
  FOCAL_ASSIGN_OR_RETURN(const datasets::DataCatalog catalog, datasets::DataCatalog::LoadDefault());
  std::vector<Row> rows;
  std::vector<std::string> problems;
  std::set<std::string> used;  // fetched files some task reads
  for (const std::string& name : registry.TaskNames()) {
    const tasks::TaskSpec& spec = registry.Find(name)->spec();
    if (!spec.fetched_path().empty()) used.insert(spec.fetched_path());
    for (const auto& [role, rel] : spec.fetched_data_files()) used.insert(rel);
    if (spec.output_type() == tasks::GENERATE_UNTIL) {
      auto files = ResolveGeneratorFiles(o, spec, catalog);
      if (!files.ok()) {
        rows.push_back({name, "error", "", "", std::string(files.status().message())});
        problems.push_back(name);
        continue;
      }
      if (files->origin == datasets::DataOrigin::kSynthetic) continue;  // no data to list
      std::vector<std::string> paths;
      for (const auto& [role, path] : files->files) paths.push_back(absl::StrCat(role, "=", path));
      const bool sample = files->origin == datasets::DataOrigin::kSample;
      std::string check = "verified";
      if (sample && !spec.fetched_data_files().empty()) {
        problems.push_back(name);
        check = kNotReal;
      } else if (sample) {
        std::vector<std::string> wanted;
        for (const auto& [role, rel] : spec.data_files()) wanted.push_back(rel);
        std::sort(wanted.begin(), wanted.end());  // a proto map's order varies from run to run
        check = absl::StrCat("not real data: pass --data-dir DIR holding ",
                             absl::StrJoin(wanted, ", "));
      }
      rows.push_back({name, datasets::DataOriginName(files->origin),
                      sample ? "(the generator's bundled samples)" : absl::StrJoin(paths, ", "), "",
                      check});
      continue;
    }
    auto d = ResolveData(o, spec, catalog);
    if (!d.ok()) {
      rows.push_back({name, "missing", "", "", std::string(d.status().message())});
      problems.push_back(name);
      continue;
    }
    std::map<std::string, std::string> opts(spec.reader_options().begin(),
                                            spec.reader_options().end());
    auto docs = datasets::ReadDocs(d->reader, d->path, opts);
    std::string check = Check(*d);
    if (d->origin == datasets::DataOrigin::kSample) {
      if (!spec.fetched_path().empty()) problems.push_back(name);
      if (!spec.reference_name().empty()) {
        check = absl::StrCat("not real data: pass --data ", name, "=PATH, ", spec.reference_name(),
                             " (SHA-256 ", spec.reference_sha256(), ")");
      }
    }
    if (!docs.ok()) {
      problems.push_back(name);
      check = std::string(docs.status().message());
    }
    rows.push_back({name, datasets::DataOriginName(d->origin), d->path,
                    docs.ok() ? absl::StrCat(docs->size()) : "?", check});
  }
  out << "data cache: " << (o.data_cache.empty() ? "(none)" : o.data_cache)
      << (o.data_dir.empty() ? "" : absl::StrCat("; --data-dir ", o.data_dir)) << "\n\n";
  out << "| task | data | file | documents | check |\n|---|---|---|---:|---|\n";
  for (const Row& r : rows) {
    out << "| " << r.task << " | " << r.source << " | " << r.file << " | " << r.docs << " | "
        << r.check << " |\n";
  }
  // Fetched files no task reads yet, and the state of every fetched file.
  std::vector<std::string> damaged;
  out << "\n| fetched file | from | state |\n|---|---|---|\n";
  for (const datasets::CatalogFile& f : catalog.files()) {
    std::string state = "missing";
    const std::string path = absl::StrCat(o.data_cache, "/", f.path);
    std::error_code ec;
    if (!o.data_cache.empty() && std::filesystem::is_regular_file(path, ec)) {
      auto sha = datasets::FileSha256(path);
      state = sha.ok() && *sha == f.sha256 ? "verified" : "CHANGED (run scripts/fetch_data.sh)";
    }
    if (state != "verified") damaged.push_back(f.path);
    const datasets::CatalogPackage* p = catalog.FindPackage(f.package);
    out << "| " << f.path << (used.count(f.path) ? "" : " (no task reads it yet)") << " | "
        << p->name << "==" << p->version << " " << f.member << " | " << state << " |\n";
  }
  if (!verify) return absl::OkStatus();
  if (!damaged.empty() || !problems.empty()) {
    std::vector<std::string> what;
    if (!damaged.empty()) {
      what.push_back(absl::StrCat(damaged.size(), " fetched file(s) missing or changed (",
                                  absl::StrJoin(damaged, ", "), ")"));
    }
    if (!problems.empty()) {
      what.push_back(absl::StrCat("tasks that would not read their fetched data: ",
                                  absl::StrJoin(problems, ", ")));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        absl::StrJoin(what, "; "), "; run `bash scripts/fetch_data.sh` (tables above)"));
  }
  out << "\nevery fetched file is verified and every task that has one reads it\n";
  return absl::OkStatus();
}

}  // namespace focal::harness
