// SPDX-License-Identifier: Apache-2.0
// GGUF checkpoints: the reader's validation (every damaged-file case is a
// named error, never a crash: this suite also runs under ASan/UBSan),
// metadata round trips, dequantization bit for bit against the gguf package
// (goldens from tests/reference/make_gguf_reference.py), the llama config and
// focal metadata, and whole-model loading: a safetensors model written as
// llama.cpp's converter writes it (Q/K rows permuted) scores exactly as the
// safetensors model does.
#include "model/gguf.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dtype.h"
#include "model/config.h"
#include "model/dequant.h"
#include "model/gguf_model.h"
#include "model/language_model.h"
#include "model/safetensors.h"
#include "model/tokenizer_loader.h"
#include "tests/testing/gguf_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::GgufBuilder;
using ::focal::testing::GgufStr;
using ::focal::testing::GgufU32;
using ::focal::testing::GgufU64;
using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kQ2_K = 10, kBF16 = 30;

std::string WriteBytes(const std::string& bytes, const std::string& name = "model.gguf") {
  std::string path = testing::MakeTempDir("gguf") + "/" + name;
  testing::WriteStringToFile(path, bytes);
  return path;
}

absl::StatusOr<std::unique_ptr<GgufFile>> OpenBytes(const std::string& bytes) {
  return GgufFile::Open(WriteBytes(bytes));
}

std::vector<float> Iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// A valid file: a few metadata entries and two F32 tensors, the last ending
// exactly at the end of the file (no trailing padding), so every proper
// prefix is damaged.
GgufBuilder Small() {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", 2);
  b.AddStringArray("tokenizer.ggml.tokens", {"<unk>", "a", "bc"});
  b.AddF32Array("tokenizer.ggml.scores", {0, -1, -2});
  b.AddF32Tensor("a", {2, 3}, Iota(6));
  b.AddF32Tensor("b", {8}, Iota(8, 10));
  return b;
}

// The metadata a llama GGUF must have, with small sizes: a start for tests
// of the config and tensor checks.
GgufBuilder LlamaHeader(uint32_t layers, uint32_t width, uint32_t heads, uint32_t context) {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", layers);
  b.AddU32("llama.context_length", context);
  b.AddU32("llama.embedding_length", width);
  b.AddU32("llama.feed_forward_length", width);
  b.AddU32("llama.attention.head_count", heads);
  b.AddF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  return b;
}

// --- Reader: structure ---------------------------------------------------------

TEST(GgufReaderTest, ReadsHeaderMetadataAndTensors) {
  GgufBuilder b = Small();
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  ASSERT_EQ(f->metadata().size(), 4u);
  EXPECT_EQ(f->metadata()[0].first, "general.architecture");
  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensor& a = f->tensors()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.type, GgmlType::kF32);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.num_elements, 6);
  EXPECT_EQ(a.bytes, 24u);
  EXPECT_EQ(a.offset, 0u);
  const GgufTensor* bt = f->FindTensor("b");
  ASSERT_NE(bt, nullptr);
  EXPECT_EQ(bt->offset, 32u);
  float v;
  std::memcpy(&v, bt->data + 4, 4);
  EXPECT_EQ(v, 11.0f);
  EXPECT_EQ(bt->data + bt->bytes, f->file().data() + f->file().size());
  EXPECT_EQ(f->FindTensor("c"), nullptr);
}

TEST(GgufReaderTest, Version2AndCustomAlignment) {
  GgufBuilder b = Small();
  b.version = 2;
  b.SetAlignment(64);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(f->FindTensor("b")->offset, 64u);
}

TEST(GgufReaderTest, BadMagic) {
  GgufBuilder b = Small();
  b.magic = "GGML";
  EXPECT_THAT(
      OpenBytes(b.Build()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("model.gguf"), HasSubstr("not a GGUF file"), HasSubstr("'GGML'"))));
  EXPECT_THAT(OpenBytes(std::string("\x89PNG\r\n\x1a\n", 8) + std::string(32, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\\x89PNG")));
}

TEST(GgufReaderTest, UnsupportedVersion) {
  for (uint32_t v : {0u, 1u, 4u, 1000u}) {
    GgufBuilder b = Small();
    b.version = v;
    EXPECT_THAT(OpenBytes(b.Build()),
                StatusIs(absl::StatusCode::kUnimplemented,
                         AllOf(HasSubstr(absl::StrCat("GGUF version ", v, " is not supported")),
                               HasSubstr("2 and 3"))));
  }
  GgufBuilder be = Small();
  be.version = 0x03000000u;  // a big-endian file's version, read little-endian
  EXPECT_THAT(OpenBytes(be.Build()),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("big-endian")));
}

TEST(GgufReaderTest, EveryTruncationIsDataLoss) {
  const std::string full = Small().Build();
  ASSERT_TRUE(OpenBytes(full).ok());
  const std::string path = WriteBytes("");
  for (size_t n = 0; n < full.size(); ++n) {
    testing::WriteStringToFile(path, full.substr(0, n));
    auto f = GgufFile::Open(path);
    ASSERT_FALSE(f.ok()) << "prefix of " << n << " bytes opened";
    EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss) << n << ": " << f.status();
    EXPECT_THAT(std::string(f.status().message()), HasSubstr(path)) << n;
  }
  testing::WriteStringToFile(path, full.substr(0, 10));
  EXPECT_THAT(GgufFile::Open(path),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("truncated GGUF file"), HasSubstr("the tensor count"))));
  testing::WriteStringToFile(path, full.substr(0, full.size() - 4));
  EXPECT_THAT(GgufFile::Open(path),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("runs past the end of the data"),
                             HasSubstr("truncated file?"))));
}

