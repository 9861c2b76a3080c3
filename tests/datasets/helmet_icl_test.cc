// SPDX-License-Identifier: Apache-2.0
// HELMET's many-shot ICL construction against an independent re-derivation
// of HELMET's load_icl (tests/reference/helmet_icl_reference.py, CPython's
// random and NumPy; its goldens under tests/testdata/golden/helmet/ hold only
// ids, numbers and hashes): the selected test items and their label balance,
// per item the seed, the label permutation, the demonstrations (which, in
// which order, label balance) and the SHA-256 of the whole prompt, at every
// length of HELMET's shot table; data read from ../shared/data/helmet.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json.h"
#include "base/sha256.h"
#include "datasets/helmet.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

std::vector<JsonValue> ReadGolden(const std::string& name) {
  return testing::ReadJsonLines(testing::GoldenPath("helmet/icl_" + name + ".jsonl"));
}

std::string JoinedSha(const std::vector<int64_t>& xs) { return Sha256Hex(absl::StrJoin(xs, ",")); }

int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::map<std::string, std::string> SharedFiles(const std::string& dataset) {
  std::map<std::string, std::string> files;
  const auto roles = HelmetIclFiles(dataset);
  EXPECT_TRUE(roles.ok()) << roles.status();
  if (!roles.ok()) return files;
  for (const auto& [role, rel] : *roles) {
    files[role] = testing::SharedPath("data/" + rel);
  }
  return files;
}

class HelmetIclTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HelmetIclTest, MatchesTheReference) {
  const std::string name = GetParam();
  const auto files = SharedFiles(name);
  for (const auto& [role, path] : files)
    FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  auto data = LoadIclDataset(name, files);
  ASSERT_TRUE(data.ok()) << data.status();
  const std::vector<JsonValue> golden = ReadGolden(name);
  ASSERT_EQ(golden.size(), 7u);
  const JsonValue& h = golden[0];
  EXPECT_EQ(static_cast<int64_t>(data->labels.size()), h.Find("num_labels")->integer());
  EXPECT_EQ(static_cast<int64_t>(data->train.size()), h.Find("train_size")->integer());
  EXPECT_EQ(static_cast<int64_t>(data->test.size()), h.Find("test_size_raw")->integer());
  const std::vector<IclItem> test = SelectIclTest(data->test, 42);
  ASSERT_EQ(static_cast<int64_t>(test.size()), h.Find("test_count")->integer());
  std::vector<int64_t> src;
  std::map<int32_t, int64_t> counts;
  for (const IclItem& it : test) {
    src.push_back(it.source_index);
    ++counts[it.label];
  }
  EXPECT_EQ(JoinedSha(src), h.Find("test_source_indices_sha256")->string_value());
  std::map<int32_t, int64_t> want_counts;
  for (const auto& [k, v] : h.Find("test_label_counts")->members())
    want_counts[std::stoi(k)] = v.integer();
  EXPECT_EQ(counts, want_counts);
  // Balanced: label counts differ by at most one when the test set was balanced.
  if (data->test.size() > 500) {
    int64_t lo = test.size(), hi = 0;
    for (const auto& [k, v] : counts) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_LE(hi - lo, 1);
  }
  for (size_t li = 1; li < golden.size(); ++li) {
    const JsonValue& g = golden[li];
    const int64_t length = g.Find("length")->integer();
    const int64_t shots = g.Find("shots")->integer();
    SCOPED_TRACE(absl::StrCat(name, " at ", length));
    EXPECT_EQ(HelmetIclShots(name, length), shots);
    for (const JsonValue& want : g.Find("items")->array()) {
      const size_t i = static_cast<size_t>(want.Find("i")->integer());
      const IclItem& item = test[i];
      EXPECT_EQ(item.source_index, want.Find("source_index")->integer());
      const IclPrompt p = BuildIclPrompt(*data, item, shots, 42);
      EXPECT_EQ(p.item_seed, static_cast<uint32_t>(want.Find("local_seed")->integer()));
      EXPECT_EQ(p.gold, want.Find("gold")->string_value());
      std::vector<int64_t> perm;
      for (int32_t x :
           HelmetLabelPermutation(p.item_seed, static_cast<int32_t>(data->labels.size()))) {
        perm.push_back(x);
      }
      EXPECT_EQ(JoinedSha(perm), want.Find("label_perm_sha256")->string_value());
      ASSERT_EQ(static_cast<int64_t>(p.demo_sources.size()), shots);
      EXPECT_EQ(JoinedSha(p.demo_sources), want.Find("demo_source_indices_sha256")->string_value());
      EXPECT_EQ(p.demo_sources[0], want.Find("demo_first")->array()[0].integer());
      // Label balance of the demonstrations: counts per label differ by at most one.
      std::map<int32_t, int64_t> dc;
      for (int64_t s : p.demo_sources) ++dc[data->train[s].label];
      int64_t lo = shots, hi = 0;
      for (const auto& [k, v] : dc) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      EXPECT_LE(hi - lo, 1);
      const std::string prompt = p.Prompt();
      EXPECT_EQ(CodePoints(prompt), want.Find("prompt_chars")->integer());
      EXPECT_EQ(Sha256Hex(prompt), want.Find("prompt_sha256")->string_value()) << "item " << i;
    }
  }
}

