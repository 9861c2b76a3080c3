// SPDX-License-Identifier: Apache-2.0
// GGUF metadata round trips and typed getters, tokenizer keys, and
// dequantization against the gguf package (see gguf_test.cc).
#include "tests/model/gguf_test_util.h"

namespace focal::model {
namespace {

// --- Reader: metadata ----------------------------------------------------------

TEST(GgufMetadataTest, RoundTripsEveryValueType) {
  GgufBuilder b;
  b.AddU8("u8", 200);
  b.AddI8("i8", -100);
  b.AddU16("u16", 60000);
  b.AddI16("i16", -30000);
  b.AddU32("u32", 4000000000u);
  b.AddI32("i32", -2000000000);
  b.AddU64("u64", (1ull << 63) + 5);
  b.AddI64("i64", -(1ll << 62));
  b.AddF32("f32", 0.15625f);
  b.AddF64("f64", 1e100);
  b.AddBool("yes", true);
  b.AddBool("no", false);
  b.AddRaw("two", testing::kGgufBool, std::string(1, '\2'));  // not 0/1: true, no UB
  b.AddString("s", "h\xc3\xa9llo");
  b.AddString("empty", "");
  b.AddStringArray("strs", {"a", "", "ccc"});
  b.AddF32Array("floats", {0.5f, -1.25f});
  b.AddF64Array("doubles", {0.25, 3.0});
  b.AddI32Array("ints", {1, -2, 3});
  b.AddRaw("bytes", testing::kGgufArray, GgufU32(testing::kGgufU8) + GgufU64(2) + "\x07\x08");
  b.AddRaw("nested", testing::kGgufArray,
           GgufU32(testing::kGgufArray) + GgufU64(2) +  //
               GgufU32(testing::kGgufString) + GgufU64(2) + GgufStr("x") + GgufStr("y") +
               GgufU32(testing::kGgufString) + GgufU64(1) + GgufStr("z"));
  b.AddRaw("none", testing::kGgufArray, GgufU32(testing::kGgufI32) + GgufU64(0));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  EXPECT_EQ(*f->GetU32("u8"), 200u);
  EXPECT_EQ(*f->GetInt("i8"), -100);
  EXPECT_EQ(*f->GetU32("u16"), 60000u);
  EXPECT_EQ(*f->GetInt("i16"), -30000);
  EXPECT_EQ(*f->GetU32("u32"), 4000000000u);
  EXPECT_EQ(*f->GetInt("i32"), -2000000000);
  EXPECT_EQ(*f->GetU64("u64"), (1ull << 63) + 5);
  EXPECT_EQ(*f->GetInt("i64"), -(1ll << 62));
  EXPECT_EQ(*f->GetFloat("f32"), 0.15625);
  EXPECT_EQ(*f->GetFloat("f64"), 1e100);
  EXPECT_TRUE(*f->GetBool("yes"));
  EXPECT_FALSE(*f->GetBool("no"));
  EXPECT_TRUE(*f->GetBool("two"));
  EXPECT_EQ(*f->GetString("s"), "h\xc3\xa9llo");
  EXPECT_EQ(*f->GetString("empty"), "");
  EXPECT_THAT(*f->GetStringArray("strs"), ElementsAre("a", "", "ccc"));
  EXPECT_THAT(*f->GetF32Array("floats"), ElementsAre(0.5f, -1.25f));
  EXPECT_THAT(*f->GetF32Array("doubles"), ElementsAre(0.25f, 3.0f));
  EXPECT_THAT(*f->GetI32Array("ints"), ElementsAre(1, -2, 3));
  EXPECT_THAT(*f->GetIntArray("bytes"), ElementsAre(7, 8));
  EXPECT_TRUE(f->GetIntArray("none")->empty());
  const GgufValue* nested = f->Find("nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->TypeString(), "array[array[string]]");
  ASSERT_EQ(nested->size(), 2u);
  EXPECT_EQ(nested->Element(0).size(), 2u);
  EXPECT_EQ(*nested->Element(0).Element(1).AsString(), "y");
  EXPECT_EQ(*nested->Element(1).Element(0).AsString(), "z");
  EXPECT_EQ(f->Find("u8")->TypeString(), "uint8");
  EXPECT_EQ(f->Find("ints")->TypeString(), "array[int32]");
}

TEST(GgufMetadataTest, IntegerGettersAcceptAnyIntegerTypeThatFits) {
  GgufBuilder b;
  b.AddU8("a", 7);
  b.AddI32("b", 7);
  b.AddU64("c", 7);
  b.AddI32("neg", -1);
  b.AddU64("huge", 1ull << 40);
  b.AddU64("max", UINT64_MAX);
  b.AddF32("float", 1);
  b.AddString("str", "7");
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  for (const char* k : {"a", "b", "c"}) EXPECT_EQ(*f->GetU32(k), 7u) << k;
  EXPECT_THAT(f->GetU32("neg"), StatusIs(absl::StatusCode::kInvalidArgument,
                                         AllOf(HasSubstr("model.gguf"), HasSubstr("'neg' = -1"),
                                               HasSubstr("must not be negative"))));
  EXPECT_EQ(*f->GetInt("neg"), -1);
  EXPECT_THAT(f->GetU32("huge"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not fit uint32")));
  EXPECT_THAT(f->GetInt("max"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not fit int64")));
  EXPECT_THAT(f->GetU32("float"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'float' is float32, expected an integer"))));
  EXPECT_THAT(f->GetFloat("str"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("is string, expected float32")));
  EXPECT_THAT(f->GetString("a"), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("'a' is uint8, expected string")));
  EXPECT_THAT(f->GetStringArray("a"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected array[string]")));
  EXPECT_THAT(f->GetU32("llama.block_count"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("model.gguf"),
                             HasSubstr("metadata key 'llama.block_count' is missing"))));
}

TEST(GgufMetadataTest, TokenizerKeys) {
  GgufBuilder b;
  b.AddString("tokenizer.ggml.model", "gpt2");
  b.AddString("tokenizer.ggml.pre", "smollm");
  b.AddStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b", "ab"});
  b.AddI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
  b.AddStringArray("tokenizer.ggml.merges", {"a b"});
  b.AddU32("tokenizer.ggml.bos_token_id", 1);
  b.AddU32("tokenizer.ggml.eos_token_id", 2);
  b.AddU32("tokenizer.ggml.unknown_token_id", 0);
  b.AddBool("tokenizer.ggml.add_bos_token", false);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(GgufTokenizerData t, ReadGgufTokenizer(*f));
  EXPECT_EQ(t.model, "gpt2");
  EXPECT_EQ(t.pre, "smollm");
  EXPECT_EQ(t.tokens.size(), 6u);
  EXPECT_TRUE(t.scores.empty());
  EXPECT_THAT(t.token_type, ElementsAre(2, 3, 3, 1, 1, 1));
  EXPECT_THAT(t.merges, ElementsAre("a b"));
  EXPECT_EQ(t.bos_id, 1);
  EXPECT_EQ(t.eos_id, 2);
  EXPECT_EQ(t.unknown_id, 0);
  EXPECT_FALSE(t.padding_id.has_value());
  EXPECT_EQ(t.add_bos, false);
  EXPECT_FALSE(t.add_eos.has_value());

  GgufBuilder bad = b;
  bad.AddF32Array("tokenizer.ggml.scores", {0, 1});
  EXPECT_THAT(ReadGgufTokenizer(**OpenBytes(bad.Build())),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'tokenizer.ggml.scores' has 2 entries"),
                             HasSubstr("tokens has 6"))));
  GgufBuilder id = b;
  id.AddU32("tokenizer.ggml.padding_token_id", 6);
  EXPECT_THAT(
      ReadGgufTokenizer(**OpenBytes(id.Build())),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("'tokenizer.ggml.padding_token_id' = 6 is outside the vocabulary")));
}

// Found by fuzzing (tests/fuzz/fuzz_gguf): a token that is not UTF-8 (here
// a lone lead byte) gave a tokenizer whose ByteLevel decoder read past the
// token's end. It is refused on load, by index.
TEST(GgufMetadataTest, TokenThatIsNotUtf8IsRefused) {
  GgufBuilder b;
  b.AddString("tokenizer.ggml.model", "gpt2");
  b.AddStringArray("tokenizer.ggml.tokens", {"a", "b", "\xe2"});
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  EXPECT_THAT(LoadTokenizer(*f),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(f->path()),
                             HasSubstr("tokenizer.ggml.tokens[2] is not valid UTF-8"))));
}

// Found by fuzzing (tests/fuzz/fuzz_gguf): a block_count far past the
// file's tensors had GgufTensorStore list every layer's tensor names before
// looking for any (gigabytes for 4e9 layers). It stops at the first missing.
TEST(GgufMetadataTest, BlockCountPastTheTensorsStopsAtTheFirstMissing) {
  GgufBuilder b = LlamaHeader(/*layers=*/4000000000u, /*width=*/2, /*heads=*/1, /*context=*/16);
  b.AddF32Tensor("token_embd.weight", {3, 2}, Iota(6));
  b.AddF32Tensor("output_norm.weight", {2}, Iota(2));
  FOCAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const GgufFile> f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  EXPECT_EQ(c.num_layers, 4000000000);
  EXPECT_THAT(GgufTensorStore(f, c, GgufData::kNone),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("GGUF is missing tensor 'blk.0.attn_norm.weight'")));
}

// Found by fuzzing (tests/fuzz/fuzz_gguf, UBSan): an attn_q tensor with no
// columns went through the RoPE row unpermutation, which called memcpy with
// the null data of empty buffers. It is left to LoadLlamaWeights' shape check.
TEST(GgufMetadataTest, EmptyQueryTensorIsAShapeError) {
  GgufBuilder b = LlamaHeader(/*layers=*/1, /*width=*/2, /*heads=*/1, /*context=*/16);
  b.AddF32Tensor("token_embd.weight", {3, 2}, Iota(6));
  b.AddF32Tensor("output_norm.weight", {2}, Iota(2));
  b.AddF32Tensor("blk.0.attn_norm.weight", {2}, Iota(2));
  b.AddTensor("blk.0.attn_q.weight", 0, {0, 2}, "");  // ggml order: no columns, 2 rows
  for (const char* name : {"attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
    b.AddF32Tensor(absl::StrCat("blk.0.", name, ".weight"), {2, 2}, Iota(4));
  }
  b.AddF32Tensor("blk.0.ffn_norm.weight", {2}, Iota(2));
  FOCAL_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const GgufFile> f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  FOCAL_ASSERT_OK_AND_ASSIGN(TensorStore store, GgufTensorStore(f, c, GgufData::kNow));
  EXPECT_THAT(LoadLlamaWeights(c, store, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("'blk.0.attn_q.weight'"), HasSubstr("[2, 0]"))));
}

// A file written by the gguf package's own GGUFWriter (independent of our
// writer): tests/testdata/golden/gguf/oracle.txt.
TEST(GgufMetadataTest, ReadsFileWrittenByGgufPackage) {
  std::istringstream in(testing::ReadFileOrDie(testing::GoldenPath("gguf/oracle.txt")));
  std::string line, bytes, q8_sha;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "hex ")) bytes += absl::HexStringToBytes(line.substr(4));
    if (absl::StartsWith(line, "q8_sha256 ")) q8_sha = line.substr(10);
  }
  ASSERT_FALSE(bytes.empty());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(bytes));
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(*f->GetString("general.architecture"), "llama");
  EXPECT_EQ(f->Find("test.u8")->type(), GgufValueType::kU8);
  EXPECT_EQ(*f->GetU32("test.u8"), 200u);
  EXPECT_EQ(*f->GetInt("test.i8"), -100);
  EXPECT_EQ(*f->GetU32("test.u16"), 60000u);
  EXPECT_EQ(*f->GetInt("test.i16"), -30000);
  EXPECT_EQ(*f->GetU32("test.u32"), 4000000000u);
  EXPECT_EQ(*f->GetInt("test.i32"), -2000000000);
  EXPECT_EQ(*f->GetU64("test.u64"), (1ull << 63) + 5);
  EXPECT_EQ(*f->GetInt("test.i64"), -(1ll << 62));
  EXPECT_EQ(f->Find("test.f32")->type(), GgufValueType::kF32);
  EXPECT_EQ(*f->GetFloat("test.f32"), 0.15625);
  EXPECT_EQ(*f->GetFloat("test.f64"), 1e100);
  EXPECT_TRUE(*f->GetBool("test.bool"));
  EXPECT_EQ(*f->GetString("test.string"), "h\xc3\xa9llo");
  EXPECT_THAT(*f->GetI32Array("test.array.i32"), ElementsAre(1, -2, 3));
  EXPECT_THAT(*f->GetIntArray("test.array.u8"), ElementsAre(7, 8));
  EXPECT_THAT(*f->GetF32Array("test.array.f32"), ElementsAre(0.5f, -1.25f));
  const GgufValue* bools = f->Find("test.array.bool");
  ASSERT_NE(bools, nullptr);
  EXPECT_EQ(bools->TypeString(), "array[bool]");
  EXPECT_TRUE(*bools->Element(0).AsBool());
  EXPECT_FALSE(*bools->Element(1).AsBool());
  EXPECT_THAT(*f->GetStringArray("test.array.str"), ElementsAre("a", "", "ccc"));
  const GgufValue* nested = f->Find("test.array.nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->TypeString(), "array[array[string]]");
  EXPECT_EQ(*nested->Element(0).Element(1).AsString(), "y");
  EXPECT_EQ(*nested->Element(1).Element(0).AsString(), "z");

  ASSERT_EQ(f->tensors().size(), 3u);
  const GgufTensor* t32 = f->FindTensor("t.f32");
  ASSERT_NE(t32, nullptr);
  EXPECT_EQ(t32->shape(), (std::vector<int64_t>{2, 3}));
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<float> v32, DequantizeTensor(*t32, f->path()));
  EXPECT_EQ(v32, Iota(6));
  const GgufTensor* t16 = f->FindTensor("t.f16");
  ASSERT_NE(t16, nullptr);
  EXPECT_EQ(t16->type, GgmlType::kF16);
  EXPECT_THAT(*DequantizeTensor(*t16, f->path()), ElementsAre(1.5f, -2.0f, 0.25f, 65504.0f));
  const GgufTensor* q8 = f->FindTensor("t.q8");
  ASSERT_NE(q8, nullptr);
  EXPECT_EQ(q8->type, GgmlType::kQ8_0);
  EXPECT_EQ(q8->shape(), (std::vector<int64_t>{1, 32}));
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<float> v8, DequantizeTensor(*q8, f->path()));
  Sha256 h;
  h.Update(v8.data(), v8.size() * 4);
  EXPECT_EQ(h.HexDigest(), q8_sha);
}

