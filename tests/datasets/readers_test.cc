// SPDX-License-Identifier: Apache-2.0
// The dataset readers on the bundled format samples (values checked by hand
// against the files), lm-eval's text transforms and the formats' variants;
// readers_test_errors.cc: every error path, and (when ../shared is present)
// the exact document counts of the full files.
#include "tests/datasets/readers_test_util.h"

namespace focal::datasets {
namespace {

// --- Samples ---------------------------------------------------------------
// datasets/samples/ holds format samples written for the project (see its
// README); the values below were read off those files.

TEST(ReadersTest, ArcEasySample) {
  std::vector<Doc> docs = ReadOrDie("arc", Sample("arc_easy.jsonl"));
  ASSERT_THAT(docs, SizeIs(32));
  EXPECT_EQ(docs[0].id, "focal_arc_easy_01");
  EXPECT_EQ(docs[0].index, 0);
  EXPECT_EQ(docs[0].fields.at("question"),
            "Most of the water that a plant uses enters through its");
  EXPECT_THAT(docs[0].choices, ElementsAre("seeds", "leaves", "flowers", "roots"));
  EXPECT_EQ(docs[0].gold, 3);
  // Numeric labels "1".."4" (as NYSED Regents items use); answerKey "3" -> index 2.
  EXPECT_EQ(docs[13].id, "focal_arc_easy_14");
  EXPECT_THAT(docs[13].choices, ElementsAre("core", "mantle", "crust", "atmosphere"));
  EXPECT_EQ(docs[13].gold, 2);
  EXPECT_EQ(docs[25].gold, 2);
  // UTF-8 kept as is (degree signs, written as \u00b0 escapes in the file).
  EXPECT_EQ(docs[21].choices[0], "The noon temperature was 2\302\260C.");
  EXPECT_EQ(docs[21].gold, 3);
  EXPECT_EQ(docs[31].id, "focal_arc_easy_32");
  EXPECT_EQ(docs[31].index, 31);
  EXPECT_EQ(docs[31].gold, 0);
  for (const Doc& d : docs) EXPECT_EQ(d.fields.size(), 1u);
}

TEST(ReadersTest, ArcChallengeSampleHasThreeAndFiveChoiceItems) {
  std::vector<Doc> docs = ReadOrDie("arc", Sample("arc_challenge.jsonl"));
  ASSERT_THAT(docs, SizeIs(32));
  EXPECT_EQ(docs[0].id, "focal_arc_challenge_01");
  EXPECT_EQ(docs[0].gold, 1);
  EXPECT_EQ(docs[0].choices[1], "5 m/s\302\262");
  EXPECT_EQ(docs[6].fields.at("question"),
            "Which type of rock forms when melted rock from a volcano cools and hardens?");
  EXPECT_THAT(docs[6].choices, ElementsAre("igneous", "sedimentary", "metamorphic"));
  EXPECT_EQ(docs[6].gold, 0);
  EXPECT_THAT(docs[12].choices, SizeIs(5));
  EXPECT_EQ(docs[12].gold, 1);
  EXPECT_EQ(docs[13].gold, 2);  // numeric labels
}

TEST(ReadersTest, HellaswagLlamacppSample) {
  std::vector<Doc> docs = ReadOrDie("hellaswag_llamacpp", Sample("hellaswag.txt"));
  ASSERT_THAT(docs, SizeIs(30));
  EXPECT_EQ(docs[0].id, "0");
  // This layout keeps HF's ctx as is: "he", not lm-eval's capitalised "He".
  EXPECT_EQ(docs[0].fields.at("query"),
            "Washing a car: A man sprays soapy water over a red car parked in a driveway. he");
  EXPECT_THAT(docs[0].choices, ElementsAre("throws the hose onto the roof of the house.",
                                           "begins painting the windows with a small brush.",
                                           "scrubs the doors with a large yellow sponge.",
                                           "folds the car mirror into his pocket."));
  EXPECT_EQ(docs[0].gold, 2);
  EXPECT_EQ(docs[29].id, "29");
  EXPECT_EQ(docs[29].gold, 0);
  EXPECT_EQ(docs[29].choices[3], "leaves the plates in the sink for the fish.");
}

TEST(ReadersTest, PiqaSampleUsesTheDefaultLabelsFile) {
  std::vector<Doc> docs = ReadOrDie("piqa", Sample("piqa.jsonl"));
  ASSERT_THAT(docs, SizeIs(30));
  EXPECT_EQ(docs[0].fields.at("goal"), "How do I keep a cut apple from turning brown?");
  EXPECT_EQ(docs[0].gold, 1);
  // No preprocessing for PIQA: the trailing and double spaces stay.
  EXPECT_EQ(docs[1].fields.at("goal"), "flower pot");
  EXPECT_THAT(docs[1].choices,
              ElementsAre("fill with  soil and nails ", "fill with soil and seeds "));
  EXPECT_EQ(docs[1].gold, 1);
  EXPECT_EQ(docs[29].fields.at("goal"), "How do I keep a pot of pasta from boiling over?");
  EXPECT_EQ(docs[29].gold, 0);
  // The same file named explicitly gives the same labels.
  std::vector<Doc> again =
      ReadOrDie("piqa", Sample("piqa.jsonl"), {{"labels", Sample("piqa-labels.lst")}});
  ASSERT_THAT(again, SizeIs(30));
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(again[i].gold, docs[i].gold) << i;
}

TEST(ReadersTest, BoolqSample) {
  std::vector<Doc> docs = ReadOrDie("boolq", Sample("boolq.jsonl"));
  ASSERT_THAT(docs, SizeIs(30));
  EXPECT_EQ(docs[0].fields.at("question"), "can a lighthouse be seen during the day");
  EXPECT_THAT(docs[0].fields.at("passage"),
              ::testing::StartsWith("A lighthouse is a tower built near a coast"));
  EXPECT_EQ(docs[0].gold, 1);  // "answer": true
  EXPECT_TRUE(docs[0].choices.empty());
  EXPECT_EQ(docs[1].gold, 0);
  // BoolQ's ``...'' quoting is kept as is.
  EXPECT_THAT(docs[5].fields.at("passage"), HasSubstr("to ``fly'' underwater"));
  EXPECT_EQ(docs[29].fields.at("question"), "can a person sneeze with their eyes open");
  EXPECT_EQ(docs[29].gold, 1);
  EXPECT_EQ(docs[0].fields.size(), 2u);  // "title" is not a template field
}

TEST(ReadersTest, LambadaOpenaiSample) {
  std::vector<Doc> docs = ReadOrDie("lambada", Sample("lambada_openai.jsonl"));
  ASSERT_THAT(docs, SizeIs(30));
  EXPECT_EQ(docs[0].fields.at("target"), " key");
  EXPECT_THAT(docs[0].fields.at("context"),
              AllOf(::testing::StartsWith("Mara had carried the old brass key"),
                    ::testing::EndsWith("felt the cool metal, and slowly pulled out the")));
  EXPECT_EQ(docs[0].fields.at("context") + docs[0].fields.at("target"), docs[0].fields.at("text"));
  // Record 5 has a double space ("lake.  They"): kept in the context.
  EXPECT_THAT(docs[5].fields.at("context"), HasSubstr("went fishing at the lake.  They never"));
  EXPECT_EQ(docs[5].fields.at("target"), " lake");
  for (const Doc& d : docs) {
    EXPECT_EQ(d.fields.at("context") + d.fields.at("target"), d.fields.at("text")) << d.index;
    EXPECT_EQ(d.gold, -1);
  }
}

TEST(ReadersTest, LambadaStandardSample) {
  std::vector<Doc> docs = ReadOrDie("lambada_plain", Sample("lambada_standard.txt"));
  ASSERT_THAT(docs, SizeIs(30));
  EXPECT_EQ(docs[0].fields.at("target"), " key");
  EXPECT_THAT(docs[0].fields.at("context"),
              AllOf(::testing::StartsWith(
                        "mara had carried the old brass key in her coat pocket for eleven years ,"),
                    ::testing::EndsWith("felt the cool metal , and slowly pulled out the")));
  EXPECT_THAT(docs[1].fields.at("context"), HasSubstr("`` they 're on your head , '' leo said"));
  EXPECT_EQ(docs[29].fields.at("target"), " library");
  EXPECT_EQ(docs[29].id, "29");
}

TEST(ReadersTest, ReaderIdsAreSorted) {
  EXPECT_THAT(ReaderIds(), ElementsAre("arc", "boolq", "hellaswag", "hellaswag_llamacpp", "lambada",
                                       "lambada_plain", "piqa", "winogrande"));
}

// A JSON array of objects (HotpotQA's original release) reads like jsonl;
// errors name the record by its index.
TEST(ReadersTest, JsonArrayFilesAreReadAsRecords) {
  const std::string dir = testing::MakeTempDir("array");
  testing::WriteStringToFile(dir + "/a.json", "\n [{\"q\": \"x\"}, {\"q\": 2}]");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<JsonRecord> r, ReadJsonRecords(dir + "/a.json"));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(*r[0].String("q"), "x");
  EXPECT_THAT(r[1].String("q"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a.json: record 1: ")));
  testing::WriteStringToFile(dir + "/b.json", "[{\"q\": \"x\"}, 3]");
  EXPECT_THAT(ReadJsonRecords(dir + "/b.json"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("b.json: record 1: expected a JSON object")));
  testing::WriteStringToFile(dir + "/c.jsonl", "{\"q\": \"y\"}\n");
  FOCAL_ASSERT_OK_AND_ASSIGN(r, ReadJsonRecords(dir + "/c.jsonl"));
  EXPECT_EQ(*r[0].String("q"), "y");
}

// --- WinoGrande: lm-eval's split of the sentence at its blank ---------------

TEST(ReadersTest, WinograndeSplitsAtTheBlankAsLmEval) {
  const std::string path = testing::MakeTempDir("wg") + "/dev.jsonl";
  testing::WriteStringToFile(
      path, R"({"sentence": "Ann thanked Bo because _ \u00a0had helped. ", "option1": "Ann", )"
            R"("option2": "Bo", "answer": "2"})"
            "\n"
            R"({"qID": "x", "sentence": "_ won.", "option1": "A", "option2": "B", "answer": "1"})"
            "\n");
  FOCAL_ASSERT_OK_AND_ASSIGN(std::vector<Doc> docs, ReadDocs("winogrande", path, {}));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].fields.at("prefix"), "Ann thanked Bo because ");
  // Python's str.strip(): the no-break space goes too.
  EXPECT_EQ(docs[0].fields.at("continuation"), "had helped.");
  EXPECT_EQ(docs[0].choices, (std::vector<std::string>{"Ann", "Bo"}));
  EXPECT_EQ(docs[0].gold, 1);
  EXPECT_EQ(docs[1].fields.at("prefix"), "");
  EXPECT_EQ(docs[1].gold, 0);
  FOCAL_ASSERT_OK_AND_ASSIGN(
      docs, ReadDocs("winogrande", testing::SourcePath("datasets/samples/winogrande.jsonl"), {}));
  EXPECT_EQ(docs.size(), 30u);
}

TEST(ReadersTest, WinograndeWithoutABlankOrAnswerIsRefusedNamingTheLine) {
  const std::string path = testing::MakeTempDir("wg") + "/bad.jsonl";
  testing::WriteStringToFile(
      path, R"({"sentence": "no blank", "option1": "a", "option2": "b", "answer": "1"})"
            "\n");
  EXPECT_THAT(ReadDocs("winogrande", path, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("bad.jsonl:1"), HasSubstr("no blank"))));
  testing::WriteStringToFile(
      path, R"({"sentence": "a _ b", "option1": "a", "option2": "b", "answer": ""})"
            "\n");
  EXPECT_THAT(ReadDocs("winogrande", path, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("bad.jsonl:1"), HasSubstr("answer"))));
}

