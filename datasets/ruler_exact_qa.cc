// SPDX-License-Identifier: Apache-2.0
// RULER's qa_1 (SQuAD v2.0 dev, answerable questions) and qa_2 (HotpotQA
// dev), draw for draw as data/synthetic/qa.py builds them.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "base/json.h"
#include "base/py_random.h"
#include "base/status_macros.h"
#include "datasets/ruler_common.h"
#include "datasets/ruler_exact.h"
#include "datasets/ruler_exact_internal.h"

namespace focal::datasets::ruler_exact {
namespace {

using ::focal::PyRandom;

constexpr absl::string_view kQaPrompt =
    "Answer the question based on the given documents. Only give me the answer and do not "
    "output any other words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the "
    "question based on the given documents. Only give me the answer and do not output any "
    "other words.\n\nQuestion: {query} Answer:";

struct Qa {
  std::string query;
  std::vector<std::string> outputs;
  std::vector<int64_t> context, more;
};

struct QaData {
  std::vector<std::string> docs;  // sorted, unique
  std::vector<Qa> qas;
};

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

const JsonValue* Field(const JsonValue& v, absl::string_view key, JsonValue::Type type) {
  const JsonValue* f = v.Find(key);
  return f != nullptr && f->type() == type ? f : nullptr;
}

// Sorted unique docs and an index from text to position.
std::map<std::string, int64_t> Index(std::vector<std::string>& docs) {
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < docs.size(); ++i) index.emplace(docs[i], static_cast<int64_t>(i));
  return index;
}

absl::StatusOr<QaData> ReadSquad(absl::string_view contents) {
  constexpr absl::string_view kFile = "ruler/squad.json";
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(contents, kFile));
  const JsonValue* data = Field(root, "data", JsonValue::Type::kArray);
  if (data == nullptr) return Bad(kFile, "no \"data\" array");
  QaData out;
  for (const JsonValue& d : data->array()) {
    const JsonValue* ps = Field(d, "paragraphs", JsonValue::Type::kArray);
    if (ps == nullptr) return Bad(kFile, "an article without \"paragraphs\"");
    for (const JsonValue& p : ps->array()) {
      const JsonValue* c = Field(p, "context", JsonValue::Type::kString);
      if (c == nullptr) return Bad(kFile, "a paragraph without \"context\"");
      out.docs.push_back(c->string_value());
    }
  }
  const std::map<std::string, int64_t> index = Index(out.docs);
  for (const JsonValue& d : data->array()) {
    std::vector<int64_t> article;
    for (const JsonValue& p : d.Find("paragraphs")->array()) {
      article.push_back(index.at(p.Find("context")->string_value()));
    }
    for (const JsonValue& p : d.Find("paragraphs")->array()) {
      const int64_t own = index.at(p.Find("context")->string_value());
      const JsonValue* qas = Field(p, "qas", JsonValue::Type::kArray);
      if (qas == nullptr) return Bad(kFile, "a paragraph without \"qas\"");
      for (const JsonValue& q : qas->array()) {
        const JsonValue* impossible = Field(q, "is_impossible", JsonValue::Type::kBool);
        const JsonValue* question = Field(q, "question", JsonValue::Type::kString);
        const JsonValue* answers = Field(q, "answers", JsonValue::Type::kArray);
        if (impossible == nullptr || question == nullptr || answers == nullptr) {
          return Bad(kFile, "a question without is_impossible, question or answers");
        }
        if (impossible->bool_value()) continue;
        Qa qa;
        qa.query = question->string_value();
        for (const JsonValue& a : answers->array()) {
          const JsonValue* t = Field(a, "text", JsonValue::Type::kString);
          if (t == nullptr) return Bad(kFile, "an answer without \"text\"");
          qa.outputs.push_back(t->string_value());
        }
        qa.context = {own};
        for (int64_t i : article) {
          if (i != own) qa.more.push_back(i);
        }
        out.qas.push_back(std::move(qa));
      }
    }
  }
  return out;
}

