// SPDX-License-Identifier: Apache-2.0
// RULER's qa_1 (SQuAD) and qa_2 (HotpotQA) (scripts/data/synthetic/qa.py).
//
// Pool: every document of the file, deduplicated and sorted (RULER's
// sorted(set(...))); SQuAD documents are paragraph contexts, HotpotQA ones
// title + "\n" + "".join(sentences). Questions in file order:
//  * SQuAD: skipped when "is_impossible" is true (SQuAD v2; XQuAD has none)
//    or when it has no answer; gold = its paragraph; "more" = the other
//    paragraphs of its article. Golds: every answer text.
//  * HotpotQA: gold = the record's paragraphs whose title is in
//    supporting_facts, "more" = its other paragraphs (RULER makes all ten
//    gold; see ruler.h). A record whose context lacks a supporting-fact
//    paragraph, or has no context, is skipped. Gold: the answer.
// Sample i asks usable question i (from the start again past the end).
//
// Documents for n slots (haystack unit: documents), with the sample's
// generator r: when n < pool size, gold + "more" + r.sample(the other
// documents, rest) if "more" does not fill the rest, else gold +
// r.sample("more", n - #gold); when n >= pool size, the whole pool repeated
// in order and cut to n (RULER does the same; meta "docs_repeated"). Then a
// fresh random.Random(seed) shuffles them, and they are rendered
// "Document {i}:\n{text}" (i from 1) joined by "\n\n".
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/status_macros.h"
#include "datasets/reader_util.h"
#include "datasets/ruler_common.h"

namespace focal::datasets::ruler {
namespace {

struct QaItem {
  std::string id;
  std::string question;
  std::vector<std::string> answers;
  std::vector<int64_t> gold;  // document indices
  std::vector<int64_t> more;  // same article / same record, not gold
};

struct QaPool {
  std::vector<std::string> docs;  // sorted, unique
  std::vector<QaItem> items;
  int64_t skipped = 0;

  // Sorts and deduplicates docs (call once, before DocIndex).
  void Finish() {
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  }
  int64_t DocIndex(const std::string& text) const {
    return std::lower_bound(docs.begin(), docs.end(), text) - docs.begin();
  }
};

// Appends `i` unless it is in `v` or in `exclude`.
void AddUnique(std::vector<int64_t>& v, int64_t i, const std::vector<int64_t>& exclude = {}) {
  if (std::find(v.begin(), v.end(), i) == v.end() &&
      std::find(exclude.begin(), exclude.end(), i) == exclude.end()) {
    v.push_back(i);
  }
}

absl::Status Malformed(absl::string_view path, absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", where, ": ", what));
}

const JsonValue* Member(const JsonValue& obj, absl::string_view key, JsonValue::Type type) {
  const JsonValue* v = obj.is_object() ? obj.Find(key) : nullptr;
  return v != nullptr && v->type() == type ? v : nullptr;
}

absl::StatusOr<QaPool> ReadSquad(const std::string& path) {
  FOCAL_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(contents, path));
  const JsonValue* data = Member(root, "data", JsonValue::Type::kArray);
  if (data == nullptr) return Malformed(path, "top level", "needs a \"data\" array (SQuAD json)");
  QaPool pool;
  // Two passes: the sorted pool first, then questions with indices into it.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t a = 0; a < data->array().size(); ++a) {
      const JsonValue& article = data->array()[a];
      const std::string where_a = absl::StrCat("data[", a, "]");
      const JsonValue* paragraphs = Member(article, "paragraphs", JsonValue::Type::kArray);
      if (paragraphs == nullptr) return Malformed(path, where_a, "needs a \"paragraphs\" array");
      std::vector<int64_t> article_docs;
      for (size_t p = 0; p < paragraphs->array().size(); ++p) {
        const JsonValue& para = paragraphs->array()[p];
        const JsonValue* context = Member(para, "context", JsonValue::Type::kString);
        if (context == nullptr) {
          return Malformed(path, absl::StrCat(where_a, ".paragraphs[", p, "]"),
                           "needs a \"context\" string");
        }
        if (pass == 0) {
          pool.docs.push_back(context->string_value());
        } else {
          AddUnique(article_docs, pool.DocIndex(context->string_value()));
        }
      }
      if (pass == 0) continue;
      for (size_t p = 0; p < paragraphs->array().size(); ++p) {
        const JsonValue& para = paragraphs->array()[p];
        const std::string where_p = absl::StrCat(where_a, ".paragraphs[", p, "]");
        const int64_t doc =
            pool.DocIndex(Member(para, "context", JsonValue::Type::kString)->string_value());
        const JsonValue* qas = Member(para, "qas", JsonValue::Type::kArray);
        if (qas == nullptr) return Malformed(path, where_p, "needs a \"qas\" array");
        for (size_t q = 0; q < qas->array().size(); ++q) {
          const JsonValue& qa = qas->array()[q];
          const std::string where_q = absl::StrCat(where_p, ".qas[", q, "]");
          const JsonValue* question = Member(qa, "question", JsonValue::Type::kString);
          const JsonValue* answers = Member(qa, "answers", JsonValue::Type::kArray);
          if (question == nullptr || answers == nullptr) {
            return Malformed(path, where_q, "needs a \"question\" string and an \"answers\" array");
          }
          const JsonValue* impossible = Member(qa, "is_impossible", JsonValue::Type::kBool);
          QaItem item;
          for (size_t k = 0; k < answers->array().size(); ++k) {
            const JsonValue* text = Member(answers->array()[k], "text", JsonValue::Type::kString);
            if (text == nullptr) {
              return Malformed(path, absl::StrCat(where_q, ".answers[", k, "]"),
                               "needs a \"text\" string");
            }
            item.answers.push_back(text->string_value());
          }
          if ((impossible != nullptr && impossible->bool_value()) || item.answers.empty()) {
            ++pool.skipped;
            continue;
          }
          if (const JsonValue* id = Member(qa, "id", JsonValue::Type::kString)) {
            item.id = id->string_value();
          }
          item.question = question->string_value();
          item.gold = {doc};
          for (int64_t d : article_docs) AddUnique(item.more, d, item.gold);
          pool.items.push_back(std::move(item));
        }
      }
    }
    if (pass == 0) pool.Finish();
  }
  return pool;
}

