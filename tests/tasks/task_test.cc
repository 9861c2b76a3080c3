// SPDX-License-Identifier: Apache-2.0
#include "tasks/task.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tasks/task_registry.h"
#include "tests/testing/test_util.h"

namespace focal::tasks {
namespace {

using ::focal::testing::StatusIs;
using ::testing::HasSubstr;

TaskSpec Spec(const std::string& text) {
  auto s = ParseTaskSpec(text, "t.textproto");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

datasets::Doc ArcDoc() {
  datasets::Doc d;
  d.id = "q1";
  d.fields["question"] = "Which is a mammal?";
  d.choices = {"shark", "dolphin", "trout"};
  d.gold = 1;
  return d;
}

TEST(TaskTest, MultipleChoiceRequestsAndScores) {
  auto t = Task::FromSpec(Spec(R"(name: "arc" output_type: MULTIPLE_CHOICE
      doc_to_text: "Question: {{question}}\nAnswer:" metrics: ["acc", "acc_norm"])"));
  ASSERT_TRUE(t.ok()) << t.status();
  auto reqs = t->BuildRequests(ArcDoc());
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 3u);
  EXPECT_EQ((*reqs)[0].context, "Question: Which is a mammal?\nAnswer:");
  EXPECT_EQ((*reqs)[1].continuation, " dolphin");
  // raw max is choice 0; normalised: -3/5 = -0.6 beats -0.9 and -0.8 too.
  std::vector<LoglikelihoodResult> rs = {{-3.0, false}, {-6.3, false}, {-4.0, false}};
  auto s = t->Score(ArcDoc(), rs);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->prediction, 0);
  EXPECT_EQ(s->metrics.at("acc"), 0.0);
  EXPECT_EQ(s->metrics.at("acc_norm"), 0.0);
  rs = {{-7.0, false}, {-6.3, false}, {-4.6, false}};  // raw: 2; norm: -1.4, -0.9, -0.92 -> 1
  s = t->Score(ArcDoc(), rs);
  EXPECT_EQ(s->prediction, 2);
  EXPECT_EQ(s->metrics.at("acc"), 0.0);
  EXPECT_EQ(s->metrics.at("acc_norm"), 1.0);
}

// lm-eval's multiple input (WinoGrande): each choice ends its own context,
// the continuation is shared; few-shot examples use the gold choice's context.
TEST(TaskTest, MultipleInputRequestsFewshotAndScores) {
  auto t = Task::FromSpec(Spec(R"(name: "wg" output_type: MULTIPLE_INPUT
      doc_to_text: "{{prefix}}{{choice}}" doc_to_target: "{{continuation}}"
      metrics: ["acc", "acc_norm"])"));
  ASSERT_TRUE(t.ok()) << t.status();
  datasets::Doc d;
  d.id = "0";
  d.fields = {{"prefix", "Ann helped Bo because "}, {"continuation", "was kind."}};
  d.choices = {"Ann", "Bo"};
  d.gold = 0;
  auto reqs = t->BuildRequests(d, "P\n\n");
  ASSERT_TRUE(reqs.ok()) << reqs.status();
  ASSERT_EQ(reqs->size(), 2u);
  EXPECT_EQ((*reqs)[0].context, "P\n\nAnn helped Bo because Ann");
  EXPECT_EQ((*reqs)[1].context, "P\n\nAnn helped Bo because Bo");
  EXPECT_EQ((*reqs)[0].continuation, " was kind.");
  EXPECT_EQ((*reqs)[1].continuation, " was kind.");
  // acc_norm divides by the length of each choice's context (lm-eval's
  // doc_to_choice output), 25 and 24 characters: -10/25 < -8/24 picks Bo,
  // where dividing by the options' lengths (3, 2) would pick Ann.
  auto s = t->Score(d, std::vector<LoglikelihoodResult>{{-10.0, false}, {-8.0, false}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->prediction, 1);
  EXPECT_EQ(s->metrics.at("acc"), 0.0);
  EXPECT_EQ(s->metrics.at("acc_norm"), 0.0);
  // Few-shot: "<gold context> <continuation>\n\n", as lm-eval's sampler writes it.
  datasets::Doc ex = d;
  ex.fields["prefix"] = "Cy met Di and ";
  ex.fields["continuation"] = "smiled.";
  ex.choices = {"Cy", "Di"};
  ex.gold = 1;
  PyRandom rnd(1234);
  auto prefix = t->FewshotPrefix(d, std::vector<datasets::Doc>{ex}, 1, false, rnd);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, "Cy met Di and Di smiled.\n\n");
  // A spec without the shared continuation is refused.
  EXPECT_THAT(Task::FromSpec(Spec(R"(name: "wg" output_type: MULTIPLE_INPUT
      doc_to_text: "{{prefix}}{{choice}}" metrics: ["acc"])")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("doc_to_target is empty")));
}

TEST(TaskTest, AccNormCountsCodePointsNotBytes) {
  EXPECT_EQ(Utf8Length("caf\xc3\xa9"), 4);
  EXPECT_EQ(Utf8Length("\xf0\x9f\x98\x80!"), 2);
}

TEST(TaskTest, LiteralChoicesAndLoglikelihood) {
  auto b = Task::FromSpec(Spec(R"(name: "boolq" output_type: MULTIPLE_CHOICE
      doc_to_text: "{{passage}}\nQuestion: {{question}}?\nAnswer:" choices: ["no", "yes"]
      metrics: ["acc"])"));
  ASSERT_TRUE(b.ok());
  datasets::Doc d;
  d.id = "0";
  d.fields = {{"passage", "P."}, {"question", "is it"}};
  d.gold = 1;
  auto r = b->BuildRequests(d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].context, "P.\nQuestion: is it?\nAnswer:");
  EXPECT_EQ((*r)[1].continuation, " yes");
  auto l = Task::FromSpec(Spec(R"(name: "lambada" output_type: LOGLIKELIHOOD
      doc_to_text: "{{context}}" doc_to_target: "{{target}}" metrics: ["perplexity", "acc"])"));
  ASSERT_TRUE(l.ok());
  d.fields = {{"context", "the cat sat on the"}, {"target", " mat"}};
  auto lr = l->BuildRequests(d);
  ASSERT_TRUE(lr.ok());
  EXPECT_EQ((*lr)[0].continuation, " mat");
  std::vector<LoglikelihoodResult> one = {{-2.5, true}};
  auto s = l->Score(d, one);
  EXPECT_EQ(s->metrics.at("acc"), 1.0);
  EXPECT_EQ(s->metrics.at("perplexity"), -2.5);
}

TEST(TaskTest, BadDocumentsAndSpecs) {
  auto t = Task::FromSpec(Spec(R"(name: "arc" output_type: MULTIPLE_CHOICE
      doc_to_text: "Question: {{stem}}" metrics: ["acc"])"));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t->BuildRequests(ArcDoc()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no field 'stem'")));
  datasets::Doc d = ArcDoc();
  d.fields["stem"] = "x";
  d.gold = 3;
  EXPECT_THAT(t->BuildRequests(d),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gold index 3 out of range")));
  d.choices = {"only"};
  d.gold = 0;
  EXPECT_THAT(t->BuildRequests(d),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 choices")));
  auto l = Task::FromSpec(Spec(R"(name: "l" output_type: LOGLIKELIHOOD doc_to_text: "{{c}}"
      doc_to_target: "{{t}}" metrics: ["acc"])"));
  ASSERT_TRUE(l.ok());
  datasets::Doc e;
  e.fields = {{"c", "x"}, {"t", ""}};
  EXPECT_THAT(l->BuildRequests(e),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty continuation")));
  EXPECT_THAT(Task::FromSpec(Spec(R"(name: "x" output_type: LOGLIKELIHOOD doc_to_text: "a"
      doc_to_target: "b" metrics: ["acc_norm"])")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("acc_norm")));
  EXPECT_THAT(ParseTaskSpec("name: \"x\"\nversoin: 2\n", "bad.textproto"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad.textproto:2:")));
}

TEST(TaskRegistryTest, BundledSpecsAndGroups) {
  auto reg = TaskRegistry::Load(testing::SourcePath("tasks/specs"));
  ASSERT_TRUE(reg.ok()) << reg.status();
  // "all" is the short-context tasks; the long-context ones are specs too.
  auto resolved = reg->Resolve("all");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  std::vector<std::string> all;
  for (const Task* t : *resolved) all.push_back(t->name());
  EXPECT_EQ(all,
            (std::vector<std::string>{"arc_challenge", "arc_easy", "boolq", "hellaswag",
                                      "lambada_openai", "lambada_standard", "piqa", "winogrande"}));
  EXPECT_EQ(reg->TaskNames().size(), 8u + 13u + 1u + 11u);
  // Groups list RULER's tasks in RULER's order (the specs' `order`).
  const std::vector<std::string> ruler = reg->Groups().at("ruler");
  ASSERT_EQ(ruler.size(), 13u);
  EXPECT_EQ(ruler.front(), "ruler_niah_single_1");
  EXPECT_EQ(ruler.back(), "ruler_qa_2");
  EXPECT_EQ(reg->Groups().at("long_context").back(), "hotpotqa_long");
  // HELMET: its own groups (its data is not bundled, so not in long_context).
  EXPECT_EQ(
      reg->Groups().at("helmet_icl"),
      (std::vector<std::string>{"helmet_icl_trec_coarse", "helmet_icl_trec_fine",
                                "helmet_icl_banking77", "helmet_icl_clinc150", "helmet_icl_nlu"}));
  EXPECT_EQ(reg->Groups().at("helmet").size(), 11u);
  EXPECT_EQ(reg->Groups().at("helmet_rag"),
            (std::vector<std::string>{"helmet_rag_nq", "helmet_rag_hotpotqa"}));
  EXPECT_EQ(reg->Groups().at("helmet_recall"),
            (std::vector<std::string>{"helmet_json_kv", "helmet_ruler_niah_mk_2",
                                      "helmet_ruler_niah_mk_3", "helmet_ruler_niah_mv"}));
  auto c = reg->Resolve("commonsense");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->size(), 6u);
  auto mixed = reg->Resolve("piqa, commonsense,lambada_openai");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->size(), 7u);
  EXPECT_EQ((*mixed)[0]->name(), "piqa");
  EXPECT_THAT(reg->Resolve("hellaswg"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("did you mean 'hellaswag'")));
  EXPECT_THAT(TaskRegistry::Load("/no/specs"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/no/specs")));
}

}  // namespace
}  // namespace focal::tasks
