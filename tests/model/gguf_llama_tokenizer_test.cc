// SPDX-License-Identifier: Apache-2.0
// GGUF-embedded sentencepiece ("llama") vocabularies against HF transformers
// 5.24 (AutoTokenizer.from_pretrained(dir, gguf_file=...)), goldens from
// tests/reference/make_gguf_llama_tokenizer_reference.py: three GGUFs built
// here from the project-trained vocabulary of tests/testdata/tokenizer/spm
// (byte for byte the files the script fed transformers), and the real Llama 2
// vocabulary of ../shared's tiny random Llama 2. Every corpus line: ids with
// and without special tokens, Encode(add_bos), decode; the merges derived
// from the scores; and every refusal of bad metadata.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/bpe_tokenizer.h"
#include "model/gguf.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/gguf_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::GgufBuilder;
using ::focal::testing::JsonInts;
using ::focal::testing::ReadJsonLines;
using ::focal::testing::StatusIs;
using ::focal::testing::TokenizerCorpus;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSharedGguf[] = "models/tiny-random-llama-2-gguf/llama-2-tiny-random.gguf";

std::string TokDir(const std::string& name) {
  return testing::SourcePath("tests/testdata/tokenizer/" + name);
}

std::string HexSha256(absl::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.HexDigest();
}

// The project's llama-vocab GGUF `variant`, key for key as the reference
// script's project_gguf() writes it (see there for what each variant holds).
GgufBuilder ProjectGguf(const std::string& variant) {
  auto json = ParseJson(testing::ReadFileOrDie(TokDir("spm") + "/tokenizer.json"), "spm");
  EXPECT_TRUE(json.ok()) << json.status();
  const JsonValue& vocab = *json->Find("model")->Find("vocab");
  std::vector<std::string> tokens(vocab.members().size());
  for (const auto& [token, id] : vocab.members()) tokens.at(id.integer()) = token;
  std::vector<int32_t> types;
  for (size_t i = 0; i < tokens.size(); ++i) {
    types.push_back(i == 0 ? 2 : i < 3 ? 3 : tokens[i].rfind("<0x", 0) == 0 ? 6 : 1);
  }
  for (auto [t, type] : {std::pair{"<mask>", 4}, {"<|im_start|>", 3}, {"<|im_end|>", 3}}) {
    tokens.push_back(t);
    types.push_back(type);
  }
  if (variant == "spm_odd") {
    std::vector<std::string> kept_tokens;
    std::vector<int32_t> kept_types;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].rfind("<0x", 0) == 0 &&
          std::stoi(tokens[i].substr(3, 2), nullptr, 16) >= 0x80) {
        continue;
      }
      kept_tokens.push_back(tokens[i]);
      kept_types.push_back(types[i]);
    }
    tokens = std::move(kept_tokens);
    types = std::move(kept_types);
    tokens[1] = "<BOS>";
    types[2] = 4;
  }
  std::vector<float> scores;
  for (size_t i = 0; i < types.size(); ++i) {
    scores.push_back(types[i] == 1 ? -static_cast<float>(i / 2) : 0.0f);
  }
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddString("tokenizer.ggml.model", "llama");
  b.AddStringArray("tokenizer.ggml.tokens", tokens);
  b.AddF32Array("tokenizer.ggml.scores", scores);
  b.AddI32Array("tokenizer.ggml.token_type", types);
  b.AddU32("tokenizer.ggml.bos_token_id", 1);
  b.AddU32("tokenizer.ggml.eos_token_id", 2);
  if (variant == "spm") {
    b.AddU32("tokenizer.ggml.unknown_token_id", 0);
    b.AddBool("tokenizer.ggml.add_space_prefix", true);
  } else if (variant == "spm_nospace") {
    b.AddU32("tokenizer.ggml.unknown_token_id", 0);
    b.AddBool("tokenizer.ggml.add_space_prefix", false);
    b.AddBool("tokenizer.ggml.add_bos_token", false);
    b.AddBool("tokenizer.ggml.add_eos_token", true);
  } else {
    EXPECT_EQ(variant, "spm_odd");
    const auto d = std::find(tokens.begin(), tokens.end(), "d");
    EXPECT_NE(d, tokens.end());
    b.AddU32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(d - tokens.begin()));
  }
  return b;
}

class GgufLlamaTokenizerTest : public ::testing::Test {
 protected:
  std::string WriteGguf(const std::string& bytes, const std::string& name = "t.gguf") {
    const std::string path = testing::MakeTempDir("gguf_llama") + "/" + name;
    testing::WriteStringToFile(path, bytes);
    return path;
  }

