// SPDX-License-Identifier: Apache-2.0
// helmet_rag_hotpotqa's construction on a HotpotQA file of our own writing
// (110 records, one character = one token): HELMET's test-key draw, the
// demonstrations, the fill order and the gold block's place.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "datasets/generator.h"
#include "datasets/long_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {
namespace {

using ::testing::HasSubstr;

constexpr int kRecords = 110;

std::string Id(int i) { return absl::StrFormat("q%03d", i); }

// Record i: question "Who is i?", answer "a<i>", gold paragraphs "G<i>a" and
// "G<i>b" (supporting facts), own distractors "D<i>-0".."D<i>-7".
std::string WriteHotpotQa(const std::string& dir) {
  std::string jsonl;
  for (int i = kRecords - 1; i >= 0; --i) {  // descending: file order is not sorted order
    std::string context;
    auto para = [&](const std::string& title) {
      absl::StrAppend(&context, context.empty() ? "" : ", ", "[\"", title, "\", [\"Text of ", title,
                      ".\", \" More.\"]]");
    };
    para(absl::StrCat("G", i, "a"));
    for (int d = 0; d < 4; ++d) para(absl::StrCat("D", i, "-", d));
    para(absl::StrCat("G", i, "b"));
    for (int d = 4; d < 8; ++d) para(absl::StrCat("D", i, "-", d));
    absl::StrAppend(&jsonl, "{\"_id\": \"", Id(i), "\", \"question\": \"Who is ", i,
                    "?\", \"answer\": \"a", i, "\", \"supporting_facts\": [[\"G", i,
                    "a\", 0], [\"G", i, "b\", 1]], \"context\": [", context, "]}\n");
  }
  const std::string path = dir + "/hotpot.jsonl";
  testing::WriteStringToFile(path, jsonl);
  return path;
}

GeneratorRequest Request(const std::string& path, int64_t length, double depth) {
  GeneratorRequest req;
  req.task = "helmet_rag_hotpotqa";
  req.length = length;
  req.gold_depth = depth;
  req.settings.num_samples = 200;
  req.settings.seed = 42;
  req.settings.count_tokens = [](absl::string_view t) -> absl::StatusOr<int64_t> {
    return static_cast<int64_t>(t.size());
  };
  req.files["hotpotqa"] = path;
  return req;
}

// Titles of the documents in a prompt part, in order.
std::vector<std::string> Titles(absl::string_view text) {
  constexpr absl::string_view kOpen = "Document (Title: ";
  std::vector<std::string> out;
  for (size_t at = text.find(kOpen); at != absl::string_view::npos; at = text.find(kOpen, at)) {
    at += kOpen.size();
    out.emplace_back(text.substr(at, text.find(')', at) - at));
  }
  return out;
}

TEST(HelmetRagHotpotQaTest, BuildsHelmetsPromptFromTheQuestionsOwnParagraphs) {
  const std::string path = WriteHotpotQa(testing::MakeTempDir("helmet_rag_hotpotqa"));
  auto samples = FindGenerator("helmet_rag_hotpotqa")->make(Request(path, 6000, 0.5));
  ASSERT_TRUE(samples.ok()) << samples.status();
  // HELMET's draw: random.seed(42); random.sample(sorted(ids), 100) leaves
  // these ten out (Python 3.11); the drawn ones are evaluated in file order.
  const std::vector<std::string> left_out = {"q001", "q009", "q015", "q026", "q050",
                                             "q056", "q061", "q068", "q076", "q104"};
  ASSERT_EQ(samples->size(), 100u);
  std::vector<std::string> ids;
  for (const GenerationSample& s : *samples) ids.push_back(s.meta.at("id"));
  for (const std::string& id : left_out) EXPECT_THAT(ids, ::testing::Not(::testing::Contains(id)));
  EXPECT_TRUE(std::is_sorted(ids.rbegin(), ids.rend())) << "not in file order";

  for (const GenerationSample& s : *samples) {
    SCOPED_TRACE(s.meta.at("id"));
    const int q = std::stoi(s.meta.at("id").substr(1));
    EXPECT_LE(static_cast<int64_t>(s.input.size()) + 20, 6000);
    EXPECT_EQ(s.outputs, std::vector<std::string>{absl::StrCat("a", q)});
    EXPECT_EQ(s.max_new_tokens, 20);
    EXPECT_TRUE(absl::StartsWith(
        s.input,
        "Use the given documents to write a concise and short answer to the question. "
        "Write your answer in the following format:\nAnswer: [answer]\n\n"));
    EXPECT_TRUE(absl::EndsWith(s.input, absl::StrCat("\n\nQuestion: Who is ", q, "?\nAnswer:")));
    // Two demonstrations, each of three documents (two golds and the first
    // own distractor) of a question left out of the test draw.
    const std::vector<std::string> parts = absl::StrSplit(s.input, "\nAnswer: a");
    ASSERT_EQ(parts.size(), 3u);
    for (int d = 0; d < 2; ++d) {
      const std::vector<std::string> t = Titles(parts[d]);
      ASSERT_GE(t.size(), 3u);
      const std::string demo = t[t.size() - 3].substr(1, t[t.size() - 3].size() - 2);
      EXPECT_THAT(left_out, ::testing::Contains(absl::StrFormat("q%03d", std::stoi(demo))));
      EXPECT_EQ(t[t.size() - 2], absl::StrCat("G", demo, "b"));
      EXPECT_EQ(t[t.size() - 1], absl::StrCat("D", demo, "-0"));
    }
    // The context: the gold pair adjacent at round(0.5 n), the question's own
    // eight distractors all in (they come first in the fill order), no
    // paragraph twice.
    const std::vector<std::string> context = Titles(parts[2]);
    const int64_t n = std::stoll(s.meta.at("num_passages"));
    ASSERT_EQ(static_cast<int64_t>(context.size()), n);
    const int64_t at = std::stoll(s.meta.at("gold_index"));
    EXPECT_EQ(at, std::llround(0.5 * static_cast<double>(n - 2)));
    EXPECT_EQ(context[at], absl::StrCat("G", q, "a"));
    EXPECT_EQ(context[at + 1], absl::StrCat("G", q, "b"));
    int own = 0;
    for (const std::string& t : context) own += absl::StartsWith(t, absl::StrCat("D", q, "-"));
    EXPECT_EQ(own, 8);
    EXPECT_GT(n, 10) << "other questions' paragraphs fill the rest";
    EXPECT_EQ(std::set<std::string>(context.begin(), context.end()).size(), context.size());
    for (const std::string& t : Titles(parts[0] + parts[1])) {
      EXPECT_THAT(context, ::testing::Not(::testing::Contains(t))) << "a demonstration's";
    }
  }
}

TEST(HelmetRagHotpotQaTest, LongerContextsKeepTheShorterOnesOrderAndDepthMoves) {
  const std::string path = WriteHotpotQa(testing::MakeTempDir("helmet_rag_hotpotqa_order"));
  auto short_ctx = FindGenerator("helmet_rag_hotpotqa")->make(Request(path, 4000, 0.0));
  auto long_ctx = FindGenerator("helmet_rag_hotpotqa")->make(Request(path, 8000, 0.0));
  auto last = FindGenerator("helmet_rag_hotpotqa")->make(Request(path, 8000, 1.0));
  ASSERT_TRUE(short_ctx.ok() && long_ctx.ok() && last.ok());
  const GenerationSample& a = (*short_ctx)[0];
  const GenerationSample& b = (*long_ctx)[0];
  EXPECT_EQ(a.meta.at("gold_index"), "0");
  EXPECT_EQ((*last)[0].meta.at("gold_index"),
            absl::StrCat(std::stoll((*last)[0].meta.at("num_passages")) - 2));
  // Every distractor of the short context is in the long one, in the same order.
  std::vector<std::string> ta = Titles(a.input.substr(a.input.rfind("Answer: a")));
  std::vector<std::string> tb = Titles(b.input.substr(b.input.rfind("Answer: a")));
  ASSERT_LT(ta.size(), tb.size());
  size_t j = 0;
  for (const std::string& t : tb) j += j < ta.size() && t == ta[j];
  EXPECT_EQ(j, ta.size());
}

TEST(HelmetRagHotpotQaTest, BadInputIsAClearError) {
  GeneratorRequest req = Request("", 4096, 0.5);
  req.files.clear();
  auto s = FindGenerator("helmet_rag_hotpotqa")->make(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("scripts/fetch_data.sh"));
  const std::string dir = testing::MakeTempDir("helmet_rag_hotpotqa_bad");
  testing::WriteStringToFile(
      dir + "/few.jsonl",
      "{\"_id\": \"x\", \"question\": \"q\", \"answer\": \"a\", "
      "\"supporting_facts\": [[\"T\", 0]], \"context\": [[\"T\", [\"s\"]]]}\n");
  s = FindGenerator("helmet_rag_hotpotqa")->make(Request(dir + "/few.jsonl", 4096, 0.5));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("few.jsonl: 1 questions"));
  EXPECT_THAT(s.status().message(), HasSubstr("needs at least 102"));
  testing::WriteStringToFile(dir + "/bad.jsonl", "{\"_id\": \"x\", \"question\": 3}\n");
  s = FindGenerator("helmet_rag_hotpotqa")->make(Request(dir + "/bad.jsonl", 4096, 0.5));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("bad.jsonl:1"));
  // Too short for the demonstrations and the gold paragraphs.
  const std::string path = WriteHotpotQa(dir);
  s = FindGenerator("helmet_rag_hotpotqa")->make(Request(path, 300, 0.5));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("300 tokens cannot hold"));
}

}  // namespace
}  // namespace focal::datasets
