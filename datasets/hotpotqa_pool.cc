// SPDX-License-Identifier: Apache-2.0
#include "datasets/hotpotqa_pool.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/load_once.h"
#include "base/status_macros.h"
#include "datasets/reader_util.h"

namespace focal::datasets {
namespace {

absl::Status ContextError(const JsonRecord& r, size_t k) {
  return r.FieldError(absl::StrCat("context[", k, "]"),
                      "must be a [title, [sentence, ...]] pair of a string and strings");
}

}  // namespace

absl::StatusOr<HotpotQaPool> ReadHotpotQaPool(absl::string_view path) {
  // jsonl, or the original release's one JSON array (RULER's hotpotqa.json).
  FOCAL_ASSIGN_OR_RETURN(std::vector<JsonRecord> records, ReadJsonRecords(path));
  HotpotQaPool pool;
  std::map<std::pair<std::string, std::string>, int64_t> unique_ids;
  for (const JsonRecord& r : records) {
    HotpotQaQuestion q;
    FOCAL_ASSIGN_OR_RETURN(q.id, r.String("_id"));
    FOCAL_ASSIGN_OR_RETURN(q.question, r.String("question"));
    FOCAL_ASSIGN_OR_RETURN(q.answer, r.String("answer"));
    if (const JsonValue* type = r.Find("type"); type != nullptr && type->is_string()) {
      q.type = type->string_value();
    }
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* facts, r.Get("supporting_facts"));
    if (!facts->is_array()) return r.FieldError("supporting_facts", "must be an array");
    std::set<std::string> gold_titles;
    for (size_t k = 0; k < facts->array().size(); ++k) {
      const JsonValue& f = facts->array()[k];
      if (!f.is_array() || f.array().size() != 2 || !f.array()[0].is_string() ||
          !f.array()[1].is_integer()) {
        return r.FieldError(absl::StrCat("supporting_facts[", k, "]"),
                            "must be a [title, sentence index] pair");
      }
      gold_titles.insert(f.array()[0].string_value());
    }
    FOCAL_ASSIGN_OR_RETURN(const JsonValue* context, r.Get("context"));
    if (!context->is_array()) return r.FieldError("context", "must be an array");
    std::set<std::string> found;
    for (size_t k = 0; k < context->array().size(); ++k) {
      const JsonValue& c = context->array()[k];
      if (!c.is_array() || c.array().size() != 2 || !c.array()[0].is_string() ||
          !c.array()[1].is_array()) {
        return ContextError(r, k);
      }
      HotpotQaParagraph p;
      p.title = c.array()[0].string_value();
      for (const JsonValue& s : c.array()[1].array()) {
        if (!s.is_string()) return ContextError(r, k);
        p.text += s.string_value();
      }
      std::pair<std::string, std::string> key(p.title, p.text);
      auto [it, inserted] =
          unique_ids.try_emplace(std::move(key), static_cast<int64_t>(pool.unique.size()));
      const int64_t index = static_cast<int64_t>(pool.paragraphs.size());
      if (inserted) pool.unique.push_back(index);
      p.unique_id = it->second;
      q.titles.insert(p.title);
      if (gold_titles.count(p.title)) {
        q.gold.push_back(index);
        found.insert(p.title);
      } else {
        q.own.push_back(index);
      }
      pool.paragraphs.push_back(std::move(p));
    }
    // A question whose supporting paragraphs are not all in its context cannot
    // be answered from it: skipped (and counted), never padded with a guess.
    if (gold_titles.empty() || found.size() != gold_titles.size()) {
      ++pool.skipped_missing_gold;
      continue;
    }
    pool.questions.push_back(std::move(q));
  }
  return pool;
}

absl::StatusOr<std::shared_ptr<const HotpotQaPool>> SharedHotpotQaPool(const std::string& path) {
  static auto* pools = new LoadOnce<std::string, HotpotQaPool>();
  return pools->Get(path, [&] { return ReadHotpotQaPool(path); });
}

}  // namespace focal::datasets
