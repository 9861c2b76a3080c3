// SPDX-License-Identifier: Apache-2.0
// Expected values were computed with the SQuAD v1.1 / LongBench formulas
// (LongBench/metrics.py normalize_answer, f1_score; HELMET's
// substring_exact_match) in CPython 3.11, post-processing the prediction as
// QaPrediction does:
//
//   import re, string
//   from collections import Counter
//   def normalize_answer(s):
//       s = "".join(ch for ch in s.lower() if ch not in
//       set(string.punctuation)) return " ".join(re.sub(r"\b(a|an|the)\b", " ",
//       s).split())
//   def post(x): return x.lstrip("\n").split("\n")[0].strip()
//   def f1(p, g):
//       p, g = normalize_answer(post(p)).split(), normalize_answer(g).split()
//       ns = sum((Counter(p) & Counter(g)).values())
//       if ns == 0: return 0
//       pr, rc = 1.0 * ns / len(p), 1.0 * ns / len(g)
//       return (2 * pr * rc) / (pr + rc)
//   em  = max(normalize_answer(post(p)) == normalize_answer(g) for g in golds)
//   sub = max(normalize_answer(g) in normalize_answer(post(p)) for g in golds)
//
// F1 values are repr() of the Python floats, so the comparisons are exact.
#include "tasks/qa_metrics.h"

#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace focal::tasks {
namespace {

TEST(QaPredictionTest, FirstLineStripped) {
  EXPECT_EQ(QaPrediction(" Kansas Song \nQuestion: next"), "Kansas Song");
  EXPECT_EQ(QaPrediction("\n\nParis\nFrance"), "Paris");
  EXPECT_EQ(QaPrediction("\n \nParis"),
            "");  // the first line after "\n"s is " "
  EXPECT_EQ(QaPrediction("\xc2\xa0Paris\t"),
            "Paris");  // str.strip() drops NBSP
  EXPECT_EQ(QaPrediction(""), "");
  EXPECT_EQ(QaPrediction("\n\n"), "");
}

TEST(NormalizeAnswerTest, MatchesPython) {
  struct Case {
    const char* in;
    const char* out;
  };
  const std::vector<Case> cases = {
      {"The  Quick, brown-fox!", "quick brownfox"},
      {"A an THE the", ""},
      {"theory of an apple", "theory of apple"},
      {"\xc3\x89mile ZOLA", "\xc3\xa9mile zola"},     // Émile -> émile
      {"l'\xc3\xa9t\xc3\xa9", "l\xc3\xa9t\xc3\xa9"},  // l'été -> lété
      {"the_end", "theend"},                          // '_' is punctuation
      {"a\xc2\xa0"
       "b",
       "b"},  // NBSP: not a word char, a space
      {"na\xc3\xafve THE caf\xc3\xa9", "na\xc3\xafve caf\xc3\xa9"},  // naïve THE café
      {"\xc3\xa9the the", "\xc3\xa9the"},  // é is a word char: éthe stays
      {"\xce\x91\xce\x98\xce\x97\xce\x9d\xce\x91 "
       "\xd0\x81\xd0\xbb\xd0\xba\xd0\xb0 \xc4\x80\xc4\x92",
       "\xce\xb1\xce\xb8\xce\xb7\xce\xbd\xce\xb1 "
       "\xd1\x91\xd0\xbb\xd0\xba\xd0\xb0 \xc4\x81\xc4\x93"},
      {"\xc4\xb0stanbul", "i\xcc\x87stanbul"},  // İ -> i + U+0307
      {"\xe2\x80\x9cThe\xe2\x80\x9d answer", "\xe2\x80\x9c \xe2\x80\x9d answer"},  // “The” answer
      {"an_a", "ana"},
      {"\tthe\xe3\x80\x80"
       "end\xe2\x80\x89 ",
       "end"},  // U+3000, U+2009 are spaces
      {"1,000.5 the 2nd", "10005 2nd"},
      {"a-b-c", "abc"},
      {"\xc3\x80\xc3\x89\xc3\x8e", "\xc3\xa0\xc3\xa9\xc3\xae"},  // ÀÉÎ -> àéî
      {"The Eiffel Tower.", "eiffel tower"},
      // Ⓐ Ǆ Ω(ohm) Ꭰ Ⴀ -> ⓐ ǆ ω ꭰ ⴀ: lower() beyond Latin (circled, Latin
      // Extended-B, letterlike, Cherokee, Georgian).
      {"\xe2\x92\xb6 \xc7\x84 \xe2\x84\xa6 \xe1\x8e\xa0 \xe1\x82\xa0",
       "\xe2\x93\x90 \xc7\x86 \xcf\x89 \xea\xad\xb0 \xe2\xb4\x80"},
      {"THE\xe2\x85\xa0 \xe2\x85\xa0", "the\xe2\x85\xb0 \xe2\x85\xb0"},  // Ⅰ (Nl) is a word char
  };
  for (const Case& c : cases) EXPECT_EQ(NormalizeAnswer(c.in), c.out) << c.in;
}

TEST(QaMetricsTest, MatchesSquadFormulas) {
  struct Case {
    std::string pred;
    std::vector<std::string> golds;
    double em, f1, sub;
  };
  const std::vector<Case> cases = {
      {"Kansas Song", {"Kansas Song"}, 1.0, 1.0, 1.0},
      {" The Kansas Song.\nQuestion: next", {"Kansas Song"}, 1.0, 1.0, 1.0},
      {"the Eiffel Tower in Paris", {"Eiffel Tower"}, 0.0, 0.6666666666666666, 1.0},
      {"yes yes no", {"yes"}, 0.0, 0.5, 1.0},
      {"Paris, France", {"paris", "France, Paris, \xc3\x8ele-de-France"}, 0.0, 0.8, 1.0},
      {"three hundred and forty", {"340", "three hundred forty"}, 0.0, 0.8571428571428571, 0.0},
      {"", {"anything"}, 0.0, 0.0, 0.0},
      {"\n\nMiller v. California\nmore", {"Miller v. California"}, 1.0, 1.0, 1.0},
      {"It was the 1969 film by Roman Polanski", {"Roman Polanski"}, 0.0, 0.4444444444444445, 1.0},
      {"New York City New York", {"New York"}, 0.0, 0.5714285714285715, 1.0},
      // Both normalise to "": equal and a substring, but no shared token.
      {"a", {"the"}, 1.0, 0.0, 1.0},
      {"answer", {}, 0.0, 0.0, 0.0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExactMatch(c.pred, c.golds), c.em) << c.pred;
    EXPECT_EQ(TokenF1(c.pred, c.golds), c.f1) << c.pred;
    EXPECT_EQ(SubstringMatch(c.pred, c.golds), c.sub) << c.pred;
  }
}

TEST(QaMetricsTest, InvalidUtf8IsCopiedThrough) {
  // Generations decoded from byte tokens may end inside a character.
  EXPECT_EQ(NormalizeAnswer("The caf\xc3"), "caf\xc3");
  EXPECT_EQ(TokenF1("caf\xc3", {"caf\xc3"}), 1.0);
}

}  // namespace
}  // namespace focal::tasks
