// SPDX-License-Identifier: Apache-2.0
// BpeTokenizer against HF `tokenizers` 0.22.1: the tiny tokenizers of
// tests/testdata/tokenizer/ (trained by tests/reference/
// make_tokenizer_reference.py) must give the goldens' ids for every line of
// the project's corpus and of 300 random strings, with and without special tokens, and decode back
// to the goldens' text; likewise SmolLM2's real tokenizer when FOCAL_SMOLLM2_TOKENIZER_JSON names
// the file that script builds from the GGUF. Also: the in-memory (GGUF-style) constructor,
// tokenizer_config.json, lm-eval's _encode_pair through TokenizeRequest, and every refusal.
#include "model/bpe_tokenizer.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/sha256.h"
#include "engine/scorer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/bpe_pre_tokenizer.h"
#include "model/tokenizer_loader.h"
#include "model/unicode.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::JsonInts;
using ::focal::testing::ReadJsonLines;
using ::focal::testing::StatusIs;
using ::focal::testing::TokenizerCorpus;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string TokDir(const std::string& name) {
  return testing::SourcePath("tests/testdata/tokenizer/" + name);
}

struct Golden {
  JsonValue header;
  std::vector<JsonValue> rows;
};
Golden ReadGolden(const std::string& name) {
  std::vector<JsonValue> lines = ReadJsonLines(testing::GoldenPath("tokenizer/" + name + ".jsonl"));
  Golden g;
  g.header = lines.at(0);
  g.rows.assign(lines.begin() + 1, lines.end());
  return g;
}

// A temp dir with `name`'s tokenizer.json and, if given, a tokenizer_config.json.
std::string DirWith(const std::string& name, const std::string& config = "") {
  const std::string dir = testing::MakeTempDir("bpe_" + name);
  std::filesystem::copy_file(TokDir(name) + "/tokenizer.json", dir + "/tokenizer.json");
  if (!config.empty()) testing::WriteStringToFile(dir + "/tokenizer_config.json", config);
  return dir;
}

// Every corpus line: ids, ids with special tokens, decoded text and
// Encode(add_bos) all as the golden says. `with_special` false skips
// EncodeWithSpecialTokens (for tokenizers built another way).
void ExpectMatchesGolden(const BpeTokenizer& tok, const Golden& g, bool with_special = true) {
  const std::vector<std::string> corpus = TokenizerCorpus();
  ASSERT_EQ(corpus.size(), g.rows.size());
  for (size_t i = 0; i < corpus.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("corpus line ", i + 1, ": '", corpus[i], "'"));
    const std::vector<int32_t> ids = JsonInts(*g.rows[i].Find("ids"));
    auto got = tok.Encode(corpus[i], /*add_bos=*/false);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, ids);
    if (with_special) {
      auto special = tok.EncodeWithSpecialTokens(corpus[i]);
      ASSERT_TRUE(special.ok()) << special.status();
      EXPECT_EQ(*special, JsonInts(*g.rows[i].Find("with_special")));
    }
    auto text = tok.Decode(ids);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(*text, g.rows[i].Find("decoded")->string_value());
    if (tok.bos_id() >= 0) {
      auto with_bos = tok.Encode(corpus[i], /*add_bos=*/true);
      ASSERT_TRUE(with_bos.ok()) << with_bos.status();
      std::vector<int32_t> expected = {tok.bos_id()};
      expected.insert(expected.end(), ids.begin(), ids.end());
      EXPECT_EQ(*with_bos, expected);
    }
  }
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesHfTokenizers) {
  const Golden g = ReadGolden(GetParam());
  // Loaded through LoadTokenizer from a directory with only tokenizer.json,
  // so BOS/EOS come from the post-processor.
  const std::string dir = DirWith(GetParam());
  auto loaded = LoadTokenizer(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->name(), "bpe");
  EXPECT_EQ((*loaded)->path(), dir + "/tokenizer.json");
  // The file is the one the goldens were made from.
  EXPECT_EQ((*loaded)->sha256(), g.header.Find("tokenizer_json_sha256")->string_value());
  EXPECT_EQ((*loaded)->vocab_size(), g.header.Find("vocab_size")->integer());
  const auto* tok = dynamic_cast<const BpeTokenizer*>(loaded->get());
  ASSERT_NE(tok, nullptr);
  ExpectMatchesGolden(*tok, g);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, GoldenTest,
                         ::testing::Values("gpt2", "llama3", "smollm", "spm", "spm_unk",
                                           "metaspace"));