// Damage anywhere before the data gives an error or a valid file, never a
// read outside the mapping (what ASan checks in the sanitizer build).
TEST(GgufReaderTest, CorruptedBytesNeverCrash) {
  GgufBuilder b = Small();
  b.AddRaw("nested", testing::kGgufArray,
           GgufU32(testing::kGgufArray) + GgufU64(1) + GgufU32(testing::kGgufString) + GgufU64(1) +
               GgufStr("x"));
  const std::string full = b.Build();
  FOCAL_ASSERT_OK_AND_ASSIGN(auto ok, OpenBytes(full));
  const size_t header = ok->data_offset();
  const std::string path = WriteBytes("");
  int failures = 0;
  for (size_t i = 0; i < header; ++i) {
    for (uint8_t x :
         {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x7F}, static_cast<uint8_t>(full[i] ^ 0x01)}) {
      std::string bad = full;
      bad[i] = static_cast<char>(x);
      testing::WriteStringToFile(path, bad);
      auto f = GgufFile::Open(path);
      if (!f.ok()) {
        ++failures;
        EXPECT_THAT(std::string(f.status().message()), HasSubstr(path));
      }
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(GgufReaderTest, UnknownMetadataValueType) {
  GgufBuilder b = Small();
  b.AddRaw("weird", 13, GgufU32(0));
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss, AllOf(HasSubstr("metadata key 'weird'"),
                                                          HasSubstr("unknown value type 13"))));
  GgufBuilder arr = Small();
  arr.AddRaw("weird.array", testing::kGgufArray, GgufU32(77) + GgufU64(0));
  EXPECT_THAT(OpenBytes(arr.Build()), StatusIs(absl::StatusCode::kDataLoss,
                                               AllOf(HasSubstr("'weird.array'"),
                                                     HasSubstr("unknown array element type 77"))));
}

TEST(GgufReaderTest, StringLengthPastEndOfFile) {
  GgufBuilder b = Small();
  b.AddRaw("s", testing::kGgufString, GgufU64(1ull << 40) + "abc");
  EXPECT_THAT(OpenBytes(b.Build()), StatusIs(absl::StatusCode::kDataLoss,
                                             AllOf(HasSubstr("metadata key 's'"),
                                                   HasSubstr("string length 1099511627776"),
                                                   HasSubstr("runs past the end of the file"))));
  // A key whose length runs past the end.
  std::string bytes =
      "GGUF" + GgufU32(3) + GgufU64(0) + GgufU64(1) + GgufU64(UINT64_MAX) + std::string(20, 'k');
  EXPECT_THAT(OpenBytes(bytes),
              StatusIs(absl::StatusCode::kDataLoss, AllOf(HasSubstr("the key of metadata entry 0"),
                                                          HasSubstr("runs past the end"))));
}

TEST(GgufReaderTest, ArrayLengthPastEndOfFile) {
  for (uint32_t elem :
       {testing::kGgufU8, testing::kGgufF64, testing::kGgufString, testing::kGgufArray}) {
    GgufBuilder b = Small();
    b.AddRaw("arr", testing::kGgufArray, GgufU32(elem) + GgufU64(UINT64_MAX / 2) + "xx");
    EXPECT_THAT(OpenBytes(b.Build()),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("metadata key 'arr'"), HasSubstr("array of"),
                               HasSubstr("runs past the end of the file"))))
        << elem;
  }
}

TEST(GgufReaderTest, ArraysNestedTooDeep) {
  std::string v;
  for (int i = 0; i < 12; ++i) v += GgufU32(testing::kGgufArray) + GgufU64(1);
  v += GgufU32(testing::kGgufU8) + GgufU64(1) + "x";
  GgufBuilder b = Small();
  b.AddRaw("deep", testing::kGgufArray, v);
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("'deep'"), HasSubstr("nested deeper than 8"))));
}

TEST(GgufReaderTest, CountsOutOfRange) {
  GgufBuilder t = Small();
  t.tensor_count = 1ull << 60;
  EXPECT_THAT(OpenBytes(t.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor count 1152921504606846976 is out of range"))));
  GgufBuilder k = Small();
  k.kv_count = UINT64_MAX;
  EXPECT_THAT(OpenBytes(k.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("metadata count")));
  // Plausible but wrong: one more tensor than the file describes.
  GgufBuilder one_more = Small();
  one_more.tensor_count = 3;
  EXPECT_EQ(OpenBytes(one_more.Build()).status().code(), absl::StatusCode::kDataLoss);
}

TEST(GgufReaderTest, DimensionCountOutOfRange) {
  for (uint32_t n : {0u, 5u, 0xFFFFFFFFu}) {
    GgufBuilder b = Small();
    b.tensors()[1].n_dims = n;
    EXPECT_THAT(OpenBytes(b.Build()),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("tensor 'b'"),
                               HasSubstr(absl::StrCat("n_dims ", n, " is out of range (1..4)")))));
  }
}

TEST(GgufReaderTest, ShapeOverflow) {
  GgufBuilder b = Small();
  b.tensors()[1].dims = {1ull << 32, 1ull << 32};
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("overflows int64"))));
  GgufBuilder big = Small();
  big.tensors()[1].dims = {1ull << 63};
  EXPECT_THAT(OpenBytes(big.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("is out of range")));
  // Elements fit, bytes do not.
  GgufBuilder bytes = Small();
  bytes.tensors()[1].dims = {1ull << 62};
  EXPECT_THAT(OpenBytes(bytes.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("overflows int64 bytes")));
}

TEST(GgufReaderTest, UnknownTensorType) {
  GgufBuilder b = Small();
  b.tensors()[0].type = 99;
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'a'"), HasSubstr("unknown tensor type 99"))));
  GgufBuilder retired = Small();
  retired.tensors()[0].type = 4;  // Q4_2, removed from ggml
  EXPECT_THAT(OpenBytes(retired.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("unknown tensor type 4")));
}

TEST(GgufReaderTest, RowNotWholeBlocks) {
  GgufBuilder b = Small();
  b.AddTensor("q", kQ8_0, {33}, std::string(34, '\0'));
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'q'"), HasSubstr("row length 33"),
                             HasSubstr("Q8_0 block size 32"))));
}

TEST(GgufReaderTest, MisalignedOffset) {
  GgufBuilder b = Small();
  b.tensors()[1].offset = 36;
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"),
                             HasSubstr("data offset 36 is not a multiple of the alignment 32"))));
}

