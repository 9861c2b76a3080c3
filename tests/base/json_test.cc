// SPDX-License-Identifier: Apache-2.0
#include "base/json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

TEST(JsonTest, ParsesAllTypes) {
  auto v =
      ParseJson(R"({"a": 1, "b": -2.5e1, "c": "x\n\u00e9\ud83d\ude00", "d": [true, false, null],
                        "e": {}, "big": 9007199254740993})",
                "t.json");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Find("a")->integer(), 1);
  EXPECT_DOUBLE_EQ(v->Find("b")->number(), -25.0);
  EXPECT_FALSE(v->Find("b")->is_integer());
  EXPECT_EQ(v->Find("c")->string_value(), "x\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v->Find("d")->array().size(), 3u);
  EXPECT_TRUE(v->Find("d")->array()[2].is_null());
  EXPECT_TRUE(v->Find("e")->is_object());
  // Offsets above 2^53 stay exact (a double would round this one).
  EXPECT_EQ(v->Find("big")->integer(), 9007199254740993LL);
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(JsonTest, ErrorsGiveLineAndColumn) {
  EXPECT_THAT(ParseJson("{\n  \"a\": 1,\n  \"b\": }", "cfg.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cfg.json:3:8")));
}

TEST(JsonTest, RejectsMalformedInput) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", "\"abc",
                          "\"\\x\"", "{\"a\":1} x", "tru", "\"\\ud800\"", "-", "{'a':1}"}) {
    EXPECT_FALSE(ParseJson(bad, "b.json").ok()) << bad;
  }
}

TEST(JsonTest, RejectsDuplicateKeys) {
  EXPECT_THAT(ParseJson(R"({"a": 1, "a": 2})", "d.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate key \"a\"")));
  // Past the linear-scan size too (large objects use a set), in both halves.
  std::string big = "{";
  for (int i = 0; i < 100; ++i) big += "\"k" + std::to_string(i) + "\": 0, ";
  EXPECT_TRUE(ParseJson(big + "\"last\": 1}", "big.json").ok());
  EXPECT_THAT(ParseJson(big + "\"k3\": 1}", "big.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate key \"k3\"")));
  EXPECT_THAT(ParseJson(big + "\"k99\": 1}", "big.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duplicate key \"k99\"")));
}

TEST(JsonTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  EXPECT_THAT(ParseJson(deep, "deep.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nesting too deep")));
}

}  // namespace
}  // namespace focal