// One HotpotQA context paragraph: [title, [sentence, ...]].
absl::StatusOr<std::pair<std::string, std::string>> HotpotParagraph(const JsonRecord& r,
                                                                    const JsonValue& v, size_t k) {
  const auto error = [&] {
    return r.FieldError(absl::StrCat("context[", k, "]"),
                        "must be a [title, [sentence, ...]] pair of a string and strings");
  };
  if (!v.is_array() || v.array().size() != 2 || !v.array()[0].is_string() ||
      !v.array()[1].is_array()) {
    return error();
  }
  std::string text = absl::StrCat(v.array()[0].string_value(), "\n");
  for (const JsonValue& s : v.array()[1].array()) {
    if (!s.is_string()) return error();
    absl::StrAppend(&text, s.string_value());
  }
  return std::make_pair(v.array()[0].string_value(), std::move(text));
}

absl::StatusOr<QaPool> ReadHotpotQa(const std::string& path) {
  // jsonl, or the original release's one JSON array (RULER's hotpotqa.json).
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonRecords(path));
  QaPool pool;
  // (title, doc text) per record, then the sorted pool.
  std::vector<std::vector<std::pair<std::string, std::string>>> contexts(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* context, records[i].Get("context"));
    if (!context->is_array()) return records[i].FieldError("context", "must be an array");
    for (size_t k = 0; k < context->array().size(); ++k) {
      FOCAL_ASSIGN_OR_RETURN(auto para, HotpotParagraph(records[i], context->array()[k], k));
      pool.docs.push_back(para.second);
      contexts[i].push_back(std::move(para));
    }
  }
  pool.Finish();
  for (size_t i = 0; i < records.size(); ++i) {
    const JsonRecord& r = records[i];
    QaItem item;
    FOCAL_ASSIGN_OR_RETURN(item.question, r.String("question"));
    FOCAL_ASSIGN_OR_RETURN(std::string answer, r.String("answer"));
    item.answers = {std::move(answer)};
    if (r.Find("_id") != nullptr) {
      FOCAL_ASSIGN_OR_RETURN(item.id, r.String("_id"));
    }
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* facts, r.Get("supporting_facts"));
    if (!facts->is_array()) return r.FieldError("supporting_facts", "must be an array");
    std::vector<std::string> titles;
    for (size_t k = 0; k < facts->array().size(); ++k) {
      const JsonValue& f = facts->array()[k];
      if (!f.is_array() || f.array().empty() || !f.array()[0].is_string()) {
        return r.FieldError(absl::StrCat("supporting_facts[", k, "]"),
                            "must be a [title, sentence index] pair");
      }
      if (std::find(titles.begin(), titles.end(), f.array()[0].string_value()) == titles.end()) {
        titles.push_back(f.array()[0].string_value());
      }
    }
    bool complete = !titles.empty();
    for (const std::string& t : titles) {
      bool found = false;
      for (const auto& [title, text] : contexts[i]) found = found || title == t;
      complete = complete && found;
    }
    if (!complete) {
      ++pool.skipped;
      continue;
    }
    for (const auto& [title, text] : contexts[i]) {
      const bool gold = std::find(titles.begin(), titles.end(), title) != titles.end();
      if (gold) AddUnique(item.gold, pool.DocIndex(text));
    }
    for (const auto& [title, text] : contexts[i])
      AddUnique(item.more, pool.DocIndex(text), item.gold);
    pool.items.push_back(std::move(item));
  }
  return pool;
}