TEST(GgufReaderTest, OffsetOutOfRange) {
  GgufBuilder b = Small();
  b.tensors()[1].offset = 1ull << 40;
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("runs past the end of the data"))));
  // Offset + size wrapping around 2^64 must not pass.
  GgufBuilder wrap = Small();
  wrap.tensors()[1].offset = UINT64_MAX - 31;
  EXPECT_THAT(OpenBytes(wrap.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past the end of the data")));
  // Overlapping the end by a few bytes.
  GgufBuilder end = Small();
  end.tensors()[1].dims = {9};
  EXPECT_THAT(OpenBytes(end.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("(36 bytes) runs past"))));
}

TEST(GgufReaderTest, OverlappingTensors) {
  GgufBuilder b = Small();
  b.AddF32Tensor("c", {16}, Iota(16));
  b.tensors()[2].offset = 0;  // on top of 'a'
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("overlaps tensor"), HasSubstr("[0, 24)"))));
}

TEST(GgufReaderTest, DuplicateNames) {
  GgufBuilder b = Small();
  b.AddF32Tensor("a", {1}, {1});
  EXPECT_THAT(OpenBytes(b.Build()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("duplicate tensor name 'a'")));
  GgufBuilder k = Small();
  k.AddU32("llama.block_count", 3);
  EXPECT_THAT(OpenBytes(k.Build()),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("duplicate metadata key 'llama.block_count'")));
}

TEST(GgufReaderTest, BadAlignment) {
  for (uint32_t a : {0u, 3u, 48u}) {
    GgufBuilder b = Small();
    b.AddU32("general.alignment", a);
    EXPECT_THAT(OpenBytes(b.Build()),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("'general.alignment' must be a power of two"),
                               HasSubstr(absl::StrCat("got ", a)))));
  }
  GgufBuilder s = Small();
  s.AddString("general.alignment", "32");
  EXPECT_THAT(OpenBytes(s.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("got string")));
}