// --- HellaSwag original jsonl and lm-eval's preprocess() --------------------

TEST(ReadersTest, HellaswagOriginalJsonlIsPreprocessedLikeLmEval) {
  // Expected values computed with lm-eval's utils.py process_docs in Python.
  std::vector<Doc> docs =
      ReadOrDie("hellaswag", SourcePath("tests/datasets/testdata/hellaswag_original.jsonl"));
  ASSERT_THAT(docs, SizeIs(3));
  // capitalize() lower-cases the rest of ctx_b ("sHe then ADDS").
  EXPECT_EQ(docs[0].fields.at("query"),
            "Baking cookies: A woman stirs dough in a large bowl. She then adds chocolate chips");
  EXPECT_THAT(
      docs[0].choices,
      ElementsAre("and scoops the dough onto a tray.", "and throws the bowl out of the window.",
                  " and eats all of it.",  // strip() ran before the tag went
                  "and puts the tray in the oven. Bake for ten minutes."));
  EXPECT_EQ(docs[0].gold, 0);  // integer label
  // [header]/[title]/[step] tags, empty ctx_b, string label "2".
  EXPECT_EQ(docs[1].fields.at("query"),
            "Home and Garden: How to water a cactus. Check the soil first. Push a finger into "
            "the soil.");
  EXPECT_THAT(docs[1].choices, ElementsAre("If it is dry, water it.", " Water it  every day.",
                                           "Cactuses like ice water.", "Wait and check again."));
  EXPECT_EQ(docs[1].gold, 2);
  // Latin-1 letters are lower-cased too ("\xc3\x89MILE" -> "\xc3\xa9mile"); NBSP is stripped.
  EXPECT_EQ(docs[2].fields.at("query"),
            "Playing piano: A girl sits at a piano in a small caf\xc3\xa9. She plays a waltz by "
            "chopin and \xc3\xa9mile");
  EXPECT_THAT(docs[2].choices, ElementsAre("as people listen.", "plays loudly.", " closes the lid.",
                                           "and the crowd  cheers."));
  EXPECT_EQ(docs[2].gold, 1);
}

