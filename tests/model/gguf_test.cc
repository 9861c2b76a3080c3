// SPDX-License-Identifier: Apache-2.0
// GGUF checkpoints, in four sources of one binary (helpers in
// gguf_test_util.h): here the reader's validation (every damaged-file case is
// a named error, never a crash: this suite also runs under ASan/UBSan);
// gguf_test_metadata.cc metadata round trips and dequantization bit for bit
// against the gguf package (goldens from tests/reference/make_gguf_reference.py);
// gguf_test_config.cc the llama config and focal metadata; gguf_test_loading.cc
// whole-model loading: a safetensors model written as llama.cpp's converter
// writes it (Q/K rows permuted) scores exactly as the safetensors model does.
#include "tests/model/gguf_test_util.h"

namespace focal::model {
namespace {

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

}  // namespace
}  // namespace focal::model
