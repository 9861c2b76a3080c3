// SPDX-License-Identifier: Apache-2.0
#include "datasets/generator.h"

#include <algorithm>

#include "base/check.h"

namespace focal::datasets {
namespace {

std::map<std::string, Generator>& Registry() {
  static auto* registry = new std::map<std::string, Generator>();
  return *registry;
}

}  // namespace

const Generator* FindGenerator(absl::string_view id) {
  auto it = Registry().find(std::string(id));
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> GeneratorIds() {
  std::vector<std::string> ids;
  for (const auto& [id, g] : Registry()) ids.push_back(id);
  return ids;
}

namespace internal {
bool RegisterGenerator(Generator generator) {
  const std::string id = generator.id;
  FOCAL_CHECK(Registry().emplace(id, std::move(generator)).second);  // ids are unique
  return true;
}
}  // namespace internal

}  // namespace focal::datasets
