// SPDX-License-Identifier: Apache-2.0
#include "datasets/catalog.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/asset_root.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/status_macros.h"

namespace focal::datasets {
namespace {

// A member of a catalog entry, by type; errors name the file and the entry.
class Entry {
 public:
  Entry(const JsonValue& v, std::string where) : v_(v), where_(std::move(where)) {}

  absl::StatusOr<std::string> String(absl::string_view key, bool required = true) const {
    const JsonValue* f = v_.Find(key);
    if (f == nullptr) {
      if (!required) return std::string();
      return absl::InvalidArgumentError(absl::StrCat(where_, ": missing '", key, "'"));
    }
    if (!f->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(where_, ": '", key, "' must be a string"));
    }
    return f->string_value();
  }
  absl::StatusOr<int64_t> Integer(absl::string_view key, bool required = true) const {
    const JsonValue* f = v_.Find(key);
    if (f == nullptr) {
      if (!required) return int64_t{-1};
      return absl::InvalidArgumentError(absl::StrCat(where_, ": missing '", key, "'"));
    }
    if (!f->is_integer() || f->integer() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where_, ": '", key, "' must be a non-negative integer"));
    }
    return f->integer();
  }

 private:
  const JsonValue& v_;
  std::string where_;
};

absl::StatusOr<const std::vector<JsonValue>*> Array(const JsonValue& root, absl::string_view key,
                                                    const std::string& path) {
  const JsonValue* a = root.Find(key);
  if (a == nullptr || !a->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": '", key, "' must be an array"));
  }
  return &a->array();
}

// ".jsonl" of "dir/a.b.jsonl"; empty without a dot in the file name.
std::string Extension(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view name = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot == absl::string_view::npos ? "" : std::string(name.substr(dot));
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

absl::StatusOr<DataCatalog> DataCatalog::Load(const std::string& path) {
  FOCAL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(text, path));
  DataCatalog c;
  FOCAL_ASSIGN_OR_RETURN(const std::vector<JsonValue>* packages, Array(root, "packages", path));
  for (size_t i = 0; i < packages->size(); ++i) {
    const Entry e((*packages)[i], absl::StrCat(path, ": packages[", i, "]"));
    CatalogPackage p;
    FOCAL_ASSIGN_OR_RETURN(p.name, e.String("name"));
    FOCAL_ASSIGN_OR_RETURN(p.version, e.String("version"));
    FOCAL_ASSIGN_OR_RETURN(p.license, e.String("license"));
    FOCAL_ASSIGN_OR_RETURN(p.wheel, e.String("wheel"));
    FOCAL_ASSIGN_OR_RETURN(p.sha256, e.String("sha256"));
    FOCAL_ASSIGN_OR_RETURN(p.bytes, e.Integer("bytes"));
    c.packages_.push_back(std::move(p));
  }
  FOCAL_ASSIGN_OR_RETURN(const std::vector<JsonValue>* files, Array(root, "files", path));
  for (size_t i = 0; i < files->size(); ++i) {
    const Entry e((*files)[i], absl::StrCat(path, ": files[", i, "]"));
    CatalogFile f;
    FOCAL_ASSIGN_OR_RETURN(f.path, e.String("path"));
    FOCAL_ASSIGN_OR_RETURN(f.package, e.String("package"));
    FOCAL_ASSIGN_OR_RETURN(f.member, e.String("member"));
    FOCAL_ASSIGN_OR_RETURN(f.member_sha256, e.String("member_sha256"));
    FOCAL_ASSIGN_OR_RETURN(f.convert, e.String("convert"));
    FOCAL_ASSIGN_OR_RETURN(f.what, e.String("what"));
    FOCAL_ASSIGN_OR_RETURN(f.sha256, e.String("sha256"));
    FOCAL_ASSIGN_OR_RETURN(f.bytes, e.Integer("bytes"));
    FOCAL_ASSIGN_OR_RETURN(f.records, e.Integer("records", /*required=*/false));
    if (c.FindPackage(f.package) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": files[", i, "] (", f.path, "): unknown package '", f.package, "'"));
    }
    c.files_.push_back(std::move(f));
  }
  return c;
}

absl::StatusOr<DataCatalog> DataCatalog::LoadDefault() {
  return Load(absl::StrCat(AssetRoot(), "/datasets/catalog.json"));
}