absl::StatusOr<QaData> ReadHotpotQa(absl::string_view contents) {
  static constexpr absl::string_view kFile = "ruler/hotpotqa.json";
  FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(contents, kFile));
  if (!root.is_array()) return Bad(kFile, "not a JSON array");
  auto doc_text = [](const JsonValue& item) -> absl::StatusOr<std::string> {
    if (!item.is_array() || item.array().size() != 2 || !item.array()[0].is_string() ||
        !item.array()[1].is_array()) {
      return Bad(kFile, "a context entry that is not [title, [sentences]]");
    }
    std::string text = absl::StrCat(item.array()[0].string_value(), "\n");
    for (const JsonValue& s : item.array()[1].array()) {
      if (!s.is_string()) return Bad(kFile, "a sentence that is not a string");
      absl::StrAppend(&text, s.string_value());
    }
    return text;
  };
  QaData out;
  for (const JsonValue& d : root.array()) {
    const JsonValue* ctx = Field(d, "context", JsonValue::Type::kArray);
    if (ctx == nullptr) return Bad(kFile, "a record without \"context\"");
    for (const JsonValue& item : ctx->array()) {
      FOCAL_ASSIGN_OR_RETURN(std::string t, doc_text(item));
      out.docs.push_back(std::move(t));
    }
  }
  const std::map<std::string, int64_t> index = Index(out.docs);
  for (const JsonValue& d : root.array()) {
    const JsonValue* q = Field(d, "question", JsonValue::Type::kString);
    const JsonValue* a = Field(d, "answer", JsonValue::Type::kString);
    if (q == nullptr || a == nullptr) return Bad(kFile, "a record without question or answer");
    Qa qa;
    qa.query = q->string_value();
    qa.outputs = {a->string_value()};
    for (const JsonValue& item : d.Find("context")->array()) {
      FOCAL_ASSIGN_OR_RETURN(std::string t, doc_text(item));
      qa.context.push_back(index.at(t));
    }
    out.qas.push_back(std::move(qa));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Sample>> GenerateQa(absl::string_view task, bool squad, int64_t max_len,
                                               int64_t num, uint64_t seed, const Sources& src,
                                               const CountTokens& count) {
  FOCAL_ASSIGN_OR_RETURN(QaData data,
                         squad ? ReadSquad(src.squad_json) : ReadHotpotQa(src.hotpotqa_json));
  if (num > static_cast<int64_t>(data.qas.size())) {
    return absl::InvalidArgumentError(absl::StrCat(task, ": ", num, " samples asked, the file has ",
                                                   data.qas.size(), " questions"));
  }
  std::vector<std::string>& docs = data.docs;  // shuffled in place when all are used, as RULER
  const int64_t n_docs = static_cast<int64_t>(docs.size());
  PyRandom rng(seed);
  auto generate =
      [&](int64_t index,
          int64_t num_docs) -> absl::StatusOr<std::pair<std::string, std::vector<std::string>>> {
    const Qa& qa = data.qas[index];
    const int64_t nc = static_cast<int64_t>(qa.context.size());
    const int64_t nm = static_cast<int64_t>(qa.more.size());
    std::vector<const std::string*> picked;
    if (num_docs < n_docs) {
      std::vector<int64_t> ids = qa.context;
      if (num_docs - nc > nm) {
        ids.insert(ids.end(), qa.more.begin(), qa.more.end());
        std::vector<bool> taken(n_docs, false);
        for (int64_t i : ids) taken[i] = true;
        std::vector<int64_t> addition;
        for (int64_t i = 0; i < n_docs; ++i) {
          if (!taken[i]) addition.push_back(i);
        }
        const int64_t k = std::max<int64_t>(0, num_docs - nc - nm);
        if (k > static_cast<int64_t>(addition.size())) {
          return absl::OutOfRangeError("Sample larger than population");
        }
        for (int64_t j : ruler::SampleIndices(rng, static_cast<int64_t>(addition.size()), k)) {
          ids.push_back(addition[j]);
        }
      } else {
        const int64_t k = num_docs - nc;
        if (k < 0 || k > nm) return absl::OutOfRangeError("Sample larger than population");
        for (int64_t j : ruler::SampleIndices(rng, nm, k)) ids.push_back(qa.more[j]);
      }
      for (int64_t i : ids) picked.push_back(&docs[i]);
      PyRandom fresh(seed);
      ruler::Shuffle(fresh, picked);
    } else {
      PyRandom fresh(seed);
      ruler::Shuffle(fresh, docs);
      for (const std::string& d : docs) picked.push_back(&d);
    }
    std::string context;
    for (size_t i = 0; i < picked.size(); ++i) {
      absl::StrAppend(&context, i == 0 ? "" : "\n\n", "Document ", i + 1, ":\n", *picked[i]);
    }
    std::string input =
        ruler::FormatTemplate(kQaPrompt, {{"context", context}, {"query", qa.query}});
    return std::make_pair(std::move(input), qa.outputs);
  };

  const int64_t inc = 10, t = 32;
  int64_t num_docs = inc, total = 0;
  while (total + t < max_len) {
    FOCAL_ASSIGN_OR_RETURN(auto made, generate(0, num_docs));
    FOCAL_ASSIGN_OR_RETURN(total, count(absl::StrCat(made.first, " ", PyListRepr(made.second))));
    if (total + t > max_len) {
      num_docs -= inc;
      break;
    }
    num_docs += inc;
    if (num_docs > n_docs) {
      num_docs = n_docs;
      break;
    }
  }
  std::vector<Sample> out;
  for (int64_t index = 0; index < num; ++index) {
    FOCAL_ASSIGN_OR_RETURN(std::vector<Sample> one,
                           SampleLoop(
                               task, 1, num_docs, inc, max_len, t,
                               [&](int64_t units) { return generate(index, units); }, count));
    one[0].index = index;
    out.push_back(std::move(one[0]));
  }
  return out;
}

absl::StatusOr<Sources> LoadSources(absl::string_view ruler_dir) {
  std::map<std::string, std::string> files;
  for (const auto& [role, rel] :
       std::map<std::string, std::string>{{"nouns", "wonderwords/nounlist.txt"},
                                          {"adjectives", "wonderwords/adjectivelist.txt"},
                                          {"verbs", "wonderwords/verblist.txt"},
                                          {"haystack", "PaulGrahamEssays.json"},
                                          {"sentences", "essay_sentences.json"},
                                          {"squad", "squad.json"},
                                          {"hotpotqa", "hotpotqa.json"}}) {
    files[role] = absl::StrCat(ruler_dir, "/", rel);
  }
  return LoadSources(files);
}

absl::StatusOr<Sources> LoadSources(const std::map<std::string, std::string>& files) {
  Sources src;
  auto read = [&](const std::string& path) -> absl::StatusOr<std::string> {
    auto contents = ReadFile(path);
    if (!contents.ok() && absl::IsNotFound(contents.status())) {
      return absl::NotFoundError(absl::StrCat(path, " is missing: run bash scripts/fetch_data.sh"));
    }
    return contents;
  };
  auto lines = [&](const std::string& path) -> absl::StatusOr<std::vector<std::string>> {
    FOCAL_ASSIGN_OR_RETURN(std::string text, read(path));
    // Python's readlines() + rstrip(), as wonderwords reads its lists.
    std::vector<std::string> out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      out.emplace_back(absl::StripTrailingAsciiWhitespace(line));
    }
    if (!text.empty() && text.back() == '\n') out.pop_back();
    return out;
  };
  for (auto [role, list] :
       {std::pair{"nouns", &src.nouns}, std::pair{"adjectives", &src.adjectives},
        std::pair{"verbs", &src.verbs}}) {
    if (auto it = files.find(role); it != files.end()) {
      FOCAL_ASSIGN_OR_RETURN(*list, lines(it->second));
    }
  }
  if (auto it = files.find("haystack"); it != files.end()) {
    FOCAL_ASSIGN_OR_RETURN(std::string text, read(it->second));
    FOCAL_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, it->second));
    const JsonValue* essay = Field(doc, "text", JsonValue::Type::kString);
    if (essay == nullptr) return Bad(it->second, "no \"text\" string");
    src.essay = essay->string_value();
  }
  if (auto it = files.find("sentences"); it != files.end()) {
    const std::string& path = it->second;
    FOCAL_ASSIGN_OR_RETURN(std::string text, read(path));
    FOCAL_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text, path));
    const JsonValue* spans = Field(doc, "spans", JsonValue::Type::kArray);
    if (spans == nullptr) return Bad(path, "no \"spans\" array");
    int64_t last = 0;
    for (const JsonValue& s : spans->array()) {
      if (!s.is_array() || s.array().size() != 2 || !s.array()[0].is_integer() ||
          !s.array()[1].is_integer() || s.array()[0].integer() < last ||
          s.array()[1].integer() < s.array()[0].integer()) {
        return Bad(path, absl::StrCat("span ", src.essay_sentences.size(),
                                      " is not [begin, end] in increasing order"));
      }
      src.essay_sentences.emplace_back(s.array()[0].integer(), s.array()[1].integer());
      last = s.array()[1].integer();
    }
  }
  if (auto it = files.find("squad"); it != files.end()) {
    FOCAL_ASSIGN_OR_RETURN(src.squad_json, read(it->second));
  }
  if (auto it = files.find("hotpotqa"); it != files.end()) {
    FOCAL_ASSIGN_OR_RETURN(src.hotpotqa_json, read(it->second));
  }
  return src;
}

