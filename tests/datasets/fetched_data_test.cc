// SPDX-License-Identifier: Apache-2.0
// The real data as users get it (scripts/fetch_data.sh, which the test
// command runs first): every catalog file is there and matches its pin, the
// readers see the full splits, and where ../shared holds the same split (the
// files earlier parity runs used) the documents are the same ones. Missing
// data skips here and fails under CI=true.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "base/asset_root.h"
#include "datasets/catalog.h"
#include "datasets/reader.h"
#include "datasets/reader_util.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

std::string Fetched(const std::string& rel) { return DataCacheDir() + "/" + rel; }

#define FOCAL_REQUIRE_FETCHED(rel) FOCAL_REQUIRE_FILE(Fetched(rel), "bash scripts/fetch_data.sh")

std::vector<Doc> Read(const std::string& reader, const std::string& path) {
  auto docs = ReadDocs(reader, path, {});
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *std::move(docs) : std::vector<Doc>();
}

TEST(FetchedDataTest, EveryCatalogFileIsThereAndMatchesItsPin) {
  FOCAL_ASSERT_OK_AND_ASSIGN(DataCatalog c, DataCatalog::LoadDefault());
  for (const CatalogFile& f : c.files()) {
    FOCAL_REQUIRE_FETCHED(f.path);
    FOCAL_ASSERT_OK_AND_ASSIGN(std::string sha, FileSha256(Fetched(f.path)));
    EXPECT_EQ(sha, f.sha256) << f.path;
  }
}

TEST(FetchedDataTest, TheReadersSeeTheFullSplits) {
  const struct {
    const char* rel;
    const char* reader;
    size_t docs;
  } kSplits[] = {{"arc/ARC-Easy-Test.jsonl", "arc", 2376},
                 {"arc/ARC-Challenge-Test.jsonl", "arc", 1172},
                 {"hellaswag/hellaswag_val.jsonl", "hellaswag", 10042},
                 {"piqa/valid.jsonl", "piqa", 1838},
                 {"boolq/validation.jsonl", "boolq", 3270},
                 {"winogrande/winogrande_xl_dev.jsonl", "winogrande", 1267}};
  for (const auto& s : kSplits) {
    FOCAL_REQUIRE_FETCHED(s.rel);
    EXPECT_EQ(Read(s.reader, Fetched(s.rel)).size(), s.docs) << s.rel;
  }
}

// The fetched files hold the documents of ../shared's (the originals that
// the earlier lm-eval parity runs used), in the same order.
TEST(FetchedDataTest, SameDocumentsAsTheOriginalReleases) {
  FOCAL_REQUIRE_FETCHED("arc/ARC-Easy-Test.jsonl");
  for (const char* f : {"arc/ARC-Easy-Test.jsonl", "piqa/valid.jsonl", "boolq/dev.jsonl",
                        "hellaswag/hellaswag_val_full.txt.bz2"}) {
    FOCAL_REQUIRE_FILE(testing::SharedPath("data/") + f, "../shared beside the source tree");
  }
  const std::string shared = testing::SharedPath("data/");
  {
    const auto a = Read("arc", Fetched("arc/ARC-Easy-Test.jsonl"));
    const auto b = Read("arc", shared + "arc/ARC-Easy-Test.jsonl");
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].fields, b[i].fields) << a[i].id;
      EXPECT_EQ(a[i].choices, b[i].choices) << a[i].id;
      EXPECT_EQ(a[i].gold, b[i].gold) << a[i].id;
    }
  }
  {
    const auto a = Read("piqa", Fetched("piqa/valid.jsonl"));
    const auto b = Read("piqa", shared + "piqa/valid.jsonl");
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].fields, b[i].fields) << i;
      EXPECT_EQ(a[i].choices, b[i].choices) << i;
      EXPECT_EQ(a[i].gold, b[i].gold) << i;
    }
  }
  {
    // SuperGLUE's passage (what lm-eval reads) is the original's title, " -- ",
    // then its passage.
    const auto a = Read("boolq", Fetched("boolq/validation.jsonl"));
    FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<JsonRecord> b, ReadJsonl(shared + "boolq/dev.jsonl"));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      FOCAL_ASSERT_OK_AND_ASSIGN(std::string title, b[i].String("title"));
      FOCAL_ASSERT_OK_AND_ASSIGN(std::string passage, b[i].String("passage"));
      FOCAL_ASSERT_OK_AND_ASSIGN(std::string question, b[i].String("question"));
      EXPECT_EQ(a[i].fields.at("passage"), title + " -- " + passage) << i;
      EXPECT_EQ(a[i].fields.at("question"), question) << i;
      EXPECT_EQ(a[i].gold, b[i].Find("answer")->bool_value() ? 1 : 0) << i;
    }
  }
  {
    // llama.cpp's layout was preprocessed its own way (ctx_b not capitalised,
    // endings stripped, some "[title]" tags without lm-eval's ". "), so its
    // text differs from lm-eval's in case, spaces and punctuation: the same
    // documents show as the same letters and digits, in order, and the same gold.
    const auto a = Read("hellaswag", Fetched("hellaswag/hellaswag_val.jsonl"));
    const auto b = Read("hellaswag_llamacpp", shared + "hellaswag/hellaswag_val_full.txt.bz2");
    ASSERT_EQ(a.size(), b.size());
    auto letters = [](const std::string& s) {
      std::string out;
      for (char c : s) {
        if (absl::ascii_isalnum(c)) out += absl::ascii_tolower(c);
      }
      return out;
    };
    int differ = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].choices.size(), b[i].choices.size()) << i;
      for (size_t k = 0; k < a[i].choices.size(); ++k) {
        differ += a[i].choices[k] != b[i].choices[k];
        EXPECT_EQ(letters(a[i].choices[k]), letters(b[i].choices[k])) << i << " " << k;
      }
      differ += a[i].fields.at("query") != b[i].fields.at("query");
      EXPECT_EQ(letters(a[i].fields.at("query")), letters(b[i].fields.at("query"))) << i;
      EXPECT_EQ(a[i].gold, b[i].gold) << i;
    }
    EXPECT_GT(differ, 0);  // why the fetched file, lm-eval's own rows, is preferred
    std::printf("hellaswag: %d of %zu prompt strings differ from llama.cpp's layout\n", differ,
                a.size() * 5);
  }
}

}  // namespace
}  // namespace focal::datasets