const CatalogFile* DataCatalog::Find(absl::string_view path) const {
  for (const CatalogFile& f : files_) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

const CatalogPackage* DataCatalog::FindPackage(absl::string_view name) const {
  for (const CatalogPackage& p : packages_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string DataOriginName(DataOrigin origin) {
  switch (origin) {
    case DataOrigin::kUserFile:
      return "user file";
    case DataOrigin::kDataDir:
      return "data-dir";
    case DataOrigin::kFetched:
      return "fetched";
    case DataOrigin::kSample:
      return "sample";
    case DataOrigin::kSynthetic:
      return "synthetic";
  }
  return "unknown";
}

absl::StatusOr<std::string> FileSha256(const std::string& path) {
  FOCAL_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  Sha256 h;
  h.Update(f.data(), f.size());
  return h.HexDigest();
}

namespace {

// `path`'s SHA-256, which must be the catalog's for `rel`.
absl::StatusOr<std::string> VerifiedFetchedSha256(const std::string& path, const std::string& rel,
                                                  const std::string& task,
                                                  const DataCatalog& catalog) {
  const CatalogFile* f = catalog.Find(rel);
  if (f == nullptr) {
    return absl::InternalError(absl::StrCat("task '", task, "' names ", rel,
                                            ", which datasets/catalog.json does not list"));
  }
  FOCAL_ASSIGN_OR_RETURN(std::string sha, FileSha256(path));
  if (sha != f->sha256) {
    return absl::DataLossError(absl::StrCat(
        path, " has SHA-256 ", sha, ", the catalog pins ", f->sha256,
        ": the data cache changed; run `bash scripts/fetch_data.sh` to fetch it again"));
  }
  return sha;
}

}  // namespace

absl::StatusOr<ResolvedFiles> ResolveGeneratorData(const GeneratorDataSpec& spec,
                                                   const DataLocations& where,
                                                   const DataCatalog& catalog) {
  ResolvedFiles r;
  if (spec.data_files.empty() && spec.fetched_data_files.empty()) {
    r.fetched_set_present = !where.cache_dir.empty() && !catalog.files().empty();
    for (const CatalogFile& f : catalog.files()) {
      r.fetched_set_present =
          r.fetched_set_present && Exists(absl::StrCat(where.cache_dir, "/", f.path));
    }
    return r;  // kSynthetic
  }
  // --data-dir replaces the files a task names for it; a task that names none
  // (RULER's word-list tasks, HELMET's recall) still reads the fetched set,
  // rather than the bundled samples under a --data-dir label.
  if (!where.data_dir.empty() && !spec.data_files.empty()) {
    r.origin = DataOrigin::kDataDir;
    for (const auto& [role, rel] : spec.data_files) {
      r.files[role] = absl::StrCat(where.data_dir, "/", rel);
      if (!Exists(r.files[role])) {
        return absl::NotFoundError(
            absl::StrCat("task '", spec.task, "': no ", role, " file ", r.files[role]));
      }
      FOCAL_ASSIGN_OR_RETURN(r.sha256[role], FileSha256(r.files[role]));
    }
    return r;
  }
  bool fetched = !where.cache_dir.empty() && !spec.fetched_data_files.empty();
  for (const auto& [role, rel] : spec.fetched_data_files) {
    fetched = fetched && Exists(absl::StrCat(where.cache_dir, "/", rel));
  }
  if (fetched) {
    r.origin = DataOrigin::kFetched;
    for (const auto& [role, rel] : spec.fetched_data_files) {
      r.files[role] = absl::StrCat(where.cache_dir, "/", rel);
      FOCAL_ASSIGN_OR_RETURN(r.sha256[role],
                             VerifiedFetchedSha256(r.files[role], rel, spec.task, catalog));
    }
    return r;
  }
  r.origin = DataOrigin::kSample;
  return r;
}

absl::StatusOr<ResolvedData> ResolveTaskData(const TaskDataSpec& spec, const DataLocations& where,
                                             const DataCatalog& catalog) {
  ResolvedData r;
  r.reader = spec.reader;
  if (where.user_file.has_value()) {
    r.path = *where.user_file;
    r.origin = DataOrigin::kUserFile;
    // A file in the fetched layout (its extension, not data_path's) is read
    // as the fetched file is: HellaSwag's rows (.jsonl) vs llama.cpp's text.
    if (!spec.fetched_reader.empty() && Extension(r.path) == Extension(spec.fetched_path) &&
        Extension(r.path) != Extension(spec.data_path)) {
      r.reader = spec.fetched_reader;
    }
  } else if (!where.data_dir.empty() && !spec.data_path.empty()) {
    r.path = absl::StrCat(where.data_dir, "/", spec.data_path);
    r.origin = DataOrigin::kDataDir;
  } else if (where.data_dir.empty() && !where.cache_dir.empty() && !spec.fetched_path.empty() &&
             Exists(absl::StrCat(where.cache_dir, "/", spec.fetched_path))) {
    r.path = absl::StrCat(where.cache_dir, "/", spec.fetched_path);
    r.origin = DataOrigin::kFetched;
    if (!spec.fetched_reader.empty()) r.reader = spec.fetched_reader;
  } else if (where.data_dir.empty() && !spec.sample_path.empty()) {
    r.path = absl::StrCat(where.asset_root, "/", spec.sample_path);
    r.origin = DataOrigin::kSample;
  } else if (!where.data_dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task '", spec.task, "' has no data_path for --data-dir; give its file with ",
                     "--data ", spec.task, "=PATH"));
  } else {
    return absl::NotFoundError(absl::StrCat(
        "task '", spec.task, "': no data; give its file with --data ", spec.task, "=PATH",
        spec.reference_name.empty() ? "" : absl::StrCat(" (", spec.reference_name, ")")));
  }
  if (!Exists(r.path)) {
    return absl::NotFoundError(absl::StrCat("task '", spec.task, "': no file ", r.path));
  }
  if (r.origin == DataOrigin::kFetched) {
    FOCAL_ASSIGN_OR_RETURN(r.sha256,
                           VerifiedFetchedSha256(r.path, spec.fetched_path, spec.task, catalog));
  } else {
    FOCAL_ASSIGN_OR_RETURN(r.sha256, FileSha256(r.path));
  }
  if ((r.origin == DataOrigin::kUserFile || r.origin == DataOrigin::kDataDir) &&
      !spec.reference_sha256.empty() && r.sha256 != spec.reference_sha256) {
    r.note = absl::StrCat("not the file the reference reads (", spec.reference_name, ", SHA-256 ",
                          spec.reference_sha256, "): this file's is ", r.sha256);
  }
  return r;
}

}  // namespace focal::datasets