class QaGenerator {
 public:
  QaGenerator(const TaskConfig& task, const GeneratorOptions& options, QaPool pool)
      : task_(task), options_(options), pool_(std::move(pool)) {}

  const QaItem& Item(int64_t index) const {
    return pool_.items[index % static_cast<int64_t>(pool_.items.size())];
  }

  absl::StatusOr<Candidate> Render(int64_t index, int64_t n) const {
    const QaItem& item = Item(index);
    const int64_t num_items = static_cast<int64_t>(pool_.items.size());
    const int64_t pool_size = static_cast<int64_t>(pool_.docs.size());
    const int64_t num_gold = static_cast<int64_t>(item.gold.size());
    const int64_t num_more = static_cast<int64_t>(item.more.size());
    PyRandom r(SampleSeed(options_.seed, task_.name, index));
    std::vector<int64_t> docs = item.gold;
    std::string fill;
    if (n < pool_size) {
      if (n - num_gold > num_more) {
        docs.insert(docs.end(), item.more.begin(), item.more.end());
        std::vector<int64_t> others;
        for (int64_t d = 0; d < pool_size; ++d) {
          if (std::find(docs.begin(), docs.end(), d) == docs.end()) others.push_back(d);
        }
        for (int64_t j :
             SampleIndices(r, static_cast<int64_t>(others.size()), n - num_gold - num_more)) {
          docs.push_back(others[j]);
        }
        fill = "own distractors, then random other documents";
      } else {
        for (int64_t j : SampleIndices(r, num_more, n - num_gold)) docs.push_back(item.more[j]);
        fill = "own distractors";
      }
    } else {
      // The pool cannot fill n slots without repeats: RULER then uses the
      // whole pool, repeated in order, cut to n (gold documents included).
      docs.clear();
      for (int64_t j = 0; j < n; ++j) docs.push_back(j % pool_size);
      fill = n > pool_size ? "the whole pool, repeated" : "the whole pool";
    }
    PyRandom fixed(options_.seed);  // RULER: random.Random(args.random_seed).shuffle
    Shuffle(fixed, docs);
    std::string context;
    std::vector<int64_t> gold_positions;
    for (size_t j = 0; j < docs.size(); ++j) {
      absl::StrAppend(&context, j == 0 ? "" : "\n\n", "Document ", j + 1, ":\n",
                      pool_.docs[docs[j]]);
      if (std::find(item.gold.begin(), item.gold.end(), docs[j]) != item.gold.end()) {
        gold_positions.push_back(static_cast<int64_t>(j) + 1);
      }
    }
    Candidate c;
    c.input = FormatTemplate(absl::StrCat(kQaTemplate, kQaAnswerPrefix),
                             {{"context", context}, {"query", item.question}});
    c.outputs = item.answers;
    c.meta["dataset"] = task_.dataset == QaDataset::kSquad ? "squad" : "hotpotqa";
    c.meta["question_index"] = absl::StrCat(index % num_items);
    c.meta["question_round"] = absl::StrCat(index / num_items);
    if (!item.id.empty()) c.meta["question_id"] = item.id;
    c.meta["num_docs"] = absl::StrCat(n);
    c.meta["gold_docs"] = JoinInts(gold_positions);
    c.meta["pool_docs"] = absl::StrCat(pool_size);
    c.meta["docs_repeated"] = n > pool_size ? "true" : "false";
    c.meta["fill"] = fill;
    c.meta["questions_usable"] = absl::StrCat(num_items);
    c.meta["questions_skipped"] = absl::StrCat(pool_.skipped);
    return c;
  }

 private:
  const TaskConfig& task_;
  const GeneratorOptions& options_;
  QaPool pool_;
};

}  // namespace

absl::StatusOr<std::vector<GenerationSample>> MakeQaSamples(const TaskConfig& task, int64_t length,
                                                            const GeneratorOptions& options) {
  const bool squad = task.dataset == QaDataset::kSquad;
  const std::string path =
      squad ? DataPath(options.squad, "datasets/samples/squad_sample.json")
            : DataPath(options.hotpotqa, "datasets/samples/hotpotqa_sample.jsonl");
  FOCAL_ASSIGN_OR_RETURN(QaPool pool, squad ? ReadSquad(path) : ReadHotpotQa(path));
  if (pool.items.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": no usable question (", pool.skipped,
        squad ? " unanswerable or without answers)"
              : " skipped: no context or a supporting-fact paragraph missing from it)"));
  }
  const QaGenerator gen(task, options, std::move(pool));
  FamilyPlan plan;
  plan.render = [&](int64_t index, int64_t n) { return gen.Render(index, n); };
  plan.min_units = [&](int64_t index) { return static_cast<int64_t>(gen.Item(index).gold.size()); };
  plan.probe_units = 10;  // RULER's step
  plan.unit_name = "documents";
  plan.exact = true;  // whole documents: stop only when one more does not fit
  return BuildSamples(task, length, options, plan);
}

}  // namespace focal::datasets::ruler