// What a GGUF loader would hand FromParts, taken here from a tokenizer.json.
BpeTokenizerParts PartsFromJson(const std::string& path, BpePreTokenizerKind kind) {
  auto root = ParseJson(testing::ReadFileOrDie(path), path);
  EXPECT_TRUE(root.ok()) << root.status();
  BpeTokenizerParts parts;
  parts.kind = kind;
  parts.source = path;
  const JsonValue& model = *root->Find("model");
  for (const auto& [token, id] : model.Find("vocab")->members()) {
    if (static_cast<size_t>(id.integer()) >= parts.vocab.size()) {
      parts.vocab.resize(id.integer() + 1);
    }
    parts.vocab[id.integer()] = token;
  }
  for (const JsonValue& m : model.Find("merges")->array()) {
    if (m.is_string()) {
      std::vector<std::string> ab = absl::StrSplit(m.string_value(), ' ');
      parts.merges.emplace_back(ab[0], ab[1]);
    } else {
      parts.merges.emplace_back(m.array()[0].string_value(), m.array()[1].string_value());
    }
  }
  for (const JsonValue& t : root->Find("added_tokens")->array()) {
    BpeAddedToken a;
    a.id = static_cast<int32_t>(t.Find("id")->integer());
    a.content = t.Find("content")->string_value();
    a.special = t.Find("special")->bool_value();
    a.lstrip = t.Find("lstrip")->bool_value();
    a.rstrip = t.Find("rstrip")->bool_value();
    a.normalized = t.Find("normalized")->bool_value();
    if (static_cast<size_t>(a.id) >= parts.vocab.size()) parts.vocab.resize(a.id + 1);
    parts.vocab[a.id] = a.content;
    parts.added.push_back(a);
  }
  return parts;
}

TEST(BpeFromPartsTest, MatchesHfTokenizers) {
  struct Case {
    std::string name;
    BpePreTokenizerKind kind;
    const char* bos;
  };
  for (const Case& c : {Case{"gpt2", BpePreTokenizerKind::kGpt2, nullptr},
                        Case{"llama3", BpePreTokenizerKind::kLlama3, "<|begin_of_text|>"},
                        Case{"smollm", BpePreTokenizerKind::kSmolLm, nullptr},
                        Case{"spm", BpePreTokenizerKind::kSentencePiece, "<s>"}}) {
    SCOPED_TRACE(c.name);
    BpeTokenizerParts parts = PartsFromJson(TokDir(c.name) + "/tokenizer.json", c.kind);
    parts.sha256 = "parts";
    if (c.bos != nullptr) {
      parts.bos_id = static_cast<int32_t>(std::find(parts.vocab.begin(), parts.vocab.end(), c.bos) -
                                          parts.vocab.begin());
      parts.add_bos = true;
    }
    if (c.kind == BpePreTokenizerKind::kSentencePiece) parts.unk_id = 0;
    auto tok = BpeTokenizer::FromParts(parts);
    ASSERT_TRUE(tok.ok()) << tok.status();
    EXPECT_EQ((*tok)->sha256(), "parts");
    ExpectMatchesGolden(**tok, ReadGolden(c.name));
  }
}