TEST(GgufReaderTest, NonExistentPath) {
  EXPECT_THAT(GgufFile::Open("/no/such/model.gguf"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/model.gguf")));
}

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
  EXPECT_THAT(GgufTensorStore(f, c, /*materialize=*/false),
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
  FOCAL_ASSERT_OK_AND_ASSIGN(TensorStore store, GgufTensorStore(f, c, /*materialize=*/true));
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

// --- Llama checkpoints -----------------------------------------------------------

// HF -> GGUF tensor names, written out independently of gguf_model.cc's table.
std::string GgufName(const std::string& hf) {
  static const std::map<std::string, std::string> kGlobal = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"}};
  static const std::map<std::string, std::string> kLayer = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
      {"self_attn.focal_tau.weight", "attn_focal_tau.weight"},
      {"self_attn.focal_tau.bias", "attn_focal_tau.bias"}};
  if (auto it = kGlobal.find(hf); it != kGlobal.end()) return it->second;
  std::vector<std::string> parts = absl::StrSplit(hf, absl::MaxSplits('.', 3));
  EXPECT_EQ(parts.size(), 4u) << hf;
  EXPECT_EQ(parts[0] + "." + parts[1], "model.layers") << hf;
  auto it = kLayer.find(parts[3]);
  EXPECT_NE(it, kLayer.end()) << hf;
  return absl::StrCat("blk.", parts[2], ".", it->second);
}

// llama.cpp's converter: w.reshape(n_head, 2, rows / n_head / 2, cols)
// .swapaxes(1, 2).reshape(rows, cols), i.e. out[h][i][j] = in[h][j][i] over
// (head, half-index, half) row indices.
std::string PermuteLikeLlamaCpp(const std::string& raw, int64_t rows, int64_t n_head) {
  const size_t row_bytes = raw.size() / rows;
  const int64_t half = rows / n_head / 2;
  std::string out(raw.size(), '\0');
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t out_row = (h * half + i) * 2 + j;
        const int64_t in_row = (h * 2 + j) * half + i;
        out.replace(out_row * row_bytes, row_bytes, raw, in_row * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

struct ConvertOptions {
  bool permute = true;
  bool vocab_from_tokens = false;  // write a token list instead of llama.vocab_size
  bool llama_specials = false;     // that list starts <unk> <s> </s>, not t0 t1 t2
};

// Writes the HF checkpoint `hf_dir` as a llama GGUF, as llama.cpp's converter
// would (metadata keys, names, permuted Q/K rows, tied output omitted), with
// focal attention in our focal_attention.* convention.
GgufBuilder ConvertToGguf(const std::string& hf_dir, const ConvertOptions& o = {}) {
  GgufBuilder b;
  auto config = LoadModelConfig(hf_dir);
  EXPECT_TRUE(config.ok()) << config.status();
  auto store = TensorStore::OpenDir(hf_dir);
  EXPECT_TRUE(store.ok()) << store.status();
  const ModelConfig& c = *config;
  b.AddString("general.architecture", "llama");
  b.AddU32("llama.block_count", static_cast<uint32_t>(c.num_layers));
  b.AddU32("llama.context_length", static_cast<uint32_t>(c.max_position_embeddings));
  b.AddU32("llama.embedding_length", static_cast<uint32_t>(c.hidden_size));
  b.AddU32("llama.feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
  b.AddU32("llama.attention.head_count", static_cast<uint32_t>(c.num_heads));
  b.AddU32("llama.attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
  b.AddF32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  b.AddF32("llama.rope.freq_base", static_cast<float>(c.rope_theta));
  b.AddU32("llama.rope.dimension_count", static_cast<uint32_t>(c.head_dim));
  if (c.head_dim * c.num_heads != c.hidden_size) {
    b.AddU32("llama.attention.key_length", static_cast<uint32_t>(c.head_dim));
  }
  if (c.rope_scaling.type == RopeScaling::Type::kLinear) {
    b.AddString("llama.rope.scaling.type", "linear");
    b.AddF32("llama.rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
  }
  if (o.vocab_from_tokens) {
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < c.vocab_size; ++i) tokens.push_back(absl::StrCat("t", i));
    if (o.llama_specials) {
      tokens[0] = "<unk>";
      tokens[1] = "<s>";
      tokens[2] = "</s>";
    }
    b.AddString("tokenizer.ggml.model", "llama");
    b.AddStringArray("tokenizer.ggml.tokens", tokens);
  } else {
    b.AddU32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  }
  if (c.bos_token_id.has_value()) {
    b.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*c.bos_token_id));
  }
  if (!c.eos_token_ids.empty()) {
    b.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(c.eos_token_ids[0]));
  }
  if (c.focal.mode == FocalConfig::Mode::kConstant) {
    b.AddString("focal_attention.mode", "constant");
    // float64 keeps config.json's temperatures exactly.
    if (c.focal.temperature.size() == 1) {
      b.AddF64("focal_attention.temperature", c.focal.temperature[0]);
    } else {
      b.AddF64Array("focal_attention.temperature", c.focal.temperature);
    }
  } else if (c.focal.mode == FocalConfig::Mode::kLearned) {
    b.AddString("focal_attention.mode", "learned");
    b.AddF64("focal_attention.tau_min", c.focal.tau_min);
    if (c.focal.tau_max.has_value()) b.AddF64("focal_attention.tau_max", *c.focal.tau_max);
    b.AddString("focal_attention.reduction",
                c.focal.reduction == FocalConfig::Reduction::kToken ? "token" : "sequence_mean");
  }
  for (const auto& [name, info] : store->tensors()) {
    if (c.tie_word_embeddings && name == "lm_head.weight") continue;
    std::string raw(reinterpret_cast<const char*>(info.data), info.bytes);
    const int64_t rows = info.shape[0];
    if (o.permute && absl::EndsWith(name, "q_proj.weight")) {
      raw = PermuteLikeLlamaCpp(raw, rows, c.num_heads);
    } else if (o.permute && absl::EndsWith(name, "k_proj.weight")) {
      raw = PermuteLikeLlamaCpp(raw, rows, c.num_kv_heads);
    }
    const uint32_t type = info.dtype == "F32" ? kF32 : info.dtype == "F16" ? kF16 : kBF16;
    b.AddTensor(GgufName(name), type, std::vector<uint64_t>(info.shape.rbegin(), info.shape.rend()),
                raw);
  }
  return b;
}

std::string ModelPath(const std::string& name) {
  return testing::SourcePath("tests/testdata/models/" + name);
}

class GgufModelTest : public ::testing::Test {
 protected:
  kernels::CpuBackend backend_{2};

  absl::StatusOr<std::unique_ptr<LanguageModel>> Load(const std::string& path,
                                                      bool require_tokenizer = false,
                                                      bool validate_only = false) {
    LoadOptions o;
    o.require_tokenizer = require_tokenizer;
    o.validate_only = validate_only;
    return LanguageModel::Load(path, backend_, o);
  }

  // Log-probabilities of every token after the first.
  std::vector<double> LogProbs(LanguageModel& m, const std::vector<int32_t>& tokens) {
    Transformer& tf = m.transformer();
    auto cache = tf.NewCache(static_cast<int64_t>(tokens.size()));
    EXPECT_TRUE(cache.ok());
    std::vector<int64_t> rows;
    std::vector<int32_t> targets;
    for (size_t i = 1; i < tokens.size(); ++i) {
      rows.push_back(static_cast<int64_t>(i) - 1);
      targets.push_back(tokens[i]);
    }
    std::vector<SeqInput> batch = {{&*cache, tokens, rows, targets}};
    std::vector<std::vector<TokenScore>> out;
    absl::Status s = tf.Forward(batch, out);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<double> lp;
    for (const TokenScore& t : out.at(0)) lp.push_back(t.logprob);
    return lp;
  }

  std::vector<int32_t> RandomTokens(int64_t vocab, int n) {
    std::mt19937 rng(11);
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = static_cast<int32_t>(rng() % vocab);
    return t;
  }
};

TEST_F(GgufModelTest, ConfigFromMetadata) {
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 172);
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(c.num_heads, 4);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.vocab_size, 320);
  EXPECT_EQ(c.max_position_embeddings, 256);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.rope_theta, 10000.0);
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kNone);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_THAT(c.eos_token_ids, ElementsAre(2));
  EXPECT_EQ(c.Variant(), "base");
}

TEST_F(GgufModelTest, ConfigDefaultsAndAlternatives) {
  GgufBuilder b;
  b.AddString("general.architecture", "llama");
  b.AddI32("llama.block_count", 3);  // any integer type
  b.AddU64("llama.context_length", 512);
  b.AddU32("llama.embedding_length", 48);
  b.AddU32("llama.feed_forward_length", 96);
  b.AddU32("llama.attention.head_count", 2);
  b.AddU32("llama.attention.key_length", 32);  // head_dim != 48 / 2
  b.AddF64("llama.attention.layer_norm_rms_epsilon", 1e-6);
  b.AddString("llama.rope.scaling.type", "linear");
  b.AddF32("llama.rope.scaling.factor", 4);
  b.AddF32Tensor("token_embd.weight", {100, 48}, std::vector<float>(4800));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, OpenBytes(b.Build()));
  FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, GgufModelConfig(*f));
  EXPECT_EQ(c.num_layers, 3);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.num_kv_heads, 2);  // default: head_count
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.rope_theta, 10000.0);  // default
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kLinear);
  EXPECT_EQ(c.rope_scaling.factor, 4.0);
  EXPECT_EQ(c.vocab_size, 100);        // from the embedding when nothing else says
  EXPECT_TRUE(c.tie_word_embeddings);  // no output.weight
  EXPECT_FALSE(c.bos_token_id.has_value());
}