// --- Dequantization ------------------------------------------------------------

struct DequantCase {
  std::string type;
  uint32_t id = 0;
  int64_t n = 0;
  std::string blocks;
  std::string sha256;
  std::vector<std::pair<int64_t, uint32_t>> samples;
};

std::vector<DequantCase> ReadDequantGolden() {
  std::istringstream in(testing::ReadFileOrDie(testing::GoldenPath("gguf/dequant.txt")));
  std::vector<DequantCase> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f[0] == "type") {
      DequantCase c;
      c.type = f.at(1);
      EXPECT_TRUE(absl::SimpleAtoi(f.at(2), &c.id));
      EXPECT_TRUE(absl::SimpleAtoi(f.at(3), &c.n));
      out.push_back(c);
    } else if (f[0] == "blocks") {
      out.back().blocks = absl::HexStringToBytes(f.at(1));
    } else if (f[0] == "sha256") {
      out.back().sha256 = f.at(1);
    } else if (f[0] == "sample") {
      int64_t i;
      uint32_t bits;
      EXPECT_TRUE(absl::SimpleAtoi(f.at(1), &i));
      EXPECT_TRUE(absl::SimpleHexAtoi(f.at(2), &bits));
      out.back().samples.emplace_back(i, bits);
    }
  }
  return out;
}