  absl::StatusOr<std::unique_ptr<Tokenizer>> LoadBytes(const std::string& bytes) {
    const std::string path = WriteGguf(bytes);
    absl::StatusOr<std::unique_ptr<GgufFile>> f = GgufFile::Open(path);
    if (!f.ok()) return f.status();
    return LoadTokenizer(**f);
  }

  // The merges transformers derived (the header's count and hash) from the
  // file's tokens and scores.
  void ExpectMerges(const GgufFile& f, const JsonValue& header) {
    FOCAL_ASSERT_OK_AND_ASSIGN(GgufTokenizerData data, ReadGgufTokenizer(f));
    FOCAL_ASSERT_OK_AND_ASSIGN(auto merges,
                               MergesFromScores(data.tokens, data.scores, f.path(), "scores"));
    std::string joined;
    for (const auto& [a, b] : merges)
      absl::StrAppend(&joined, a, std::string(1, '\0'), b, std::string(1, '\0'));
    EXPECT_EQ(static_cast<int64_t>(merges.size()), header.Find("merges")->integer());
    EXPECT_EQ(HexSha256(joined), header.Find("merges_sha256")->string_value());
  }

  // The golden `name` against the GGUF at `path`, whose bytes must be the
  // ones the script used.
  void ExpectMatchesGolden(const std::string& path, const std::string& name) {
    const std::vector<JsonValue> lines =
        ReadJsonLines(testing::GoldenPath("tokenizer/" + name + ".jsonl"));
    ASSERT_FALSE(lines.empty());
    const JsonValue& header = lines[0];
    ASSERT_EQ(HexSha256(testing::ReadFileOrDie(path)), header.Find("gguf_sha256")->string_value())
        << path << " is not the GGUF the golden was made from";
    FOCAL_ASSERT_OK_AND_ASSIGN(auto f, GgufFile::Open(path));
    ExpectMerges(*f, header);
    FOCAL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Tokenizer> tok, LoadTokenizer(*f));
    const auto* bpe = dynamic_cast<const BpeTokenizer*>(tok.get());
    ASSERT_NE(bpe, nullptr);
    EXPECT_EQ(tok->vocab_size(), header.Find("vocab_size")->integer());
    EXPECT_EQ(tok->bos_id(), header.Find("bos_id")->integer());
    EXPECT_EQ(tok->eos_id(), header.Find("eos_id")->integer());
    EXPECT_EQ(tok->adds_bos(), header.Find("add_bos")->bool_value());
    EXPECT_EQ(!bpe->suffix_ids().empty(), header.Find("add_eos")->bool_value());
    EXPECT_EQ(tok->path(), path + "#tokenizer");
    EXPECT_EQ(tok->sha256().size(), 64u);

    const std::vector<std::string> corpus = TokenizerCorpus();
    ASSERT_EQ(corpus.size() + 1, lines.size());
    int mismatches = 0;
    for (size_t i = 0; i < corpus.size() && mismatches < 5; ++i) {
      SCOPED_TRACE(absl::StrCat(name, " corpus line ", i + 1, ": '", corpus[i], "'"));
      const JsonValue& row = lines[i + 1];
      const std::vector<int32_t> ids = JsonInts(*row.Find("ids"));
      FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> got, tok->Encode(corpus[i], false));
      FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> special,
                                 bpe->EncodeWithSpecialTokens(corpus[i]));
      FOCAL_ASSERT_OK_AND_ASSIGN(std::string text, tok->Decode(ids));
      EXPECT_EQ(got, ids);
      EXPECT_EQ(special, JsonInts(*row.Find("with_special")));
      EXPECT_EQ(HexSha256(text), row.Find("decoded_sha256")->string_value()) << "decoded: " << text;
      mismatches += got != ids || special != JsonInts(*row.Find("with_special"));
      // BOS as lm-eval's HF backend puts it: first, before the plain ids.
      if (tok->bos_id() >= 0) {
        FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> with_bos, tok->Encode(corpus[i], true));
        ASSERT_FALSE(with_bos.empty());
        EXPECT_EQ(with_bos[0], tok->bos_id());
        EXPECT_EQ(std::vector<int32_t>(with_bos.begin() + 1, with_bos.end()), got);
      }
    }
  }
};

TEST_F(GgufLlamaTokenizerTest, ProjectVocabularyMatchesTransformers) {
  for (const char* variant : {"spm", "spm_nospace", "spm_odd"}) {
    SCOPED_TRACE(variant);
    ExpectMatchesGolden(WriteGguf(ProjectGguf(variant).Build()),
                        absl::StrCat("gguf_llama_", variant));
  }
}

