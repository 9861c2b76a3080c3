// SPDX-License-Identifier: Apache-2.0
// `focal-eval prompts` as a user runs it: its RULER samples equal RULER's own
// generator's (the hashes tests/reference/ruler_reference.py recorded) for the
// 13 tasks at 4096 tokens on the default model's tokenizer, without loading
// any weights; its file layout; and its refusals.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/json.h"
#include "base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace focal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Want {
  std::string input_sha, outputs_sha;
  int64_t ruler_length = 0;
};

// (RULER task, length, index) -> the reference's hashes and length.
std::map<std::tuple<std::string, int64_t, int64_t>, Want> Golden(const std::string& tokenizer) {
  std::map<std::tuple<std::string, int64_t, int64_t>, Want> rows;
  std::ifstream in(testing::SourcePath("tests/testdata/golden/ruler_reference/smollm2.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string tok, task;
    int64_t length, index, bytes;
    Want w;
    f >> tok >> task >> length >> index >> w.input_sha >> w.outputs_sha >> bytes >> w.ruler_length;
    if (tok == tokenizer) rows[{task, length, index}] = w;
  }
  return rows;
}

// With the fetched data (RunCommand's default is none, the bundled samples).
std::string Bin() {
  return "FOCAL_DATA_CACHE='" + DataCacheDir() + "' FOCAL_DEFAULT_MODEL='" +
         testing::DefaultModelGguf() + "' " + FOCAL_EVAL_BIN;
}

class PromptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FOCAL_REQUIRE_FILE(testing::DefaultModelGguf(), "bash scripts/fetch_default_model.sh");
    FOCAL_REQUIRE_FILE(DataCacheDir() + "/ruler/essay_sentences.json",
                       "bash scripts/fetch_data.sh");
  }
};

TEST_F(PromptsTest, RulerTasksEqualRulersOwnGenerator) {
  const auto golden = Golden("smollm2");
  ASSERT_FALSE(golden.empty());
  testing::CommandResult r =
      testing::RunCommand(Bin(), "prompts --tasks ruler --lengths 4096 --limit 3");
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<std::string, int> per_task;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    auto v = ParseJson(line, "prompts");
    ASSERT_TRUE(v.ok()) << v.status();
    const JsonValue* meta = v->Find("meta");
    ASSERT_NE(meta, nullptr);
    ASSERT_NE(meta->Find("ruler_task"), nullptr) << line.substr(0, 200);
    EXPECT_EQ(meta->Find("construction")->string_value(), "RULER 26.3 (byte-identical)");
    const std::string task = meta->Find("ruler_task")->string_value();
    const int64_t index = v->Find("index")->integer();
    EXPECT_EQ(v->Find("context_length")->integer(), 4096);
    std::vector<std::string> outputs;
    for (const JsonValue& o : v->Find("outputs")->array()) outputs.push_back(o.string_value());
    auto it = golden.find({task, 4096, index});
    ASSERT_NE(it, golden.end()) << task << " #" << index;
    const std::string& input = v->Find("input")->string_value();
    EXPECT_EQ(Sha256Hex(input), it->second.input_sha) << task << " #" << index;
    EXPECT_EQ(v->Find("prompt_sha256")->string_value(), it->second.input_sha);
    EXPECT_EQ(Sha256Hex(absl::StrJoin(outputs, "\n")), it->second.outputs_sha)
        << task << " #" << index;
    EXPECT_EQ(v->Find("length")->integer(), it->second.ruler_length) << task << " #" << index;
    EXPECT_LE(v->Find("prompt_tokens")->integer(), 4096) << task << " #" << index;
    ++per_task[task];
  }
  EXPECT_EQ(per_task.size(), 13u);
  for (const auto& [task, n] : per_task) EXPECT_EQ(n, 3) << task;
  EXPECT_THAT(r.err, Not(HasSubstr("sample")));  // the fetched data, not the bundled samples
}

// Without the fetched data the bundled samples build an approximation, and
// every sample and the log say so.
TEST_F(PromptsTest, SampleFallbackIsLabelled) {
  testing::CommandResult r = testing::RunCommand(
      "FOCAL_DEFAULT_MODEL='" + testing::DefaultModelGguf() + "' " + FOCAL_EVAL_BIN,
      "prompts --tasks ruler_niah_single_2 --lengths 4096 --limit 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not real data"));
  auto v = ParseJson(r.out, "prompts");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Find("meta")->Find("construction")->string_value(),
            "focal-eval approximation of RULER (not RULER's prompts)");
}

// --data-dir replaces only the files a task names for it: HELMET's recall
// tasks and RULER's word-list tasks name none, so beside a --data-dir (as a
// HELMET ICL run needs) they stay RULER's own construction on the fetched set
// (HELMET's MV too, though its RULER task reads the essays).
TEST_F(PromptsTest, DataDirKeepsTasksWithoutDataFilesOnRulersConstruction) {
  const std::string dir = ::testing::TempDir() + "/prompts_empty_data_dir";
  std::filesystem::create_directories(dir);
  testing::CommandResult r = testing::RunCommand(
      Bin(),
      "prompts --tasks helmet_ruler_niah_mk_2,helmet_ruler_niah_mv,ruler_vt --lengths 4096 "
      "--limit 1 --data-dir " +
          dir);
  ASSERT_EQ(r.code, 0) << r.err;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    auto v = ParseJson(line, "prompts");
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->Find("meta")->Find("construction")->string_value(), "RULER 26.3 (byte-identical)")
        << line.substr(0, 200);
    ++lines;
  }
  EXPECT_EQ(lines, 3);
  EXPECT_THAT(r.err, Not(HasSubstr("not real data")));
}