TEST(DequantTest, BitExactAgainstGgufPackage) {
  std::vector<DequantCase> cases = ReadDequantGolden();
  std::set<std::string> seen;
  for (const DequantCase& c : cases) {
    SCOPED_TRACE(c.type);
    const GgmlTypeTraits* t = FindGgmlType(c.id);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(c.type, t->name);
    ASSERT_EQ(static_cast<int64_t>(c.blocks.size()), c.n / t->block_size * t->type_size);
    std::vector<float> y(c.n);
    FOCAL_ASSERT_OK(
        Dequantize(t->type, reinterpret_cast<const uint8_t*>(c.blocks.data()), c.n, y.data()));
    for (const auto& [i, bits] : c.samples) {
      uint32_t got;
      std::memcpy(&got, &y[i], 4);
      EXPECT_EQ(got, bits) << "value " << i << ": " << y[i];
    }
    Sha256 h;
    h.Update(y.data(), y.size() * 4);
    EXPECT_EQ(h.HexDigest(), c.sha256);
    seen.insert(c.type);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0",
                                         "Q5_1", "Q4_K", "Q5_K", "Q6_K"}));
}

TEST(DequantTest, HandWorkedBlocks) {
  // Q4_0: d = 0.5 (fp16 0x3800); byte j holds values j (low) and j + 16.
  std::string q4(18, '\0');
  q4[0] = '\x00';
  q4[1] = '\x38';
  q4[2] = '\xF0';  // value 0: 0 - 8 = -8 -> -4; value 16: 15 - 8 = 7 -> 3.5
  q4[3] = '\x89';  // value 1: 9 - 8 -> 0.5; value 17: 8 - 8 -> 0
  std::vector<float> y(32);
  FOCAL_ASSERT_OK(
      Dequantize(GgmlType::kQ4_0, reinterpret_cast<const uint8_t*>(q4.data()), 32, y.data()));
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
  EXPECT_EQ(y[1], 0.5f);
  EXPECT_EQ(y[17], 0.0f);
  EXPECT_EQ(y[2], -4.0f);  // byte 0 -> 0 - 8
  // Q8_0: d = 2, q = -3 -> -6.
  std::string q8(34, '\0');
  q8[1] = '\x40';  // fp16 2.0 = 0x4000
  q8[2] = static_cast<char>(-3);
  FOCAL_ASSERT_OK(
      Dequantize(GgmlType::kQ8_0, reinterpret_cast<const uint8_t*>(q8.data()), 32, y.data()));
  EXPECT_EQ(y[0], -6.0f);
  EXPECT_EQ(y[1], 0.0f);
}