TEST_F(GgufModelTest, ConfigErrorsNameFileAndKey) {
  auto config_of = [](GgufBuilder b) -> absl::StatusOr<ModelConfig> {
    FOCAL_ASSIGN_OR_RETURN(auto f, OpenBytes(b.Build()));
    return GgufModelConfig(*f);
  };
  const GgufBuilder base = ConvertToGguf(ModelPath("gqa_untied"));
  {
    GgufBuilder b;
    b.AddString("general.architecture", "qwen2");
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kUnimplemented,
                                       AllOf(HasSubstr("model.gguf"),
                                             HasSubstr("architecture 'qwen2' is not supported"))));
  }
  {
    GgufBuilder b;
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kNotFound,
                                       HasSubstr("'general.architecture' is missing")));
  }
  {
    GgufBuilder b;
    b.AddString("general.architecture", "llama");
    b.AddU32("llama.embedding_length", 8);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kNotFound,
                                       HasSubstr("'llama.feed_forward_length' is missing")));
  }
  {
    GgufBuilder b = base;
    b.AddString("llama.rope.scaling.type", "yarn");
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kUnimplemented,
                                       AllOf(HasSubstr("'llama.rope.scaling.type' = 'yarn'"),
                                             HasSubstr("none or linear"))));
  }
  {
    GgufBuilder b = base;
    b.AddU32("llama.expert_count", 8);
    EXPECT_THAT(config_of(b),
                StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("mixture-of-experts")));
  }
  {
    GgufBuilder b = base;
    b.AddF32Tensor("rope_freqs.weight", {8}, std::vector<float>(8, 1));
    EXPECT_THAT(config_of(b),
                StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("'rope_freqs.weight'")));
  }
  {
    GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
    b.AddU32("llama.vocab_size", 321);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kInvalidArgument,
                                       AllOf(HasSubstr("'llama.vocab_size' = 321"),
                                             HasSubstr("tokenizer.ggml.tokens has 320"))));
  }
}

TEST_F(GgufModelTest, PartialRopeAndBadHeadsRefused) {
  const GgufBuilder b = LlamaHeader(/*layers=*/1, /*width=*/64, /*heads=*/4, /*context=*/64);
  GgufBuilder partial = b;
  partial.AddU32("llama.rope.dimension_count", 8);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f1, OpenBytes(partial.Build()));
  EXPECT_THAT(GgufModelConfig(*f1), StatusIs(absl::StatusCode::kUnimplemented,
                                             HasSubstr("partial RoPE is not supported")));
  GgufBuilder kv = b;
  kv.AddU32("llama.attention.head_count_kv", 3);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f2, OpenBytes(kv.Build()));
  EXPECT_THAT(GgufModelConfig(*f2), StatusIs(absl::StatusCode::kInvalidArgument,
                                             AllOf(HasSubstr("'llama.attention.head_count_kv'"),
                                                   HasSubstr("must divide"))));
  GgufBuilder zero = b;
  zero.AddU32("llama.attention.head_count_kv", 0);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f3, OpenBytes(zero.Build()));
  EXPECT_THAT(GgufModelConfig(*f3),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be >= 1, got 0")));
}

TEST_F(GgufModelTest, FocalMetadata) {
  auto config_of = [](GgufBuilder b) -> absl::StatusOr<ModelConfig> {
    FOCAL_ASSIGN_OR_RETURN(auto f, OpenBytes(b.Build()));
    return GgufModelConfig(*f);
  };
  const GgufBuilder base = ConvertToGguf(ModelPath("gqa_untied"));
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "constant");
    b.AddF32("focal_attention.temperature", 0.4f);
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(t=0.4)");
  }
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "constant");
    b.AddF32Array("focal_attention.temperature", {0.5f, 0.25f});
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(t=[0.5,0.25])");
  }
  {
    GgufBuilder b = base;
    b.AddString("focal_attention.mode", "learned");
    b.AddF32("focal_attention.tau_min", 5);
    FOCAL_ASSERT_OK_AND_ASSIGN(ModelConfig c, config_of(b));
    EXPECT_EQ(c.Variant(), "focal(learned, token)");
    EXPECT_EQ(c.focal.tau_min, 5.0);
    EXPECT_FALSE(c.focal.tau_max.has_value());
  }
  struct Bad {
    std::function<void(GgufBuilder&)> edit;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[](GgufBuilder& b) { b.AddF32("focal_attention.temperature", 0.4f); },
       "'focal_attention.mode' is missing"},
      {[](GgufBuilder& b) { b.AddString("focal_attention.mode", "sharp"); },
       "must be \"constant\" or \"learned\", got \"sharp\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32("focal_attention.temperature", 0);
       },
       "'focal_attention.temperature' must be > 0, got 0"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32Array("focal_attention.temperature", {0.5f, 0.4f, 0.3f});
       },
       "has 3 values but the model has 2 layers"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddString("focal_attention.temperature", "0.4");
       },
       "must be a float or an array of floats"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "constant");
         b.AddF32("focal_attention.temperature", 0.4f);
         b.AddF32("focal_attention.tau_min", 5);
       },
       "'focal_attention.tau_min' is only valid with mode \"learned\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddF32("focal_attention.tau_max", 4);
       },
       "'focal_attention.tau_max' must be >= tau_min"},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddString("focal_attention.reduction", "max");
       },
       "must be \"token\" or \"sequence_mean\", got \"max\""},
      {[](GgufBuilder& b) {
         b.AddString("focal_attention.mode", "learned");
         b.AddF32("focal_attention.tau_min", 5);
         b.AddF32("focal_attention.tau", 5);
       },
       "'focal_attention.tau' is not a known focal_attention key"},
  };
  for (const Bad& c : bad) {
    GgufBuilder b = base;
    c.edit(b);
    EXPECT_THAT(config_of(b), StatusIs(absl::StatusCode::kInvalidArgument,
                                       AllOf(HasSubstr("model.gguf"), HasSubstr(c.message))));
  }
}