TEST(BpeFromPartsTest, GgufPreNames) {
  EXPECT_EQ(*BpePreTokenizerKindFromGgufPre("default"), BpePreTokenizerKind::kGpt2);
  EXPECT_EQ(*BpePreTokenizerKindFromGgufPre("gpt-2"), BpePreTokenizerKind::kGpt2);
  EXPECT_EQ(*BpePreTokenizerKindFromGgufPre("llama-bpe"), BpePreTokenizerKind::kLlama3);
  EXPECT_EQ(*BpePreTokenizerKindFromGgufPre("smollm"), BpePreTokenizerKind::kSmolLm);
  EXPECT_EQ(*BpePreTokenizerKindFromGgufPre("starcoder"), BpePreTokenizerKind::kSmolLm);
  // Unimplemented, not InvalidArgument: a model whose tokenizer is not yet
  // supported still loads where the tokenizer is optional (inspect).
  EXPECT_THAT(BpePreTokenizerKindFromGgufPre("qwen2"),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("'qwen2'")));
}

TEST(BpeFromPartsTest, BadPartsAreRefused) {
  BpeTokenizerParts parts;
  parts.source = "gguf:x";
  parts.vocab = {"a", "b", "ab"};
  parts.merges = {{"a", "c"}};
  EXPECT_THAT(BpeTokenizer::FromParts(parts),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("gguf:x: merges[0]"), HasSubstr("'c'"))));
  parts.merges = {{"a", "b"}};
  parts.bos_id = 7;
  EXPECT_THAT(BpeTokenizer::FromParts(parts),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bos_id")));
  parts.bos_id = -1;
  parts.add_bos = true;
  EXPECT_THAT(BpeTokenizer::FromParts(parts),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bos_id")));
}

// SmolLM2-135M's real vocabulary (49152 tokens): third-party data, so it is
// not in the repository; the reference script builds its tokenizer.json.
TEST(BpeSmolLm2Test, MatchesHfTokenizers) {
  const char* path = std::getenv("FOCAL_SMOLLM2_TOKENIZER_JSON");
  if (path == nullptr || *path == '\0') {
    GTEST_SKIP() << "set FOCAL_SMOLLM2_TOKENIZER_JSON to the tokenizer.json that "
                    "tests/reference/make_tokenizer_reference.py --gguf writes";
  }
  const Golden g = ReadGolden("smollm2_real");
  auto tok = BpeTokenizer::Load(path);
  ASSERT_TRUE(tok.ok()) << tok.status();
  ASSERT_EQ((*tok)->sha256(), g.header.Find("tokenizer_json_sha256")->string_value())
      << path << " is not the file the goldens were made from";
  EXPECT_EQ((*tok)->vocab_size(), 49152);
  ExpectMatchesGolden(**tok, g);
  // The GGUF route: the same vocabulary and merges through FromParts.
  BpeTokenizerParts parts = PartsFromJson(path, *BpePreTokenizerKindFromGgufPre("smollm"));
  parts.bos_id = static_cast<int32_t>(g.header.Find("bos_token_id")->integer());
  parts.eos_id = static_cast<int32_t>(g.header.Find("eos_token_id")->integer());
  auto from_parts = BpeTokenizer::FromParts(parts);
  ASSERT_TRUE(from_parts.ok()) << from_parts.status();
  ExpectMatchesGolden(**from_parts, g);
}

// The same goldens through the default model's own GGUF vocabulary
// (LoadTokenizer(GgufFile)), fetched by scripts/fetch_default_model.sh.
TEST(BpeSmolLm2Test, GgufTokenizerMatchesHfTokenizers) {
  const std::string path = testing::DefaultModelGguf();
  FOCAL_REQUIRE_FILE(path, "scripts/fetch_default_model.sh");
  auto gguf = GgufFile::Open(path);
  ASSERT_TRUE(gguf.ok()) << gguf.status();
  auto tok = LoadTokenizer(**gguf);
  ASSERT_TRUE(tok.ok()) << tok.status();
  const auto* bpe = dynamic_cast<const BpeTokenizer*>(tok->get());
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(bpe->vocab_size(), 49152);
  // tokenizer.ggml.add_bos_token is false: "with special tokens" adds nothing,
  // so only the plain encodings are compared.
  ExpectMatchesGolden(*bpe, ReadGolden("smollm2_real"), /*with_special=*/false);
}

// lm-eval's _encode_pair (whole = encode(context + continuation), the
// continuation's ids are those past encode(context)) through the scorer.
TEST(BpeEncodePairTest, TokenizeRequestMatchesLmEval) {
  std::vector<JsonValue> rows = ReadJsonLines(testing::GoldenPath("tokenizer/encode_pair.jsonl"));
  rows.erase(rows.begin());
  ASSERT_FALSE(rows.empty());
  for (const JsonValue& row : rows) {
    const std::string name = row.Find("tokenizer")->string_value();
    SCOPED_TRACE(absl::StrCat(name, ": '", row.Find("context")->string_value(), "' + '",
                              row.Find("continuation")->string_value(), "'"));
    auto tok = BpeTokenizer::Load(TokDir(name) + "/tokenizer.json");
    ASSERT_TRUE(tok.ok()) << tok.status();
    tasks::LoglikelihoodRequest req{row.Find("context")->string_value(),
                                    row.Find("continuation")->string_value()};
    auto tr = engine::TokenizeRequest(**tok, row.Find("add_bos")->bool_value(), 4096, req);
    const std::vector<int32_t> cont = JsonInts(*row.Find("continuation_enc"));
    if (cont.empty()) {
      // The whole encodes as the context alone ("caf" + "é" is one token
      // "café"): lm-eval would score nothing; the scorer refuses it.
      EXPECT_THAT(tr, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no tokens")));
      continue;
    }
    ASSERT_TRUE(tr.ok()) << tr.status();
    std::vector<int32_t> full = JsonInts(*row.Find("context_enc"));
    full.insert(full.end(), cont.begin(), cont.end());
    full.pop_back();
    EXPECT_EQ(tr->continuation, cont);
    EXPECT_EQ(tr->input, full);
  }
}

TEST(BpeConfigTest, BosEosNamedByTokenizerConfig) {
  // SmolLM-style: the config names BOS/EOS, the post-processor adds nothing.
  const std::string config = R"({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"})";
  const std::string dir = DirWith("smollm", config);
  auto tok = BpeTokenizer::Load(dir + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->bos_id(), 1);
  EXPECT_EQ((*tok)->eos_id(), 2);
  EXPECT_THAT((*tok)->prefix_ids(), IsEmpty());
  EXPECT_THAT((*tok)->suffix_ids(), IsEmpty());
  auto ids = (*tok)->Encode("Hello", /*add_bos=*/true);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(ids->front(), 1);
  // The config is part of the identity.
  EXPECT_EQ((*tok)->sha256(), Sha256Hex(testing::ReadFileOrDie(dir + "/tokenizer.json") + config));
}