TEST(DequantTest, RefusesOtherTypesByName) {
  EXPECT_FALSE(CanDequantize(GgmlType::kQ2_K));
  EXPECT_FALSE(CanDequantize(GgmlType::kIQ2_XXS));
  std::vector<float> y(256);
  std::string blocks(84, '\0');
  EXPECT_THAT(
      Dequantize(GgmlType::kQ2_K, reinterpret_cast<const uint8_t*>(blocks.data()), 256, y.data()),
      StatusIs(absl::StatusCode::kUnimplemented,
               AllOf(HasSubstr("Q2_K"), HasSubstr("Q4_K, Q5_K, Q6_K"))));
  EXPECT_THAT(
      Dequantize(GgmlType::kQ4_K, reinterpret_cast<const uint8_t*>(blocks.data()), 100, y.data()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not whole Q4_K blocks")));
  GgufBuilder b = Small();
  b.AddTensor("blk.0.attn_q.weight", kQ2_K, {256}, blocks);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  EXPECT_THAT(DequantizeTensor(*f->FindTensor("blk.0.attn_q.weight"), f->path()),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr("model.gguf"), HasSubstr("tensor 'blk.0.attn_q.weight'"),
                             HasSubstr("type Q2_K"))));
}

}  // namespace
}  // namespace focal::model