// Non-ASCII bytes are written as octal escapes where a hex escape would
// swallow a following letter ("\xa9C" is one escape).
TEST(TextUtilTest, PyCapitalize) {
  EXPECT_EQ(PyCapitalize(""), "");
  EXPECT_EQ(PyCapitalize("hELLO wORLD"), "Hello world");
  EXPECT_EQ(PyCapitalize("then"), "Then");
  EXPECT_EQ(PyCapitalize("1ABC"), "1abc");
  EXPECT_EQ(PyCapitalize("\"QUOTED\""), "\"quoted\"");
  EXPECT_EQ(PyCapitalize("\303\251COLE \303\200"), "\303\211cole \303\240");  // ÉCOLE À
  EXPECT_EQ(PyCapitalize("\xc3\x97X"), "\xc3\x97x");  // U+00D7 is not a letter
  // Other scripts are copied unchanged, never broken mid-sequence.
  EXPECT_EQ(PyCapitalize("\346\227\245\346\234\254ABC"), "\346\227\245\346\234\254abc");
  EXPECT_EQ(PyCapitalize("\xe2\x80\x9cHI\xe2\x80\x9d"), "\xe2\x80\x9chi\xe2\x80\x9d");
}

TEST(TextUtilTest, PyStrip) {
  EXPECT_EQ(PyStrip("  \t a b \n\r"), "a b");
  EXPECT_EQ(PyStrip("\x1cx\x1f\v\f"), "x");
  EXPECT_EQ(PyStrip("\xc2\xa0x\xe3\x80\x80"), "x");              // NBSP, ideographic space
  EXPECT_EQ(PyStrip("\xe2\x80\x89x\xe2\x80\xa8\xc2\x85"), "x");  // thin space, LS, NEL
  EXPECT_EQ(PyStrip("\xe2\x80\x8bx"), "\xe2\x80\x8bx");          // ZWSP is not whitespace
  EXPECT_EQ(PyStrip("   "), "");
}

