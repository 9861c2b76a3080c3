// SPDX-License-Identifier: Apache-2.0
// Shared by the RULER test sources (ruler_test*.cc, one binary): the
// stories260K tokenizer, feasibility of each (task, length), and the samples
// of every (task, length), built once for the whole binary.
#ifndef FOCAL_TESTS_DATASETS_RULER_TEST_UTIL_H_
#define FOCAL_TESTS_DATASETS_RULER_TEST_UTIL_H_

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "datasets/ruler.h"
#include "datasets/ruler_common.h"
#include "model/sentencepiece_tokenizer.h"
#include "model/tokenizer.h"
#include "re2/re2.h"
#include "tasks/metric_registry.h"
#include "tasks/ruler_metrics.h"
#include "tasks/task_registry.h"
#include "tests/testing/test_util.h"

namespace focal::datasets {

// Test-only header: the RULER tests use these names unqualified.
using ::focal::testing::MakeTempDir;
using ::focal::testing::MatchesGolden;
using ::focal::testing::SourcePath;
using ::focal::testing::StatusIs;
using ::focal::testing::Stories260KDir;
using ::focal::testing::WriteStringToFile;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

inline constexpr char kGoldenDir[] = "ruler/";  // under tests/testdata/golden
inline constexpr int64_t kSamples = 3;
inline const int64_t kFitLengths[] = {1024, 2048, 4096, 8192, 16384};

inline bool Feasible(const std::string& task, int64_t length) {
  static const std::set<std::pair<std::string, int64_t>> kTooShort = {
      {"ruler_vt", 1024}, {"ruler_cwe", 1024}, {"ruler_cwe", 4096}};
  return kTooShort.count({task, length}) == 0;
}

inline int64_t GoldenLength(const std::string& task) { return Feasible(task, 1024) ? 1024 : 2048; }

inline const model::Tokenizer& Tok() {
  static const model::Tokenizer* tok = [] {
    auto t = model::SentencePieceTokenizer::Load(Stories260KDir() + "/tokenizer.model");
    if (!t.ok()) {
      std::cerr << t.status() << "\n";
      std::abort();
    }
    return t->release();
  }();
  return *tok;
}

inline int64_t CountTokens(absl::string_view text) {
  auto ids = Tok().Encode(text, /*add_bos=*/true);
  return ids.ok() ? static_cast<int64_t>(ids->size()) : -1;
}

// Bundled data (empty paths), the stories260K counter, `n` samples; `calls`
// (if given) counts the count_tokens calls.
inline GeneratorOptions Options(int64_t n, int64_t* calls = nullptr) {
  GeneratorOptions o;
  o.num_samples = n;
  o.count_tokens = [calls](absl::string_view text) -> absl::StatusOr<int64_t> {
    if (calls != nullptr) ++*calls;
    FOCAL_ASSIGN_OR_RETURN(std::vector<int32_t> ids, Tok().Encode(text, /*add_bos=*/true));
    return static_cast<int64_t>(ids.size());
  };
  return o;
}

struct Generated {
  std::vector<GenerationSample> samples;  // empty when infeasible
  int64_t count_calls = 0;
};

// kSamples samples of every (task, length), built once for the whole file;
// for an infeasible pair, the error.
inline const Generated& Samples(const std::string& task, int64_t length) {
  static auto* cache = new std::map<std::pair<std::string, int64_t>, Generated>();
  auto it = cache->find({task, length});
  if (it == cache->end()) {
    Generated g;
    auto s = MakeRulerSamples(task, length, Options(kSamples, &g.count_calls));
    if (Feasible(task, length)) {
      EXPECT_TRUE(s.ok()) << task << " " << length << ": " << s.status();
    } else {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                              AllOf(HasSubstr(absl::StrCat(task, " at length ", length)),
                                    HasSubstr("length too small"))));
    }
    if (s.ok()) g.samples = std::move(*s);
    it = cache->emplace(std::make_pair(task, length), std::move(g)).first;
  }
  return it->second;
}

inline std::vector<std::string> Split(const std::string& s, char sep) {
  if (s.empty()) return {};
  return absl::StrSplit(s, sep);
}

inline int64_t Occurrences(absl::string_view text, absl::string_view needle) {
  int64_t n = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace focal::datasets

#endif  // FOCAL_TESTS_DATASETS_RULER_TEST_UTIL_H_
