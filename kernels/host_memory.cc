// SPDX-License-Identifier: Apache-2.0
// The default Backend::AvailableMemoryBytes: the host's MemAvailable.
#include <fstream>
#include <string>

#include "kernels/backend.h"

namespace focal::kernels {

int64_t Backend::AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kb;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return -1;
}

}  // namespace focal::kernels
