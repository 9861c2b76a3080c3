// SPDX-License-Identifier: Apache-2.0
#include "base/json_writer.h"

#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "gtest/gtest.h"

namespace focal {
namespace {

TEST(JsonWriterTest, QuotesEscapes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\nd\te\rf"), R"("a\"b\\c\nd\te\rf")");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through
}

TEST(JsonWriterTest, PythonLayoutAndCompact) {
  const std::vector<std::string> names = {"x", "y"};
  const std::vector<bool> flags = {true, false};
  const std::map<std::string, std::string> meta = {{"b", "2"}, {"a", "1"}};
  const std::string line = JsonObjectWriter()
                               .String("s", "v")
                               .Int("i", -3)
                               .Double("d", 0.1)
                               .ShortDouble("sd", 0.1)
                               .StringArray("names", names)
                               .BoolArray("flags", flags)
                               .StringMap("meta", meta)
                               .Finish();
  EXPECT_EQ(line,
            R"({"s": "v", "i": -3, "d": 0.10000000000000001, "sd": 0.1, "names": ["x", "y"], )"
            R"("flags": [true, false], "meta": {"a": "1", "b": "2"}})");
  auto parsed = ParseJson(line, "line");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Find("d")->number(), 0.1);  // %.17g round-trips
  EXPECT_EQ(JsonObjectWriter(/*compact=*/true).String("k", "a").Bool("g", true).Finish(),
            R"({"k":"a","g":true})");
  EXPECT_EQ(JsonObjectWriter().Finish(), "{}");
}

}  // namespace
}  // namespace focal