TEST_F(GgufModelTest, TensorNames) {
  EXPECT_EQ(HfTensorName("token_embd.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(HfTensorName("output.weight"), "lm_head.weight");
  EXPECT_EQ(HfTensorName("output_norm.weight"), "model.norm.weight");
  EXPECT_EQ(HfTensorName("blk.12.attn_output.weight"), "model.layers.12.self_attn.o_proj.weight");
  EXPECT_EQ(HfTensorName("blk.0.ffn_norm.weight"),
            "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(HfTensorName("blk.3.attn_focal_tau.bias"), "model.layers.3.self_attn.focal_tau.bias");
  EXPECT_EQ(HfTensorName("blk.0.attn_q.bias"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk.x.attn_q.weight"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk..attn_q.weight"), std::nullopt);
  EXPECT_EQ(HfTensorName("blk.-1.attn_q.weight"), std::nullopt);
}

TEST_F(GgufModelTest, UnpermuteInvertsLlamaCppPermutation) {
  const int64_t heads = 3, head_dim = 8, cols = 5, rows = heads * head_dim;
  std::vector<float> hf(rows * cols);
  for (size_t i = 0; i < hf.size(); ++i) hf[i] = static_cast<float>(i);
  std::string raw(reinterpret_cast<const char*>(hf.data()), hf.size() * 4);
  std::string permuted = PermuteLikeLlamaCpp(raw, rows, heads);
  ASSERT_NE(permuted, raw);
  std::vector<float> back(hf.size());
  UnpermuteRopeRows(reinterpret_cast<const float*>(permuted.data()), heads, head_dim, cols,
                    back.data());
  EXPECT_EQ(back, hf);
}

// The proof of the Q/K row order: a random HF checkpoint written as llama.cpp
// writes it scores bit for bit as the safetensors original (which matches HF
// transformers: reference_parity_test), and not at all without the
// permutation undone.
class GgufParityTest : public GgufModelTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(GgufParityTest, SameLogProbsAsSafetensors) {
  const std::string hf_dir = ModelPath(GetParam());
  const std::string gguf_path = WriteBytes(ConvertToGguf(hf_dir).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf_dir));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto gg, Load(gguf_path));
  EXPECT_EQ(gg->config().Variant(), st->config().Variant());
  EXPECT_EQ(gg->config().tie_word_embeddings, st->config().tie_word_embeddings);
  EXPECT_EQ(gg->weights().num_parameters, st->weights().num_parameters);
  ASSERT_NE(gg->gguf(), nullptr);
  EXPECT_EQ(st->gguf(), nullptr);
  const std::vector<int32_t> tokens = RandomTokens(st->config().vocab_size, 23);
  const std::vector<double> want = LogProbs(*st, tokens);
  const std::vector<double> got = LogProbs(*gg, tokens);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(std::isfinite(want[i]));
    EXPECT_EQ(got[i], want[i]) << "position " << i + 1;
  }
}

TEST_P(GgufParityTest, WrongWithoutThePermutation) {
  const std::string hf_dir = ModelPath(GetParam());
  const std::string gguf_path = WriteBytes(ConvertToGguf(hf_dir, {.permute = false}).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf_dir));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto gg, Load(gguf_path));
  const std::vector<int32_t> tokens = RandomTokens(st->config().vocab_size, 23);
  const std::vector<double> want = LogProbs(*st, tokens);
  const std::vector<double> got = LogProbs(*gg, tokens);
  double max_diff = 0;
  for (size_t i = 0; i < want.size(); ++i)
    max_diff = std::max(max_diff, std::abs(got[i] - want[i]));
  EXPECT_GT(max_diff, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Models, GgufParityTest,
                         ::testing::Values("gqa_untied",            // F32, GQA 4/2
                                           "f16_linear_rope",       // F16, tied, linear RoPE
                                           "bf16_headdim_sharded",  // BF16, head_dim 24
                                           "focal_const_per_layer", "focal_learned_token",
                                           "focal_learned_mean"));

TEST_F(GgufModelTest, QuantizedWeightsLoadDequantized) {
  // Q8_0 blocks written for every 2-D weight: the model loads, its tensors
  // are exactly the blocks' dequantized values, and it scores finitely.
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"));
  std::mt19937 rng(5);
  for (GgufBuilder::Tensor& t : b.tensors()) {
    if (t.dims.size() != 2 || t.dims[0] % 32 != 0) continue;
    const uint64_t blocks = t.dims[0] * t.dims[1] / 32;
    std::string q(blocks * 34, '\0');
    for (uint64_t i = 0; i < blocks; ++i) {
      const uint16_t d = 0x2000 + static_cast<uint16_t>(rng() % 256);  // ~0.008
      std::memcpy(&q[i * 34], &d, 2);
      for (int j = 0; j < 32; ++j) q[i * 34 + 2 + j] = static_cast<char>(rng());
    }
    t.type = kQ8_0;
    t.data = q;
  }
  const std::string path = WriteBytes(b.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path));
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, GgufFile::Open(path));
  const TensorInfo* v = m->store().Find("model.layers.1.self_attn.v_proj.weight");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->source_name, "blk.1.attn_v.weight");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<float> want,
                             DequantizeTensor(*f->FindTensor("blk.1.attn_v.weight"), path));
  ASSERT_EQ(v->bytes, want.size() * 4);
  EXPECT_EQ(std::memcmp(v->data, want.data(), v->bytes), 0);
  for (double lp : LogProbs(*m, RandomTokens(320, 12))) EXPECT_TRUE(std::isfinite(lp));
}