TEST_F(PromptsTest, OutWritesRulersLayout) {
  const std::string dir = ::testing::TempDir() + "/prompts_layout";
  std::filesystem::remove_all(dir);
  testing::CommandResult r = testing::RunCommand(
      Bin(), "prompts --tasks ruler_niah_single_1,ruler_vt --lengths 4096 --limit 2 --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* task : {"ruler_niah_single_1", "ruler_vt"}) {
    const std::string file = absl::StrCat(dir, "/4096/", task, "/validation.jsonl");
    EXPECT_THAT(r.out, HasSubstr(file + ": 2 samples"));
    const std::string text = testing::ReadFileOrDie(file);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << file;
  }
}

// Read `prompts` lines into (task -> lines).
std::map<std::string, std::vector<JsonValue>> ByTask(const std::string& out) {
  std::map<std::string, std::vector<JsonValue>> m;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    auto v = ParseJson(line, "prompts");
    if (!v.ok()) {
      ADD_FAILURE() << v.status();
      continue;
    }
    m[v->Find("task")->string_value()].push_back(*std::move(v));
  }
  return m;
}

// HELMET's recall tasks: RULER's samples in HELMET's load_ruler prompt (its
// user template + "\n" + its system template, filled with RULER's context,
// query and needle type), formatted here independently, with RULER's golds.
TEST_F(PromptsTest, HelmetRecallIsRulersSamplesInHelmetsTemplate) {
  testing::CommandResult h = testing::RunCommand(
      Bin(),
      "prompts --tasks helmet_ruler_niah_mk_2,helmet_ruler_niah_mk_3,helmet_ruler_niah_mv "
      "--lengths 4096 --limit 2");
  ASSERT_EQ(h.code, 0) << h.err;
  testing::CommandResult r = testing::RunCommand(
      Bin(),
      "prompts --tasks ruler_niah_multikey_2,ruler_niah_multikey_3,ruler_niah_multivalue "
      "--lengths 4096 --limit 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto helmet = ByTask(h.out), ruler = ByTask(r.out);
  const struct {
    const char* helmet;
    const char* ruler;
    const char* type;
    bool single;
    int64_t max_new;
  } cases[] = {{"helmet_ruler_niah_mk_2", "ruler_niah_multikey_2", "number", true, 50},
               {"helmet_ruler_niah_mk_3", "ruler_niah_multikey_3", "uuid", true, 100},
               {"helmet_ruler_niah_mv", "ruler_niah_multivalue", "numbers", false, 50}};
  for (const auto& c : cases) {
    ASSERT_EQ(helmet[c.helmet].size(), 2u) << c.helmet;
    ASSERT_EQ(ruler[c.ruler].size(), 2u) << c.ruler;
    for (size_t i = 0; i < 2; ++i) {
      const JsonValue& hv = helmet[c.helmet][i];
      const JsonValue& rv = ruler[c.ruler][i];
      const std::string& rin = rv.Find("input")->string_value();
      // RULER's context: between the instructions' line and the question.
      const size_t b = rin.find("afterwards.\n") + 12, e = rin.rfind("\nWhat ");
      ASSERT_LT(b, e);
      const std::string context = rin.substr(b, e - b);
      const size_t qb = rin.find(" for ", e) + 5, qe = rin.find(" mentioned in", qb);
      const std::string query = rin.substr(qb, qe - qb), t = c.type;
      const std::string user =
          c.single ? absl::StrCat("A special magic ", t,
                                  " is hidden within the following text. Make sure to memorize "
                                  "it. I will quiz you about the ",
                                  t, " afterwards.\n", context, "\nWhat is the special magic ", t,
                                  " for ", query, " mentioned in the provided text?")
                   : absl::StrCat("Some special magic ", t,
                                  " are hidden within the following text. Make sure to memorize "
                                  "it. I will quiz you about the ",
                                  t, " afterwards.\n", context, "\nWhat are all the special magic ",
                                  t, " for ", query, " mentioned in the provided text?");
      const std::string system =
          absl::StrCat("The special magic ", t, " for ", query, " mentioned in the provided text ",
                       c.single ? "is" : "are");
      EXPECT_EQ(hv.Find("input")->string_value(), user + "\n" + system) << c.helmet << " #" << i;
      EXPECT_EQ(hv.Find("outputs")->array().size(), rv.Find("outputs")->array().size());
      for (size_t k = 0; k < rv.Find("outputs")->array().size(); ++k) {
        EXPECT_EQ(hv.Find("outputs")->array()[k].string_value(),
                  rv.Find("outputs")->array()[k].string_value());
      }
      EXPECT_EQ(hv.Find("max_new_tokens")->integer(), c.max_new) << c.helmet;
      EXPECT_EQ(hv.Find("meta")->Find("construction")->string_value(),
                "RULER 26.3 (byte-identical)");
    }
  }
}

TEST_F(PromptsTest, ClearRefusals) {
  testing::CommandResult unknown = testing::RunCommand(Bin(), "prompts --tasks ruler_niah_9");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("ruler_niah_9"));
  EXPECT_THAT(unknown.err, HasSubstr("ruler_niah_single_1"));  // the valid names
  testing::CommandResult ll = testing::RunCommand(Bin(), "prompts --tasks piqa");
  EXPECT_EQ(ll.code, 1);
  EXPECT_THAT(ll.err, HasSubstr("piqa score loglikelihoods"));
  testing::CommandResult tok =
      testing::RunCommand(Bin(), "prompts --tasks ruler_vt --tokenizer /nonexistent/dir");
  EXPECT_EQ(tok.code, 1);
  EXPECT_THAT(tok.err, HasSubstr("/nonexistent/dir"));
}

}  // namespace
}  // namespace focal