TEST(HelmetIclNaturalLabelTest, NamesInsteadOfIntegersSameDemos) {
  const auto files = SharedFiles("trec_coarse");
  for (const auto& [role, path] : files)
    FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  auto data = LoadIclDataset("trec_coarse", files);
  ASSERT_TRUE(data.ok()) << data.status();
  const IclItem& item = data->test[0];
  const IclPrompt ints = BuildIclPrompt(*data, item, 50, 42);
  const IclPrompt names = BuildIclPrompt(*data, item, 50, 42, /*natural_label=*/true);
  EXPECT_EQ(names.demo_sources, ints.demo_sources);
  EXPECT_EQ(names.gold, data->labels[item.label]);
  EXPECT_THAT(names.context,
              ::testing::HasSubstr(
                  "\nlabel: " + data->labels[data->train[names.demo_sources[0]].label] + "\n\n"));
  EXPECT_EQ(names.question, ints.question);
}

INSTANTIATE_TEST_SUITE_P(Datasets, HelmetIclTest,
                         ::testing::Values("trec_coarse", "trec_fine", "banking77", "clinc150",
                                           "nlu"));

TEST(HelmetIclTest, ItemSeedAndPermutationVectors) {
  // CPython: (int(sha256(t).hexdigest(), 16) + 42) % 2**31, then
  // random.seed(s); random.shuffle(list(range(6))).
  EXPECT_EQ(HelmetItemSeed("focal-eval says hello", 42), 423327053u);
  EXPECT_EQ(HelmetItemSeed("", 42), 2018687103u);
  EXPECT_THAT(HelmetLabelPermutation(423327053u, 6), ::testing::ElementsAre(3, 4, 2, 1, 5, 0));
  EXPECT_THAT(HelmetLabelPermutation(596078644u, 6), ::testing::ElementsAre(5, 4, 2, 0, 1, 3));
}

TEST(HelmetIclTest, ShotsPerLength) {
  EXPECT_EQ(HelmetIclShots("trec_coarse", 8192), 400);
  EXPECT_EQ(HelmetIclShots("trec_coarse", 131072), 6600);
  EXPECT_EQ(HelmetIclShots("trec_coarse", 2048), 200);      // below 4K: the 4K count
  EXPECT_EQ(HelmetIclShots("trec_coarse", 10000), 800);     // the next listed length
  EXPECT_EQ(HelmetIclShots("trec_coarse", 1 << 20), 6600);  // past 128K: the 128K count
}

TEST(HelmetIclTest, BadInputIsAClearError) {
  const std::string dir = testing::MakeTempDir("helmet_icl");
  testing::WriteStringToFile(dir + "/train.label", "NUM:dist How far ?\nXYZ:abc What ?\n");
  testing::WriteStringToFile(dir + "/test.label", "NUM:dist How far ?\n");
  auto d =
      LoadIclDataset("trec_fine", {{"train", dir + "/train.label"}, {"test", dir + "/test.label"}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), ::testing::HasSubstr("train.label:2: label 'XYZ:abc'"));
  testing::WriteStringToFile(dir + "/bank.csv", "text,category\n\"unterminated,card_arrival\n");
  d = LoadIclDataset("banking77", {{"train", dir + "/bank.csv"}, {"test", dir + "/bank.csv"}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), ::testing::HasSubstr("bank.csv:2: unterminated quoted field"));
  d = LoadIclDataset("banking77", {{"train", dir + "/bank.csv"}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), ::testing::HasSubstr("--data-dir"));
  EXPECT_FALSE(LoadIclDataset("trec_medium", {}).ok());
}

}  // namespace
}  // namespace focal::datasets
