// SPDX-License-Identifier: Apache-2.0
// LoadTokenizer: which implementation the files in a directory select, its
// errors, and the identity (kind, path, SHA-256) a loaded tokenizer reports.
// What the sentencepiece tokenizer encodes is checked against HF in
// stories260k_test, the BPE one in bpe_tokenizer_test.
#include "model/tokenizer.h"

#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "base/asset_root.h"
#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/bpe_tokenizer.h"
#include "model/language_model.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Stories260K() { return testing::Stories260KDir(); }

// A temp directory holding the bundled tokenizer.model.
std::string DirWithTokenizerModel(const std::string& tag) {
  const std::string dir = testing::MakeTempDir(tag);
  std::filesystem::copy_file(Stories260K() + "/tokenizer.model", dir + "/tokenizer.model");
  return dir;
}

// A temp directory whose tokenizer.model holds `bytes`.
std::string DirWithModelBytes(const std::string& tag, const std::string& bytes) {
  const std::string dir = testing::MakeTempDir(tag);
  testing::WriteStringToFile(dir + "/tokenizer.model", bytes);
  return dir;
}

TEST(LoadTokenizerTest, TokenizerModelSelectsSentencePiece) {
  const std::string dir = Stories260K();
  auto tok = LoadTokenizer(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->name(), "sentencepiece");
  EXPECT_NE(dynamic_cast<const SentencePieceTokenizer*>(tok->get()), nullptr);
  // The path is spelt as LanguageModel always did: results record it.
  EXPECT_EQ((*tok)->path(), dir + "/tokenizer.model");
  EXPECT_EQ((*tok)->vocab_size(), 512);
  EXPECT_EQ((*tok)->bos_id(), 1);
  EXPECT_EQ((*tok)->eos_id(), 2);
}

TEST(LoadTokenizerTest, Sha256IsThatOfTheFileBytes) {
  auto tok = LoadTokenizer(Stories260K());
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->sha256(), Sha256Hex(testing::ReadFileOrDie((*tok)->path())));
  // As `sha256sum` prints it, so the hasher is not checked against itself.
  EXPECT_EQ((*tok)->sha256(), "dfff07d929db979913f166ec94a6f5ecad4c70cfed8eb5c9cbe7e464455e46f5");
}

TEST(LoadTokenizerTest, TokenizerModelWinsOverTokenizerJson) {
  const std::string dir = DirWithTokenizerModel("tok_both");
  testing::WriteStringToFile(dir + "/tokenizer.json", "{}");
  auto tok = LoadTokenizer(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->name(), "sentencepiece");
  EXPECT_EQ((*tok)->path(), dir + "/tokenizer.model");
}

TEST(LoadTokenizerTest, TokenizerJsonAloneSelectsBpe) {
  const std::string dir = testing::MakeTempDir("tok_json");
  std::filesystem::copy_file(testing::SourcePath("tests/testdata/tokenizer/gpt2/tokenizer.json"),
                             dir + "/tokenizer.json");
  auto tok = LoadTokenizer(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->name(), "bpe");
  EXPECT_NE(dynamic_cast<const BpeTokenizer*>(tok->get()), nullptr);
  EXPECT_EQ((*tok)->path(), dir + "/tokenizer.json");
  EXPECT_EQ((*tok)->sha256(), Sha256Hex(testing::ReadFileOrDie(dir + "/tokenizer.json")));
}

// A tokenizer.json whose components are not implemented is Unimplemented
// (a model directory may still load without it, below); a broken one is an
// error naming the file.
constexpr char kWordPieceJson[] =
    R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}})";

TEST(LoadTokenizerTest, UnimplementedTokenizerJsonSaysSo) {
  const std::string dir = testing::MakeTempDir("tok_wordpiece");
  testing::WriteStringToFile(dir + "/tokenizer.json", kWordPieceJson);
  EXPECT_THAT(LoadTokenizer(dir),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr(dir + "/tokenizer.json"), HasSubstr("model.type"),
                             HasSubstr("'WordPiece'"))));
  testing::WriteStringToFile(dir + "/tokenizer.json", "{}");
  EXPECT_THAT(LoadTokenizer(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(dir + "/tokenizer.json"), HasSubstr("model"))));
}