TEST_F(GgufModelTest, LoadsFromFileOrDirectory) {
  const std::string bytes = ConvertToGguf(ModelPath("gqa_untied")).Build();
  const std::string dir = testing::MakeTempDir("gguf_dir");
  testing::WriteStringToFile(dir + "/tiny.gguf", bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto by_dir, Load(dir));
  ASSERT_NE(by_dir->gguf(), nullptr);
  EXPECT_EQ(by_dir->gguf()->path(), dir + "/tiny.gguf");
  EXPECT_EQ(by_dir->tokenizer(), nullptr);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto by_file, Load(dir + "/tiny.gguf"));
  EXPECT_EQ(by_file->dir(), dir + "/tiny.gguf");
  // The weights' identity is the GGUF file's bytes.
  Sha256 h;
  h.Update(bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(std::string sha, WeightsSha256(by_file->store()));
  EXPECT_EQ(sha, h.HexDigest());
  EXPECT_THAT(by_file->store().files(), ElementsAre(dir + "/tiny.gguf"));

  testing::WriteStringToFile(dir + "/other.gguf", bytes);
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("holds 2 .gguf files"),
                                        HasSubstr("other.gguf, tiny.gguf"))));
  // config.json present: the directory is an HF checkpoint, GGUF files aside.
  const std::string hf = testing::CopyDirToTemp(ModelPath("gqa_untied"), "hf_gguf");
  testing::WriteStringToFile(hf + "/tiny.gguf", bytes);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto st, Load(hf));
  EXPECT_EQ(st->gguf(), nullptr);
  // A file that is not a GGUF checkpoint.
  EXPECT_THAT(Load(hf + "/config.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a .gguf checkpoint")));
  EXPECT_THAT(Load("/no/such/model.gguf"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/model.gguf")));
}

// "gpt2" (byte-level BPE) vocabularies load (smollm2_test); so do "llama"
// (sentencepiece) ones with scores (gguf_llama_tokenizer_test has the
// goldens); one without scores is bad metadata, an error even when no
// tokenizer is required.
TEST_F(GgufModelTest, SentencePieceTokenizerLoadsWithScores) {
  std::vector<float> scores(320);
  for (int i = 0; i < 320; ++i) scores[i] = -static_cast<float>(i);
  // Without "<s>", "</s>", "<unk>" transformers appends them after the
  // vocabulary: ids the model does not have, refused by name.
  GgufBuilder t_names = ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true});
  t_names.AddF32Array("tokenizer.ggml.scores", scores);
  EXPECT_THAT(Load(WriteBytes(t_names.Build())),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tokenizer has 323 pieces but the GGUF's vocab size is 320")));

  GgufBuilder with_scores =
      ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true, .llama_specials = true});
  with_scores.AddF32Array("tokenizer.ggml.scores", scores);
  const std::string path = WriteBytes(with_scores.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, /*require_tokenizer=*/true));
  ASSERT_NE(m->tokenizer(), nullptr);
  EXPECT_EQ(m->tokenizer()->vocab_size(), 320);
  EXPECT_TRUE(m->tokenizer()->adds_bos());
  EXPECT_THAT(*m->tokenizer()->Encode("", /*add_bos=*/true), ElementsAre(1));

  const std::string no_scores =
      WriteBytes(ConvertToGguf(ModelPath("gqa_untied"), {.vocab_from_tokens = true}).Build());
  for (bool require : {false, true}) {
    EXPECT_THAT(
        Load(no_scores, require),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr(no_scores), HasSubstr("tokenizer.ggml.scores is missing"))));
  }
  const std::string no_tok = WriteBytes(ConvertToGguf(ModelPath("gqa_untied")).Build());
  EXPECT_THAT(Load(no_tok, /*require_tokenizer=*/true),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("GGUF has no tokenizer")));
}

// A gpt2 vocabulary whose pre-tokenizer we lack: the model still loads where
// the tokenizer is optional (inspect, which validates only), and is refused
// by name where one is needed.
TEST_F(GgufModelTest, UnknownPreTokenizerLeavesTheModelLoadableWithoutATokenizer) {
  GgufBuilder b = ConvertToGguf(ModelPath("gqa_untied"));
  b.AddString("tokenizer.ggml.model", "gpt2");
  b.AddString("tokenizer.ggml.pre", "qwen2");
  std::vector<std::string> tokens = {"a", "b", "ab"};
  while (tokens.size() < 320) tokens.push_back(absl::StrCat("t", tokens.size()));  // vocab_size
  b.AddStringArray("tokenizer.ggml.tokens", tokens);
  b.AddStringArray("tokenizer.ggml.merges", {"a b"});
  const std::string path = WriteBytes(b.Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, /*require_tokenizer=*/false,
                                          /*validate_only=*/true));
  EXPECT_EQ(m->tokenizer(), nullptr);
  EXPECT_THAT(Load(path, /*require_tokenizer=*/true),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr(path), HasSubstr("tokenizer.ggml.pre 'qwen2'"))));
}

TEST_F(GgufModelTest, ValidateOnlyDequantizesNothing) {
  const std::string path = WriteBytes(ConvertToGguf(ModelPath("focal_learned_token")).Build());
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path, false, /*validate_only=*/true));
  EXPECT_EQ(m->weights().embed.tensor().data, nullptr);
  EXPECT_GT(m->weights().num_parameters, 0);
  EXPECT_EQ(m->store().Find("model.embed_tokens.weight")->data, nullptr);
}