TEST(BpeConfigTest, AddBosAndEosOverrideThePostProcessor) {
  const std::string dir = DirWith("spm", R"({"add_bos_token": true, "add_eos_token": true,
                 "bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>"})");
  auto tok = BpeTokenizer::Load(dir + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  auto plain = (*tok)->Encode("Hello world", false);
  auto special = (*tok)->EncodeWithSpecialTokens("Hello world");
  ASSERT_TRUE(plain.ok() && special.ok());
  std::vector<int32_t> expected = {1};
  expected.insert(expected.end(), plain->begin(), plain->end());
  expected.push_back(2);
  EXPECT_EQ(*special, expected);

  auto no_bos =
      BpeTokenizer::Load(DirWith("spm", R"({"add_bos_token": false})") + "/tokenizer.json");
  ASSERT_TRUE(no_bos.ok()) << no_bos.status();
  EXPECT_THAT((*no_bos)->prefix_ids(), IsEmpty());
  EXPECT_EQ((*no_bos)->bos_id(), 1);  // still named by the template
}

TEST(BpeConfigTest, BadConfigNamesFileAndField) {
  std::string dir = DirWith("smollm", R"({"bos_token": "<nope>"})");
  EXPECT_THAT(
      BpeTokenizer::Load(dir + "/tokenizer.json"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr(dir + "/tokenizer_config.json: bos_token"), HasSubstr("'<nope>'"))));
  dir = DirWith("gpt2", R"({"add_bos_token": true})");
  EXPECT_THAT(BpeTokenizer::Load(dir + "/tokenizer.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("tokenizer_config.json: add_bos_token"),
                             HasSubstr("no bos_token"))));
  dir = DirWith("gpt2", R"({"bos_token": 3})");
  EXPECT_THAT(BpeTokenizer::Load(dir + "/tokenizer.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bos_token")));
}

