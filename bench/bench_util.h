// SPDX-License-Identifier: Apache-2.0
// Small helpers every benchmark uses: the median of timings and the
// process's peak resident memory.
#ifndef FOCAL_BENCH_BENCH_UTIL_H_
#define FOCAL_BENCH_BENCH_UTIL_H_

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace focal::bench {

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

}  // namespace focal::bench

#endif  // FOCAL_BENCH_BENCH_UTIL_H_