std::string PyListRepr(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t n = 0; n < items.size(); ++n) {
    const std::string& s = items[n];
    const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char quote = dq ? '"' : '\'';
    absl::StrAppend(&out, n == 0 ? "" : ", ", std::string(1, quote));
    for (size_t i = 0; i < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        if (c == static_cast<unsigned char>(quote) || c == '\\') {
          absl::StrAppend(&out, "\\", std::string(1, static_cast<char>(c)));
        } else if (c == '\n') {
          out += "\\n";
        } else if (c == '\r') {
          out += "\\r";
        } else if (c == '\t') {
          out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
          absl::StrAppend(&out, absl::StrFormat("\\x%02x", c));
        } else {
          out.push_back(static_cast<char>(c));
        }
        ++i;
        continue;
      }
      // Non-ASCII: Python keeps printable characters; the non-printable
      // ones RULER's data can hold (C1 controls, NBSP, soft hyphen, the
      // format and separator spaces, BOM) are escaped.
      const int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
      for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
      const bool unprintable = (cp >= 0x80 && cp <= 0xa0) || cp == 0xad ||
                               (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
                               (cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff ||
                               (cp >= 0xe000 && cp <= 0xf8ff);
      if (!unprintable) {
        out.append(s, i, len);
      } else if (cp < 0x100) {
        absl::StrAppend(&out, absl::StrFormat("\\x%02x", cp));
      } else {
        absl::StrAppend(&out, absl::StrFormat("\\u%04x", cp));
      }
      i += len;
    }
    out.push_back(quote);
  }
  out += "]";
  return out;
}

}  // namespace focal::datasets::ruler_exact