TEST(TextUtilTest, HellaswagPreprocess) {
  EXPECT_EQ(HellaswagPreprocess("  a [title] b  "), "a. b");
  EXPECT_EQ(HellaswagPreprocess("a [title]"), "a. ");        // strip() comes first
  EXPECT_EQ(HellaswagPreprocess("x [a] y [b] z"), "x y z");  // non-greedy
  EXPECT_EQ(HellaswagPreprocess("[a [b] c]"), " c]");        // as re.sub does
  EXPECT_EQ(HellaswagPreprocess("open [bracket"), "open [bracket");
  EXPECT_EQ(HellaswagPreprocess("[a\nb] c"), "[a\nb] c");  // '.' stops at newlines
  EXPECT_EQ(HellaswagPreprocess("[]x"), "x");
  // One non-overlapping pass: 3 spaces -> 2, 4 -> 2, 5 -> 3.
  EXPECT_EQ(HellaswagPreprocess("a   b"), "a  b");
  EXPECT_EQ(HellaswagPreprocess("a    b"), "a  b");
  EXPECT_EQ(HellaswagPreprocess("a     b"), "a   b");
  EXPECT_EQ(HellaswagPreprocess("caf\xc3\xa9 [\xc3\xa9t\xc3\xa9] ok"), "caf\xc3\xa9 ok");
  // A URL in brackets (as in item 3505 of the full file).
  EXPECT_EQ(HellaswagPreprocess("Look for ideas on [www.example.org] and pick one"),
            "Look for ideas on and pick one");
}