TEST(BpeTokenizerTest, EncodeAndDecodeEdges) {
  auto tok = BpeTokenizer::Load(TokDir("gpt2") + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->bos_id(), -1);  // no template, no config
  EXPECT_THAT((*tok)->Encode("x", /*add_bos=*/true),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no BOS")));
  EXPECT_THAT((*tok)->Encode("bad \xFF utf-8", false),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not valid UTF-8")));
  EXPECT_THAT((*tok)->Decode({(*tok)->vocab_size()}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not in the vocabulary")));
  EXPECT_THAT((*tok)->Decode({-1}), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-1")));
  // Special tokens decode to nothing; IdToPiece spells tokens as the file.
  auto text = (*tok)->Decode({0});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
  EXPECT_EQ((*tok)->IdToPiece(0), "<|endoftext|>");
  EXPECT_EQ((*tok)->IdToPiece(-5), "");
}

TEST(BpePreTokenizerTest, RecognizesTheKnownRegexesOnly) {
  for (SplitRegex re : {SplitRegex::kGpt2, SplitRegex::kLlama3, SplitRegex::kQwen2}) {
    EXPECT_EQ(RecognizeSplitRegex(SplitRegexPattern(re)), re);
  }
  EXPECT_EQ(RecognizeSplitRegex(R"(\p{N}+)"), std::nullopt);
}

TEST(BpePreTokenizerTest, Gpt2SplitKeepsLastSpaceForTheNextWord) {
  const std::string text = "a   b\n";
  std::vector<std::string> parts;
  for (const Span& s : FindRegexSpans(SplitRegex::kGpt2, text)) {
    parts.push_back(text.substr(s.begin, s.end - s.begin));
  }
  EXPECT_THAT(parts, ElementsAre("a", "  ", " b", "\n"));
}

TEST(UnicodeTest, ClassesAndLossyUtf8) {
  EXPECT_EQ(ClassifyCodePoint('a'), CharClass::kLetter);
  EXPECT_EQ(ClassifyCodePoint(0x65E5), CharClass::kLetter);  // 日
  EXPECT_EQ(ClassifyCodePoint(0x0663), CharClass::kNumber);  // Arabic-Indic 3
  EXPECT_EQ(ClassifyCodePoint(0x216B), CharClass::kNumber);  // Roman numeral 12
  EXPECT_EQ(ClassifyCodePoint(0x3000), CharClass::kWhitespace);
  EXPECT_EQ(ClassifyCodePoint(0x0085), CharClass::kWhitespace);
  EXPECT_EQ(ClassifyCodePoint(0x0301), CharClass::kOther);   // combining acute
  EXPECT_EQ(ClassifyCodePoint(0x1F600), CharClass::kOther);  // emoji
  EXPECT_EQ(Utf8Lossy("a\xF0\x9F\x98"
                      "b"),
            "a\xEF\xBF\xBD"
            "b");  // one per maximal prefix
  EXPECT_EQ(Utf8Lossy("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // a surrogate
}

}  // namespace
}  // namespace focal::model
