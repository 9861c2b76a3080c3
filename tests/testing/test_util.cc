// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/asset_root.h"

namespace focal::testing {
namespace fs = std::filesystem;
namespace {

// Line `n` (0-based) of `s`, lines ending at '\n'; none past the last line (a
// final '\n' starts an empty last line).
std::optional<std::string_view> Line(std::string_view s, size_t n) {
  size_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t nl = s.find('\n', begin);
    if (nl == std::string_view::npos) return std::nullopt;
    begin = nl + 1;
  }
  const size_t end = s.find('\n', begin);
  return s.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

// A line for a failure message, quoted; a long one only around `column`.
std::string ShowLine(const std::optional<std::string_view>& line, size_t column) {
  if (!line.has_value()) return "(none: the text ends before this line)";
  constexpr size_t kBefore = 40, kWidth = 160;
  const size_t from = column > kBefore ? column - kBefore : 0;
  std::string out = from > 0 ? "...\"" : "\"";
  out.append(line->substr(from, kWidth));
  out.append(from + kWidth < line->size() ? "\"..." : "\"");
  return out;
}

}  // namespace

std::string SourcePath(const std::string& rel) { return std::string(FOCAL_SOURCE_DIR) + "/" + rel; }

std::string DefaultModelGguf() { return DefaultModelPath(); }

std::string SharedPath(const std::string& rel) { return std::string(FOCAL_SHARED_DIR) + "/" + rel; }

bool SharedAvailable() { return fs::exists(SharedPath("README.md")); }

std::string Stories260KDir() {
  // The GPU machine runs prebuilt binaries with the bundle's copy.
  const char* env = std::getenv("FOCAL_TEST_STORIES260K_DIR");
  return env != nullptr && *env != '\0' ? env : FOCAL_STORIES260K_DIR;
}

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = (fs::temp_directory_path() / ("focal_" + tag + "_XXXXXX")).string();
  char* p = ::mkdtemp(tmpl.data());
  if (p == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    std::abort();
  }
  static std::vector<std::string>* dirs = [] {
    auto* v = new std::vector<std::string>();
    std::atexit([] {
      std::error_code ec;
      for (const auto& d : *dirs) fs::remove_all(d, ec);
    });
    return v;
  }();
  dirs->push_back(p);
  return p;
}

std::string CopyDirToTemp(const std::string& from, const std::string& tag) {
  std::string dir = MakeTempDir(tag);
  for (const auto& e : fs::directory_iterator(from)) {
    fs::copy_file(e.path(), fs::path(dir) / e.path().filename());
  }
  return dir;
}

std::vector<JsonValue> ReadJsonLines(const std::string& path) {
  std::vector<JsonValue> out;
  const std::string text = ReadFileOrDie(path);
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    if (line.empty()) continue;
    absl::StatusOr<JsonValue> v = ParseJson(line, absl::StrCat(path, ":", n));
    EXPECT_TRUE(v.ok()) << v.status();
    if (v.ok()) out.push_back(*std::move(v));
  }
  return out;
}

SampleLls SampleLoglikelihoods(const std::string& path) {
  SampleLls out;
  for (const JsonValue& v : ReadJsonLines(path)) {
    std::vector<double> lls;
    for (const JsonValue& x : v.Find("loglikelihoods")->array()) lls.push_back(x.number());
    out[v.Find("task")->string_value()][v.Find("doc_index")->integer()] = lls;
  }
  return out;
}

std::vector<int32_t> JsonInts(const JsonValue& array) {
  std::vector<int32_t> out;
  for (const JsonValue& v : array.array()) out.push_back(static_cast<int32_t>(v.integer()));
  return out;
}

std::vector<std::string> TokenizerCorpus() {
  std::vector<std::string> lines;
  for (const char* file : {"corpus.jsonl", "random_corpus.jsonl"}) {
    const std::string path = SourcePath(absl::StrCat("tests/testdata/tokenizer/", file));
    for (const JsonValue& v : ReadJsonLines(path)) lines.push_back(v.string_value());
  }
  return lines;
}

void WriteStringToFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) {
    ADD_FAILURE() << "cannot write " << path;
  }
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string GoldenPath(const std::string& rel) {
  return SourcePath("tests/testdata/golden/" + rel);
}

::testing::AssertionResult MatchesGolden(const std::string& actual,
                                         const std::string& golden_relpath) {
  const std::string path = GoldenPath(golden_relpath);
  const char* update = std::getenv("FOCAL_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    WriteStringToFile(path, actual);
    std::cerr << "wrote " << path << "\n";
    return ::testing::AssertionSuccess();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return ::testing::AssertionFailure()
           << "cannot read golden " << path << " (FOCAL_UPDATE_GOLDENS=1 writes it)";
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string expected = ss.str();
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t n = 0;
  std::optional<std::string_view> want, got;
  for (;; ++n) {
    want = Line(expected, n);
    got = Line(actual, n);
    if (want != got || !want.has_value()) break;
  }
  size_t column = 0;
  if (want.has_value() && got.has_value()) {
    const size_t common = std::min(want->size(), got->size());
    while (column < common && (*want)[column] == (*got)[column]) ++column;
  }
  return ::testing::AssertionFailure()
         << "golden " << path << " differs (FOCAL_UPDATE_GOLDENS=1 rewrites it); first at line "
         << n + 1 << ", column " << column + 1 << "\n  expected: " << ShowLine(want, column)
         << "\n  actual:   " << ShowLine(got, column) << "\n(golden " << expected.size()
         << " bytes, actual " << actual.size() << " bytes)";
}

CommandResult RunOnStories260K(const std::string& binary, const std::string& args) {
  return RunCommand("FOCAL_DEFAULT_MODEL='" + Stories260KDir() + "' " + binary, args);
}

CommandResult RunCommand(const std::string& binary, const std::string& args) {
  static const std::string* dir = new std::string(MakeTempDir("cmd"));
  // The bundled samples, whatever this machine has fetched: the tests'
  // expectations are the samples'. A test that wants the fetched data names
  // FOCAL_DATA_CACHE again in `binary` (the later assignment wins).
  const std::string cmd = "FOCAL_DATA_CACHE=none " + binary + " " + args + " >" + *dir + "/out 2>" +
                          *dir + "/err </dev/null";
  const int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ReadFileOrDie(*dir + "/out"),
          ReadFileOrDie(*dir + "/err")};
}

std::vector<GoldenSequence> ReadGoldenLogprobs(const std::string& path) {
  std::istringstream in(ReadFileOrDie(path));
  std::vector<GoldenSequence> seqs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "sequence") {
      seqs.emplace_back();
    } else if (kind == "tokens") {
      int32_t t;
      while (ls >> t) seqs.back().tokens.push_back(t);
    } else if (kind == "logprob") {
      int64_t pos;
      int32_t tok, am;
      double lp;
      ls >> pos >> tok >> lp >> am;
      seqs.back().logprob.push_back(lp);
      seqs.back().argmax.push_back(am);
    } else if (kind == "final_argmax") {
      ls >> seqs.back().final_argmax;
    }
  }
  return seqs;
}

}  // namespace focal::testing