TEST(LoadTokenizerTest, NoTokenizerFileIsNotFound) {
  const std::string dir = testing::MakeTempDir("tok_none");
  EXPECT_THAT(LoadTokenizer(dir),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("'" + dir + "'"), HasSubstr("tokenizer.model"),
                             HasSubstr("tokenizer.json"))));
}

TEST(LoadTokenizerTest, CorruptTokenizerModelNamesTheFile) {
  const std::string dir = DirWithModelBytes("tok_corrupt", "not a sentencepiece model");
  EXPECT_THAT(LoadTokenizer(dir),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(dir + "/tokenizer.model")));
}

// Found by fuzzing (tests/fuzz/fuzz_sentencepiece): IdToPiece of an id
// outside the vocabulary, e.g. bos_id() -1 of a model without BOS (as
// convert-llama2c asks for), aborted in sentencepiece's CHECK; it is "".
TEST(LoadTokenizerTest, SentencePieceIdToPieceOutsideTheVocabularyIsEmpty) {
  // A unigram model written byte by byte (protobuf wire format): pieces
  // <unk>, "a", "b"; trainer_spec bos_id = eos_id = -1; identity normalizer.
  const std::string model(
      "\x0a\x0e\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02"
      "\x0a\x0a\x0a\x01"
      "a"
      "\x15\x00\x00\x80\xbf\x18\x01"
      "\x0a\x0a\x0a\x01"
      "b"
      "\x15\x00\x00\x00\xc0\x18\x01"
      "\x12\x1c\x18\x01\x20\x03\xc8\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
      "\xd0\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
      "\x1a\x0a\x0a\x08identity",
      82);
  const std::string dir = DirWithModelBytes("tok_spm_nobos", model);
  auto tok = LoadTokenizer(dir);
  ASSERT_TRUE(tok.ok()) << tok.status();
  ASSERT_EQ((*tok)->vocab_size(), 3);
  EXPECT_EQ((*tok)->bos_id(), -1);
  EXPECT_EQ((*tok)->IdToPiece(1), "a");
  EXPECT_EQ((*tok)->IdToPiece((*tok)->bos_id()), "");
  EXPECT_EQ((*tok)->IdToPiece(3), "");
  EXPECT_EQ((*tok)->IdToPiece(-7), "");
}

// Found by fuzzing (tests/fuzz/fuzz_sentencepiece): a piece holding a NUL
// byte made sentencepiece's trie builder throw, which aborted the process.
TEST(LoadTokenizerTest, SentencePiecePieceWithNulByteIsAnError) {
  // Pieces <unk> and "\0", identity normalizer.
  const std::string model(
      "\x0a\x0e\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02"
      "\x0a\x0a\x0a\x01\x00\x15\x00\x00\x80\xbf\x18\x01"
      "\x1a\x0a\x0a\x08identity",
      40);
  const std::string dir = DirWithModelBytes("tok_spm_nul", model);
  EXPECT_THAT(LoadTokenizer(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                           AllOf(HasSubstr(dir + "/tokenizer.model"),
                                                 HasSubstr("pieces[1] contains a NUL byte"))));
}

// require_tokenizer decides whether a tokenizer kind not supported yet stops
// the load (run, score) or leaves the model without one (inspect).
TEST(LoadTokenizerTest, LanguageModelRequireTokenizer) {
  const std::string dir =
      testing::CopyDirToTemp(testing::SourcePath("tests/testdata/models/gqa_untied"), "tok_lm");
  testing::WriteStringToFile(dir + "/tokenizer.json", kWordPieceJson);
  kernels::CpuBackend backend(1);
  LoadOptions o;
  o.validate_only = true;
  EXPECT_THAT(LanguageModel::Load(dir, backend, o),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr(dir + "/tokenizer.json")));
  o.require_tokenizer = false;
  auto m = LanguageModel::Load(dir, backend, o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->tokenizer(), nullptr);
}

}  // namespace
}  // namespace focal::model