TEST_F(GgufModelTest, TensorErrorsNameTheGgufTensor) {
  const std::string hf = ModelPath("gqa_untied");
  {
    GgufBuilder b = ConvertToGguf(hf);
    auto& ts = b.tensors();
    ts.erase(std::remove_if(ts.begin(), ts.end(),
                            [](const auto& t) { return t.name == "blk.1.attn_v.weight"; }),
             ts.end());
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kNotFound,
                         AllOf(HasSubstr("model.gguf"),
                               HasSubstr("GGUF is missing tensor 'blk.1.attn_v.weight'"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.0.attn_q.bias", {64}, std::vector<float>(64));
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("unexpected tensor 'blk.0.attn_q.bias'"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.2.attn_norm.weight", {64}, std::vector<float>(64));  // only 2 layers
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("unexpected tensor 'blk.2.attn_norm.weight'")));
  }
  {
    // A second spelling of layer 1 placed first would have been taken for
    // it, and the real tensor silently dropped.
    GgufBuilder b = ConvertToGguf(hf);
    auto& ts = b.tensors();
    const auto real = std::find_if(
        ts.begin(), ts.end(), [](const auto& t) { return t.name == "blk.1.attn_norm.weight"; });
    ASSERT_NE(real, ts.end());
    auto twin = *real;
    twin.name = "blk.01.attn_norm.weight";
    ts.insert(ts.begin(), twin);
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("unexpected tensor 'blk.01.attn_norm.weight'")));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    for (auto& t : b.tensors()) {
      if (t.name == "blk.0.ffn_up.weight") {
        t.dims = {64, 170};
        t.data.resize(64 * 170 * 4);
      }
    }
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("tensor 'blk.0.ffn_up.weight'"),
                               HasSubstr("has shape [170, 64]"), HasSubstr("[172, 64]"))));
  }
  {
    GgufBuilder b = ConvertToGguf(hf);
    for (auto& t : b.tensors()) {
      if (t.name == "blk.0.attn_v.weight") {
        t.type = kQ2_K;
        t.dims = {256, 8};
        t.data.assign(8 * 84, '\0');
      }
    }
    EXPECT_THAT(Load(WriteBytes(b.Build()), false, /*validate_only=*/true),
                StatusIs(absl::StatusCode::kUnimplemented,
                         AllOf(HasSubstr("tensor 'blk.0.attn_v.weight' has type Q2_K"),
                               HasSubstr("cannot be dequantized"))));
  }
  {
    // Learned-focal tensors in a file without the learned mode.
    GgufBuilder b = ConvertToGguf(hf);
    b.AddF32Tensor("blk.0.attn_focal_tau.weight", {64}, std::vector<float>(64));
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("'blk.0.attn_focal_tau.weight'"),
                               HasSubstr("focal_attention.mode = \"learned\""))));
  }
  {
    // Learned mode without the tau tensors.
    GgufBuilder b = ConvertToGguf(hf);
    b.AddString("focal_attention.mode", "learned");
    b.AddF32("focal_attention.tau_min", 5);
    EXPECT_THAT(Load(WriteBytes(b.Build())),
                StatusIs(absl::StatusCode::kNotFound,
                         HasSubstr("missing tensor 'blk.0.attn_focal_tau.weight'")));
  }
}

TEST_F(GgufModelTest, RetrofitOfLearnedGgufIgnoresTau) {
  const std::string path = WriteBytes(ConvertToGguf(ModelPath("focal_learned_token")).Build());
  LoadOptions o;
  o.require_tokenizer = false;
  o.focal_temperature = 0.4;
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, LanguageModel::Load(path, backend_, o));
  EXPECT_EQ(m->config().Variant(), "focal(t=0.4, retrofit)");
}

// The shared tiny random Llama 2 (F16, GGUF v3, converted by llama.cpp).
TEST_F(GgufModelTest, SharedTinyRandomLlama2) {
  const std::string path =
      testing::SharedPath("models/tiny-random-llama-2-gguf/llama-2-tiny-random.gguf");
  FOCAL_REQUIRE_FILE(path, "../shared beside the source tree");
  FOCAL_ASSERT_OK_AND_ASSIGN(auto f, GgufFile::Open(path));
  EXPECT_EQ(f->version(), 3u);
  FOCAL_ASSERT_OK_AND_ASSIGN(GgufTokenizerData tok, ReadGgufTokenizer(*f));
  EXPECT_EQ(tok.model, "llama");
  EXPECT_EQ(tok.tokens.size(), 32000u);
  EXPECT_EQ(tok.scores.size(), 32000u);
  EXPECT_EQ(tok.bos_id, 1);
  EXPECT_EQ(tok.eos_id, 2);
  FOCAL_ASSERT_OK_AND_ASSIGN(auto m, Load(path));
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.hidden_size, 8);
  EXPECT_EQ(c.intermediate_size, 32);
  EXPECT_EQ(c.num_layers, 1);
  EXPECT_EQ(c.num_heads, 2);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 4);
  EXPECT_EQ(c.vocab_size, 32000);
  EXPECT_EQ(c.max_position_embeddings, 4096);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(m->weights().num_parameters, 2 * 32000 * 8 + 4 * 64 + 3 * 8 * 32 + 3 * 8);
  // Dequantized F16 values are exactly the file's halves.
  const TensorInfo* q = m->store().Find("model.layers.0.self_attn.v_proj.weight");
  ASSERT_NE(q, nullptr);
  const GgufTensor* raw = f->FindTensor("blk.0.attn_v.weight");
  for (int i = 0; i < 64; ++i) {
    uint16_t h;
    std::memcpy(&h, raw->data + 2 * i, 2);
    float v;
    std::memcpy(&v, q->data + 4 * i, 4);
    EXPECT_EQ(v, kernels::F16ToF32(h));
  }
  const std::vector<double> lp = LogProbs(*m, {1, 15043, 29892, 3186, 29991, 2});
  ASSERT_EQ(lp.size(), 5u);
  for (double x : lp) {
    EXPECT_TRUE(std::isfinite(x));
    EXPECT_LT(x, 0);
  }
  // Its Llama 2 vocabulary loads (ids checked in gguf_llama_tokenizer_test),
  // and the model scores our texts as HF's LlamaForCausalLM loaded from the
  // same file does (tests/reference/make_gguf_llama_tokenizer_reference.py).
  FOCAL_ASSERT_OK_AND_ASSIGN(auto with_tok, Load(path, /*require_tokenizer=*/true));
  ASSERT_NE(with_tok->tokenizer(), nullptr);
  EXPECT_THAT(*with_tok->tokenizer()->Encode("Hello world!", true),
              ElementsAre(1, 15043, 3186, 29991));
  const std::vector<testing::GoldenSequence> golden =
      testing::ReadGoldenLogprobs(testing::GoldenPath("forward/gguf_tiny_random_llama2.txt"));
  ASSERT_EQ(golden.size(), 3u);
  double max_diff = 0;
  for (const testing::GoldenSequence& g : golden) {
    const std::vector<double> got = LogProbs(*with_tok, g.tokens);
    ASSERT_EQ(got.size(), g.logprob.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], g.logprob[i], 1e-4) << "position " << i + 1;
      max_diff = std::max(max_diff, std::abs(got[i] - g.logprob[i]));
    }
  }
  std::cout << "max |logprob - HF| over the golden: " << max_diff << "\n";
}

}  // namespace
}  // namespace focal::model
