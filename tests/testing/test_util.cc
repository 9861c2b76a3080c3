// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace focal::testing {
namespace fs = std::filesystem;

std::string SourcePath(const std::string& rel) { return std::string(FOCAL_SOURCE_DIR) + "/" + rel; }

std::string SharedPath(const std::string& rel) {
  return std::string(FOCAL_SOURCE_DIR) + "/../shared/" + rel;
}

bool SharedAvailable() { return fs::exists(SharedPath("README.md")); }

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

CommandResult RunCommand(const std::string& binary, const std::string& args) {
  static const std::string* dir = new std::string(MakeTempDir("cmd"));
  const std::string cmd =
      binary + " " + args + " >" + *dir + "/out 2>" + *dir + "/err </dev/null";
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
