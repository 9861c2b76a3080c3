// SPDX-License-Identifier: Apache-2.0
// Damaged safetensors files: each must give a clear error naming the file and
// tensor, never a crash (this suite also runs under ASan/UBSan in CI).
#include "model/safetensors.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/safetensors_writer.h"
#include "tests/testing/test_util.h"

namespace focal::model {
namespace {

using ::focal::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Raw(const std::string& header, size_t data_bytes, uint64_t claimed_len = UINT64_MAX) {
  uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + std::string(data_bytes, '\x01');
}

std::string Write(const std::string& bytes) {
  std::string path = testing::MakeTempDir("st") + "/model.safetensors";
  testing::WriteStringToFile(path, bytes);
  return path;
}

TEST(SafetensorsTest, RoundTripsWriterOutput) {
  std::map<std::string, F32Tensor> t;
  t["a"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
  t["b"] = {{1}, {7}};
  std::string path = Write(SerializeSafetensors(t, {{"format", "pt"}}));
  auto f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->tensors().size(), 2u);
  const TensorInfo& a = (*f)->tensors().at("a");
  EXPECT_EQ(a.dtype, "F32");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.bytes, 24u);
  float v;
  std::memcpy(&v, a.data + 20, 4);
  EXPECT_EQ(v, 6.0f);
  EXPECT_EQ((*f)->metadata().at("format"), "pt");
}

TEST(SafetensorsTest, TruncatedFile) {
  EXPECT_THAT(SafetensorsFile::Open(Write("abc")),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("model.safetensors"), HasSubstr("truncated"))));
}

TEST(SafetensorsTest, HeaderLengthPastEndOfFile) {
  EXPECT_THAT(SafetensorsFile::Open(Write(Raw("{}", 0, 1000))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header length 1000 runs past")));
  EXPECT_THAT(SafetensorsFile::Open(Write(Raw("{}", 0, UINT64_MAX - 3))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past")));
}

TEST(SafetensorsTest, MalformedHeaderJson) {
  EXPECT_THAT(
      SafetensorsFile::Open(Write(Raw(R"({"w": {"dtype": "F32",)", 0))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("model.safetensors (header):1:"), HasSubstr("malformed JSON"))));
}

TEST(SafetensorsTest, OffsetsOutOfRange) {
  EXPECT_THAT(SafetensorsFile::Open(Write(
                  Raw(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8))),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'w'"), HasSubstr("run past the end of the data"))));
  EXPECT_THAT(SafetensorsFile::Open(Write(
                  Raw(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad data_offsets")));
}

TEST(SafetensorsTest, OverlappingOffsets) {
  EXPECT_THAT(SafetensorsFile::Open(
                  Write(Raw(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                            12))),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("overlaps tensor 'a'"))));
}

TEST(SafetensorsTest, UnknownDtype) {
  EXPECT_THAT(SafetensorsFile::Open(Write(
                  Raw(R"({"w": {"dtype": "F42", "shape": [1], "data_offsets": [0, 4]}})", 4))),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'w'"), HasSubstr("unknown dtype 'F42'"))));
}

TEST(SafetensorsTest, ShapeDisagreesWithByteRange) {
  EXPECT_THAT(
      SafetensorsFile::Open(
          Write(Raw(R"({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 8]}})", 8))),
      StatusIs(absl::StatusCode::kDataLoss,
               AllOf(HasSubstr("tensor 'w'"), HasSubstr("span 8 bytes"), HasSubstr("need 6"))));
  // A shape whose element count overflows must not wrap around.
  EXPECT_THAT(
      SafetensorsFile::Open(Write(Raw(
          R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 0]}})",
          0))),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("overflows")));
  EXPECT_THAT(SafetensorsFile::Open(Write(
                  Raw(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("non-negative")));
}

TEST(SafetensorsTest, MissingFieldsInEntry) {
  EXPECT_THAT(SafetensorsFile::Open(Write(Raw(R"({"w": {"dtype": "F32", "shape": [1]}})", 4))),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("data_offsets")));
  EXPECT_THAT(SafetensorsFile::Open(Write(Raw(R"([1, 2])", 0))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
}

TEST(SafetensorsTest, NonExistentPath) {
  EXPECT_THAT(SafetensorsFile::Open("/no/such/model.safetensors"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/model.safetensors")));
  EXPECT_THAT(TensorStore::OpenDir("/no/such/dir"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/such/dir")));
}

TEST(SafetensorsTest, ShardedIndexErrors) {
  std::string dir = testing::MakeTempDir("shard");
  std::map<std::string, F32Tensor> t;
  t["a"] = {{1}, {1}};
  testing::WriteStringToFile(dir + "/s1.safetensors", SerializeSafetensors(t));
  testing::WriteStringToFile(dir + "/model.safetensors.index.json",
                             R"({"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors"}})");
  EXPECT_THAT(TensorStore::OpenDir(dir),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'b'"), HasSubstr("does not contain it"))));
  testing::WriteStringToFile(dir + "/model.safetensors.index.json",
                             R"({"weight_map": {"a": "missing.safetensors"}})");
  EXPECT_THAT(TensorStore::OpenDir(dir),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.safetensors")));
  // A shard holding a tensor the index does not list.
  t["c"] = {{1}, {2}};
  testing::WriteStringToFile(dir + "/s1.safetensors", SerializeSafetensors(t));
  testing::WriteStringToFile(dir + "/model.safetensors.index.json",
                             R"({"weight_map": {"a": "s1.safetensors"}})");
  EXPECT_THAT(TensorStore::OpenDir(dir),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("tensor 'c'"), HasSubstr("not listed"))));
  testing::WriteStringToFile(dir + "/model.safetensors.index.json", R"({"weight_map": [1]})");
  EXPECT_THAT(TensorStore::OpenDir(dir),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("weight_map")));
}

TEST(SafetensorsTest, ShardedCheckpointLoads) {
  auto store =
      TensorStore::OpenDir(testing::SourcePath("tests/testdata/models/bf16_headdim_sharded"));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->files().size(), 2u);
  const TensorInfo* q = store->Find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, "BF16");
  EXPECT_EQ(q->shape, (std::vector<int64_t>{96, 64}));
}

}  // namespace
}  // namespace focal::model