// What the goldens pin, spelt out.
TEST_F(GgufLlamaTokenizerTest, TransformersBehaviours) {
  FOCAL_ASSERT_OK_AND_ASSIGN(auto tok, LoadBytes(ProjectGguf("spm").Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto nospace, LoadBytes(ProjectGguf("spm_nospace").Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto odd, LoadBytes(ProjectGguf("spm_odd").Build()));
  // add_space_prefix false changes nothing (transformers ignores the key).
  for (const char* text : {"Hello world", "  hi", "<s>x"}) {
    EXPECT_EQ(*tok->Encode(text, false), *nospace->Encode(text, false)) << text;
  }
  // "▁" is prepended only at the very start, and not when the text starts
  // with a space; not after a special token.
  EXPECT_EQ(tok->IdToPiece(tok->Encode(" x", false)->at(0)), "\xE2\x96\x81x");
  EXPECT_EQ(tok->IdToPiece(tok->Encode("x", false)->at(0)), "\xE2\x96\x81x");
  const std::vector<int32_t> after_special = *tok->Encode("<s>x", false);
  ASSERT_EQ(after_special.size(), 2u);
  EXPECT_EQ(after_special[0], 1);
  EXPECT_EQ(tok->IdToPiece(after_special[1]), "x");
  // BOS by default; add_bos_token false / add_eos_token true are honoured.
  EXPECT_TRUE(tok->adds_bos());
  EXPECT_FALSE(nospace->adds_bos());
  EXPECT_THAT(*dynamic_cast<const BpeTokenizer&>(*nospace).EncodeWithSpecialTokens(""),
              ElementsAre(2));
  // Control tokens and the default names are special (no text); user-defined
  // ones are not.
  const int32_t mask = static_cast<int32_t>(tok->vocab_size()) - 3;
  EXPECT_EQ(tok->IdToPiece(mask), "<mask>");
  EXPECT_THAT(*tok->Encode("a<mask>b<|im_end|>", false), ::testing::Contains(mask));
  EXPECT_EQ(*tok->Decode({1, mask, mask + 1, mask + 2, 0, 2}), "<mask>");
  // spm_odd: no byte tokens above 0x7F, so "日" (not a piece) is dropped (no
  // unknown token in the model); "<s>" is appended after the vocabulary as a
  // special token.
  EXPECT_EQ(*odd->Encode("\xE6\x97\xA5", false), *odd->Encode(" ", false));  // just the "▁"
  EXPECT_EQ(*odd->Encode("x\xE6\x97\xA5", false), *odd->Encode("x", false));
  EXPECT_EQ(odd->vocab_size(), 583);
  EXPECT_THAT(*odd->Encode("<s>", false), ElementsAre(582));
  EXPECT_EQ(*odd->Decode({582, 1}), "");
  // </s> is user-defined there, yet decoding skips it (transformers added
  // it as special first); the padding token "d" is special.
  EXPECT_EQ(*odd->Decode({2}), "");
  const std::vector<int32_t> d = *odd->Encode("d", false);
  EXPECT_EQ(odd->IdToPiece(d.back()), "d");
  EXPECT_EQ(*odd->Decode(d), "");
}

TEST_F(GgufLlamaTokenizerTest, SharedTinyRandomLlama2MatchesTransformers) {
  const std::string path = testing::SharedPath(kSharedGguf);
  FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  ExpectMatchesGolden(path, "gguf_llama_tiny_random_llama2");
}

// --- Refusals ------------------------------------------------------------------

GgufBuilder Minimal(const std::vector<std::string>& tokens, const std::vector<float>& scores,
                    const std::vector<int32_t>& types, const std::string& arch = "llama") {
  GgufBuilder b;
  b.AddString("general.architecture", arch);
  b.AddString("tokenizer.ggml.model", "llama");
  b.AddStringArray("tokenizer.ggml.tokens", tokens);
  if (!scores.empty()) b.AddF32Array("tokenizer.ggml.scores", scores);
  if (!types.empty()) b.AddI32Array("tokenizer.ggml.token_type", types);
  b.AddU32("tokenizer.ggml.bos_token_id", 1);
  return b;
}

TEST_F(GgufLlamaTokenizerTest, BadMetadataIsRefusedByName) {
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a", "b", "ab"};
  const std::vector<float> scores = {0, 0, 0, -1, -2, -3};
  const std::vector<int32_t> types = {2, 3, 3, 1, 1, 1};
  FOCAL_ASSERT_OK_AND_ASSIGN(auto ok, LoadBytes(Minimal(tokens, scores, types).Build()));
  // No "▁" token and no byte tokens: the prepended "▁" is dropped.
  EXPECT_THAT(*ok->Encode("ab", true), ElementsAre(1, 5));
  EXPECT_THAT(LoadBytes(Minimal(tokens, {}, types).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("t.gguf"), HasSubstr("tokenizer.ggml.scores is missing"))));
  EXPECT_THAT(LoadBytes(Minimal(tokens, {0, 0, 0}, types).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'tokenizer.ggml.scores' has 3 entries"),
                             HasSubstr("tokenizer.ggml.tokens has 6"))));
  EXPECT_THAT(LoadBytes(Minimal(tokens, scores, {2, 3, 3, 1, 7, 1}).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("tokenizer.ggml.token_type[4] = 7"), HasSubstr("'b'"),
                             HasSubstr("0 to 6"))));
  EXPECT_THAT(
      LoadBytes(Minimal(tokens, scores, {2, 3, 3, -1, 1, 1}).Build()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tokenizer.ggml.token_type[3] = -1")));
  EXPECT_THAT(LoadBytes(Minimal(tokens, scores, {2, 3}).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'tokenizer.ggml.token_type' has 2 entries")));
  std::vector<float> nan = scores;
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(
      LoadBytes(Minimal(tokens, nan, types).Build()),
      StatusIs(absl::StatusCode::kInvalidArgument, AllOf(HasSubstr("score 5 ('ab') is NaN"))));
  std::vector<std::string> dup = tokens;
  dup[4] = "a";
  EXPECT_THAT(LoadBytes(Minimal(dup, scores, types).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("token 4 'a' is listed twice (first as 3)")));
  std::vector<std::string> bad_utf8 = tokens;
  bad_utf8[3] = "\xC3";
  EXPECT_THAT(LoadBytes(Minimal(bad_utf8, scores, types).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tokenizer.ggml.tokens[3] is not valid UTF-8")));
  {
    // With merges in the file (no scores to derive them from) too: the
    // decoders would read past a truncated UTF-8 sequence.
    GgufBuilder b = Minimal(bad_utf8, scores, types);
    b.AddStringArray("tokenizer.ggml.merges", {"a b"});
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("tokenizer.ggml.tokens[3] is not valid UTF-8")));
  }
  {
    GgufBuilder b;
    b.AddString("tokenizer.ggml.model", "llama");
    b.AddStringArray("tokenizer.ggml.tokens", {});
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tokens is empty")));
  }
  // Out-of-range special ids (checked by ReadGgufTokenizer).
  {
    GgufBuilder b = Minimal(tokens, scores, types);
    b.AddU32("tokenizer.ggml.eos_token_id", 6);
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("'tokenizer.ggml.eos_token_id' = 6 is outside the vocabulary")));
  }
  // Variants transformers builds differently are refused, not approximated.
  EXPECT_THAT(LoadBytes(Minimal(tokens, scores, types, "gemma2").Build()),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr("architecture 'gemma2'"), HasSubstr("'llama'"))));
  {
    GgufBuilder b = Minimal(tokens, scores, types);
    b.AddString("tokenizer.ggml.pre", "llama-bpe");
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kUnimplemented,
                         HasSubstr("tokenizer.ggml.pre 'llama-bpe' with a 'llama'")));
  }
  {
    GgufBuilder b = Minimal(tokens, scores, types);
    b.AddString("tokenizer.ggml.pre", "default");
    EXPECT_TRUE(LoadBytes(b.Build()).ok());
  }
  {
    GgufBuilder b;
    b.AddString("tokenizer.ggml.model", "t5");
    b.AddStringArray("tokenizer.ggml.tokens", tokens);
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kUnimplemented,
                         AllOf(HasSubstr("tokenizer model 't5'"), HasSubstr("'llama'"))));
  }
  // Merges given in the file are used as given (as transformers does), and
  // checked.
  {
    GgufBuilder b = Minimal(tokens, scores, types);
    b.AddStringArray("tokenizer.ggml.merges", {"a c"});
    EXPECT_THAT(LoadBytes(b.Build()),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("merges[0]")));
  }
}

TEST(MergesFromScoresTest, OrderIsTransformers) {
  // Equal scores order by the left part's length, then the right part's,
  // descending (ab|c before a|bc, ca|b before c|ab); fully equal keys keep
  // the vocabulary's order (b|c, a|b, c|a). As generate_merges gives it.
  const std::vector<std::string> tokens = {"a", "b", "c", "bc", "ab", "abc", "ca", "cab"};
  const std::vector<float> scores = {0, 0, 0, -2, -2, -1, -2, -5};
  FOCAL_ASSERT_OK_AND_ASSIGN(auto merges, MergesFromScores(tokens, scores, "f", "scores"));
  using P = std::pair<std::string, std::string>;
  EXPECT_THAT(merges, ElementsAre(P{"ab", "c"}, P{"a", "bc"}, P{"b", "c"}, P{"a", "b"}, P{"c", "a"},
                                  P{"ca", "b"}, P{"c", "ab"}));
  EXPECT_THAT(MergesFromScores(tokens, {0, 0}, "f", "scores"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 scores for 8 tokens")));
}

}  // namespace
}  // namespace focal::model
