// SPDX-License-Identifier: Apache-2.0
// tokenizer.json files BpeTokenizer refuses, each error naming the file and
// the field (part of bpe_tokenizer_test; the parity with HF tokenizers is in
// bpe_tokenizer_test.cc).
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/bpe_tokenizer.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- Refusals: every error names the file and the field. -------------------

struct BadCase {
  std::string what;
  std::string json;
  absl::StatusCode code;
  std::vector<std::string> message;
};

std::string Minimal(const std::string& model_extra, const std::string& top_extra = "") {
  return absl::StrCat(
      R"({"version": "1.0", )", top_extra,
      R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"])",
      model_extra, "}}");
}

TEST(BpeTokenizerTest, MinimalFileLoads) {
  const std::string dir = testing::MakeTempDir("bpe_min");
  testing::WriteStringToFile(dir + "/tokenizer.json", Minimal(""));
  auto tok = BpeTokenizer::Load(dir + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  auto ids = (*tok)->Encode("abba", false);
  ASSERT_TRUE(ids.ok());
  EXPECT_THAT(*ids, ElementsAre(2, 1, 0));
  auto text = (*tok)->Decode(*ids);  // no decoder: tokens joined by spaces
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "ab b a");
}

// Ids a model generated that name no token (past the vocabulary or in its
// gaps) give no text, as HF's tokenizers decode them (tokenizers 0.23:
// decode([0, 5, 1, 2, 99999]) over {a, b, ab} gives "abab"); Decode itself
// still refuses them.
TEST(BpeTokenizerTest, GeneratedIdsWithoutATokenGiveNoText) {
  const std::string dir = testing::MakeTempDir("bpe_gap");
  testing::WriteStringToFile(
      dir + "/tokenizer.json",
      R"({"version": "1.0", "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE",
          "vocab": {"a": 0, "b": 1, "ab": 2, "c": 5}, "merges": ["a b"]}})");
  auto tok = BpeTokenizer::Load(dir + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->vocab_size(), 6);
  for (int32_t id : {0, 2, 5}) EXPECT_TRUE((*tok)->HasToken(id)) << id;
  for (int32_t id : {-1, 3, 4, 6}) EXPECT_FALSE((*tok)->HasToken(id)) << id;
  EXPECT_THAT((*tok)->Decode({0, 3, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token id 3")));
  auto text = (*tok)->DecodeGenerated({0, 3, 1, 2, 4, 5, 99999, -1});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "ababc");
}

TEST(BpeTokenizerTest, InvalidFilesAreRefusedByName) {
  const std::vector<BadCase> cases = {
      {"bad JSON", R"({"model": )", absl::StatusCode::kInvalidArgument, {":1:"}},
      {"no model",
       R"({"version": "1.0"})",
       absl::StatusCode::kInvalidArgument,
       {"model: is missing"}},
      {"WordPiece",
       R"({"model": {"type": "WordPiece", "vocab": {}}})",
       absl::StatusCode::kUnimplemented,
       {"model.type", "'WordPiece'"}},
      {"Unigram",
       R"({"model": {"type": "Unigram", "vocab": []}})",
       absl::StatusCode::kUnimplemented,
       {"model.type", "'Unigram'"}},
      {"no type",
       R"({"model": {"vocab": {}}})",
       absl::StatusCode::kInvalidArgument,
       {"model.type: is missing"}},
      {"merge of unknown token",
       R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a zz"]}})",
       absl::StatusCode::kInvalidArgument,
       {"model.merges[0]", "'zz'", "not in model.vocab"}},
      {"merge result unknown",
       R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}})",
       absl::StatusCode::kInvalidArgument,
       {"model.merges[0]", "makes 'ab'"}},
      {"malformed merge",
       R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b c"]}})",
       absl::StatusCode::kInvalidArgument,
       {"model.merges[0]", "two tokens"}},
      {"merge not a string",
       R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [7]}})",
       absl::StatusCode::kInvalidArgument,
       {"model.merges[0]"}},
      {"no merges",
       R"({"model": {"type": "BPE", "vocab": {"a": 0}}})",
       absl::StatusCode::kInvalidArgument,
       {"model.merges: is missing"}},
      {"id not integer",
       R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}})",
       absl::StatusCode::kInvalidArgument,
       {"model.vocab", "'a'"}},
      {"shared id",
       R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})",
       absl::StatusCode::kInvalidArgument,
       {"model.vocab", "both have id 0"}},
      {"dropout",
       Minimal(R"(, "dropout": 0.1)"),
       absl::StatusCode::kUnimplemented,
       {"model.dropout"}},
      {"subword prefix",
       Minimal(R"(, "continuing_subword_prefix": "##")"),
       absl::StatusCode::kUnimplemented,
       {"model.continuing_subword_prefix"}},
      {"unk not in vocab",
       Minimal(R"(, "unk_token": "<unk>")"),
       absl::StatusCode::kInvalidArgument,
       {"model.unk_token", "'<unk>'"}},
      {"NFC",
       Minimal("", R"("normalizer": {"type": "NFC"}, )"),
       absl::StatusCode::kUnimplemented,
       {"normalizer", "'NFC'"}},
      {"regex Replace",
       Minimal("", R"("normalizer": {"type": "Sequence", "normalizers": [{"type": "Replace",
            "pattern": {"Regex": " +"}, "content": " "}]}, )"),
       absl::StatusCode::kUnimplemented,
       {"normalizer.normalizers[0].pattern", "regex"}},
      {"Whitespace",
       Minimal("", R"("pre_tokenizer": {"type": "Whitespace"}, )"),
       absl::StatusCode::kUnimplemented,
       {"pre_tokenizer", "'Whitespace'"}},
      {"unknown Split regex",
       Minimal("", R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split",
            "pattern": {"Regex": "\\p{N}+"}, "behavior": "Isolated", "invert": false}]}, )"),

       absl::StatusCode::kUnimplemented,
       {"pre_tokenizer.pretokenizers[0].pattern", "\\p{N}+"}},
      {"bad behavior",
       Minimal("", R"("pre_tokenizer": {"type": "Split", "pattern": {"String": " "},
            "behavior": "Sideways", "invert": false}, )"),
       absl::StatusCode::kInvalidArgument,
       {"pre_tokenizer.behavior", "'Sideways'"}},
      {"WordPiece decoder",
       Minimal("", R"("decoder": {"type": "WordPiece"}, )"),
       absl::StatusCode::kUnimplemented,
       {"decoder", "'WordPiece'"}},
      {"Roberta",
       Minimal("", R"("post_processor": {"type": "RobertaProcessing"}, )"),
       absl::StatusCode::kUnimplemented,
       {"post_processor", "'RobertaProcessing'"}},
      {"single_word",
       Minimal("", R"("added_tokens": [{"id": 3, "content": "<x>", "single_word": true,
            "lstrip": false, "rstrip": false, "normalized": false, "special": true}], )"),
       absl::StatusCode::kUnimplemented,
       {"added_tokens[0]", "single_word"}},
      {"added id mismatch",
       Minimal("", R"("added_tokens": [{"id": 9, "content": "<x>", "special": true}], )"),
       absl::StatusCode::kInvalidArgument,
       {"added_tokens[0]", "has id 9 but would get id 3"}},
      {"template without $A",
       Minimal("", R"("post_processor": {"type": "TemplateProcessing", "single": [],
            "special_tokens": {}}, )"),
       absl::StatusCode::kInvalidArgument,
       {"post_processor.single", "$A"}},
      {"version",
       R"({"version": "2.0", "model": {}})",
       absl::StatusCode::kUnimplemented,
       {"version"}},
  };
  const std::string dir = testing::MakeTempDir("bpe_bad");
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string path = absl::StrCat(dir, "/", c.what, ".json");
    testing::WriteStringToFile(path, c.json);
    auto tok = BpeTokenizer::Load(path);
    ASSERT_FALSE(tok.ok());
    EXPECT_EQ(tok.status().code(), c.code) << tok.status();
    EXPECT_THAT(std::string(tok.status().message()), HasSubstr(path)) << tok.status();
    for (const std::string& m : c.message) {
      EXPECT_THAT(std::string(tok.status().message()), HasSubstr(m));
    }
  }
}

// Found by fuzzing (tests/fuzz/fuzz_gguf; the same bug through
// tokenizer.json): a token that is not UTF-8 (here a lone lead byte) loaded,
// and the ByteLevel decoder then read past its end.
TEST(BpeTokenizerTest, FileThatIsNotUtf8IsRefused) {
  const std::string dir = testing::MakeTempDir("bpe_not_utf8");
  const std::string path = dir + "/tokenizer.json";
  testing::WriteStringToFile(path,
                             "{\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": "
                             "{\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"\xe2\": 1}, "
                             "\"merges\": []}}");
  EXPECT_THAT(BpeTokenizer::Load(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(path), HasSubstr("not valid UTF-8"))));
}

}  // namespace
}  // namespace focal::model