TEST(TextUtilTest, SplitLastWordMatchesPythonSplitOnSpace) {
  auto split = [](const char* s) {
    LastWordSplit r = SplitLastWord(s);
    return std::vector<std::string>{r.context, r.target};
  };
  EXPECT_THAT(split("a b c"), ElementsAre("a b", " c"));
  EXPECT_THAT(split("a  b"), ElementsAre("a ", " b"));  // split(' ') keeps the empty word
  EXPECT_THAT(split("word"), ElementsAre("", " word"));
  EXPECT_THAT(split("a b "), ElementsAre("a b", " "));
  EXPECT_THAT(split("x\ny z"), ElementsAre("x\ny", " z"));  // only ' ' splits
  EXPECT_THAT(split("say \"hi.\""), ElementsAre("say", " \"hi.\""));
}

// --- Formats' variants -----------------------------------------------------

TEST(ReadersTest, ArcHuggingFaceLayoutAndExtraFields) {
  std::string path = TempFile(
      "arc_hf.jsonl", R"({"id": "h1", "question": "Q?", "choices": {"text": ["a", "b", "c"],)"
                      R"( "label": ["1", "2", "3"]}, "answerKey": "3", "extra": [1, {"x": null}]})"
                      "\n");
  std::vector<Doc> docs = ReadOrDie("arc", path);
  ASSERT_THAT(docs, SizeIs(1));
  EXPECT_EQ(docs[0].id, "h1");
  EXPECT_EQ(docs[0].fields.at("question"), "Q?");
  EXPECT_THAT(docs[0].choices, ElementsAre("a", "b", "c"));
  EXPECT_EQ(docs[0].gold, 2);
}

TEST(ReadersTest, ArcWithoutIdUsesTheIndexAndFiveChoicesAreFine) {
  std::string path = TempFile("arc5.jsonl", std::string(kArcLine) + "\n" +
                                                ArcRecord({"A", "B", "C", "D", "E"}, "E") + "\n");
  std::vector<Doc> docs = ReadOrDie("arc", path);
  ASSERT_THAT(docs, SizeIs(2));
  EXPECT_EQ(docs[0].id, "q1");
  EXPECT_EQ(docs[0].gold, 1);
  EXPECT_EQ(docs[1].id, "1");
  EXPECT_THAT(docs[1].choices, SizeIs(5));
  EXPECT_EQ(docs[1].gold, 4);
}

TEST(ReadersTest, PiqaLabelsInsideTheRecords) {
  std::string path = TempFile(
      "piqa_hf.jsonl", "{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 1}\n");
  std::vector<Doc> docs = ReadOrDie("piqa", path);  // no labels file needed
  ASSERT_THAT(docs, SizeIs(1));
  EXPECT_EQ(docs[0].gold, 1);
}

TEST(ReadersTest, BoolqLabelVariant) {
  std::string path =
      TempFile("boolq.jsonl",
               "{\"question\": \"q\", \"passage\": \"p\", \"label\": 1, \"idx\": 0}\n"
               "{\"question\": \"q\", \"passage\": \"p\", \"label\": 0}\n"
               "{\"question\": \"q\", \"passage\": \"p\", \"label\": 1, \"answer\": true}\n");
  std::vector<Doc> docs = ReadOrDie("boolq", path);
  ASSERT_THAT(docs, SizeIs(3));
  EXPECT_EQ(docs[0].gold, 1);
  EXPECT_EQ(docs[1].gold, 0);
  EXPECT_EQ(docs[2].gold, 1);
}

TEST(ReadersTest, LambadaPlainKeepsTheLineButItsTerminator) {
  std::string path = TempFile("plain.txt", "a  b c \n x y\r\nlast word\n\n\n");
  std::vector<Doc> docs = ReadOrDie("lambada_plain", path);
  ASSERT_THAT(docs, SizeIs(3));
  EXPECT_EQ(docs[0].fields.at("text"), "a  b c ");
  EXPECT_EQ(docs[0].fields.at("context"), "a  b c");
  EXPECT_EQ(docs[0].fields.at("target"), " ");
  EXPECT_EQ(docs[1].fields.at("text"), " x y");  // CRLF read as a line end
  EXPECT_EQ(docs[1].fields.at("context"), " x");
  EXPECT_EQ(docs[2].fields.at("target"), " word");
}

TEST(ReadersTest, TrailingBlankLinesAreIgnored) {
  std::string path = TempFile("arc.jsonl", std::string(kArcLine) + "\n\n  \n");
  EXPECT_THAT(ReadOrDie("arc", path), SizeIs(1));
  // No final newline at all is fine too.
  path = TempFile("arc.jsonl", kArcLine);
  EXPECT_THAT(ReadOrDie("arc", path), SizeIs(1));
}

}  // namespace
}  // namespace focal::datasets
