// SPDX-License-Identifier: Apache-2.0
// RULER's prompts byte for byte: focal-eval's ruler_exact::Generate against
// the hashes RULER's own generator gave (tests/reference/ruler_reference.py;
// goldens under tests/testdata/golden/ruler_reference/), on the fetched RULER
// data, with the default model's tokenizer and Llama 2's.
#include "datasets/ruler_exact.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/file_util.h"
#include "base/py_random.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/gguf.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/test_util.h"

namespace focal::datasets::ruler_exact {
namespace {

using ::testing::HasSubstr;

struct GoldenRow {
  std::string task;
  int64_t length = 0, index = 0;
  std::string input_sha, outputs_sha;
  int64_t input_bytes = 0, ruler_length = 0;
};

std::vector<GoldenRow> ReadGolden(const std::string& file, const std::string& tokenizer) {
  std::vector<GoldenRow> rows;
  std::ifstream in(testing::SourcePath("tests/testdata/golden/ruler_reference/" + file));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string tok;
    GoldenRow r;
    f >> tok >> r.task >> r.length >> r.index >> r.input_sha >> r.outputs_sha >> r.input_bytes >>
        r.ruler_length;
    if (tok == tokenizer) rows.push_back(r);
  }
  return rows;
}

const Sources& Src() {
  static const Sources* src = [] {
    auto s = LoadSources(DataCacheDir() + "/ruler");
    return s.ok() ? new Sources(*std::move(s)) : nullptr;
  }();
  return *src;
}

// The default model's tokenizer (from its GGUF).
absl::StatusOr<std::unique_ptr<model::Tokenizer>> DefaultTokenizer() {
  FOCAL_ASSIGN_OR_RETURN(std::unique_ptr<model::GgufFile> gguf,
                         model::GgufFile::Open(testing::DefaultModelGguf()));
  return model::LoadTokenizer(*gguf);
}

class RulerExactParity : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* f : {"essay_sentences.json", "wonderwords/nounlist.txt", "squad.json"}) {
      FOCAL_REQUIRE_FILE(DataCacheDir() + "/ruler/" + f, "bash scripts/fetch_data.sh");
    }
  }

  // Every golden row of `tokenizer` in `file` reproduced; on a mismatch the
  // sample's sizes say where to look (FOCAL_RULER_DUMP=DIR writes ours).
  void Check(const std::string& file, const std::string& tokenizer, const model::Tokenizer& tok) {
    const std::vector<GoldenRow> rows = ReadGolden(file, tokenizer);
    ASSERT_FALSE(rows.empty()) << file;
    CountTokens count = [&tok](absl::string_view text) -> absl::StatusOr<int64_t> {
      FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok.Encode(text, /*add_bos=*/false));
      return static_cast<int64_t>(ids.size());
    };
    std::map<std::pair<std::string, int64_t>, std::vector<const GoldenRow*>> groups;
    for (const GoldenRow& r : rows) groups[{r.task, r.length}].push_back(&r);
    const char* dump = std::getenv("FOCAL_RULER_DUMP");
    for (const auto& [key, want] : groups) {
      const auto& [task, length] = key;
      auto got = Generate(task, length, static_cast<int64_t>(want.size()), 42, Src(), count);
      ASSERT_TRUE(got.ok()) << task << " " << length << ": " << got.status();
      ASSERT_EQ(got->size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const Sample& s = (*got)[i];
        const GoldenRow& w = *want[i];
        if (dump != nullptr) {
          testing::WriteStringToFile(
              absl::StrCat(dump, "/", tokenizer, "_", task, "_", length, "_", i, ".txt"),
              absl::StrCat(s.input, "\n#OUT ", absl::StrJoin(s.outputs, "|")));
        }
        const std::string where = absl::StrCat(tokenizer, " ", task, " ", length, " #", i);
        EXPECT_EQ(Sha256Hex(s.input), w.input_sha)
            << where << ": input " << s.input.size() << " bytes, RULER's " << w.input_bytes;
        EXPECT_EQ(Sha256Hex(absl::StrJoin(s.outputs, "\n")), w.outputs_sha) << where;
        EXPECT_EQ(s.length, w.ruler_length) << where;
      }
    }
  }
};

TEST_F(RulerExactParity, DefaultModelTokenizer) {
  FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "bash scripts/fetch_default_model.sh");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<model::Tokenizer> tok, DefaultTokenizer());
  Check("smollm2.txt", "smollm2", *tok);
}

// Llama 2's sentencepiece tokenizer, counted as transformers' LlamaTokenizer
// counts (RULER's HFTokenizer on a tokenizer.model).
TEST_F(RulerExactParity, Llama2Tokenizer) {
  const std::string sp = testing::SharedPath("models/llama2-tokenizer/tokenizer.model");
  FOCAL_REQUIRE_FILE(sp, "../shared");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<model::SentencePieceTokenizer> tok,
                             model::SentencePieceTokenizer::Load(sp));
  Check("llama2.txt", "llama2", *tok);
}

// Where RULER would redraw forever (no haystack size fits), a refusal that
// gives the numbers.
TEST_F(RulerExactParity, LengthTooShortIsRefusedWithTheNumbers) {
  FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "bash scripts/fetch_default_model.sh");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<model::Tokenizer> tok, DefaultTokenizer());
  CountTokens count = [&tok](absl::string_view text) -> absl::StatusOr<int64_t> {
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tok->Encode(text, /*add_bos=*/false));
    return static_cast<int64_t>(ids.size());
  };
  auto r = Generate("niah_single_1", 200, 1, 42, Src(), count);
  EXPECT_THAT(r.status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("niah_single_1: a sample does not fit in 200 tokens")));
  EXPECT_THAT(r.status().message(), HasSubstr("with the answer room"));
}

TEST(RulerExactTest, UnknownTaskListsTheValidOnes) {
  Sources none;
  auto r = Generate("niah_single_9", 4096, 1, 42, none,
                    [](absl::string_view) -> absl::StatusOr<int64_t> { return 0; });
  EXPECT_THAT(r.status(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("niah_single_1, niah_single_2")));
}

TEST(RulerExactTest, PythonListRepr) {
  EXPECT_EQ(PyListRepr({"a", "it's", "say \"hi\" it's", "back\\slash", "tab\t", "caf\xc3\xa9"}),
            "['a', \"it's\", 'say \"hi\" it\\'s', 'back\\\\slash', 'tab\\t', 'caf\xc3\xa9']");
  EXPECT_EQ(PyListRepr({}), "[]");
  EXPECT_EQ(PyListRepr({"nb\xc2\xa0sp"}), "['nb\\xa0sp']");
}

TEST(RulerExactTest, NumpyLegacyRandint) {
  // np.random.seed(42); [np.random.randint(10000, 99999) for _ in range(5)]
  ::focal::NumpyRandomState np(42);
  std::vector<int64_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(np.RandInt(10000, 99999));
  EXPECT_EQ(got, (std::vector<int64_t>{25795, 10860, 86820, 64886, 16265}));
}

}  // namespace
}  // namespace focal::datasets::ruler_exact
