// SPDX-License-Identifier: Apache-2.0
#include "base/py_random.h"

#include <algorithm>
#include <cmath>

namespace focal {

// MT19937 as in CPython's _randommodule.c (init_genrand, init_by_array,
// genrand_uint32); random.seed(i) for an int i feeds the 32-bit words of |i|,
// least significant first, to init_by_array (one word 0 for i = 0).
void PyRandom::InitGenrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < 624; ++i) {
    mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  mti_ = 624;
}

PyRandom::PyRandom(uint64_t seed) {
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
    seed >>= 32;
  } while (seed != 0);
  InitGenrand(19650218u);
  int i = 1, j = 0;
  const int key_len = static_cast<int>(key.size());
  for (int k = std::max(624, key_len); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
    if (j >= key_len) j = 0;
  }
  for (int k = 623; k > 0; --k) {
    mt_[i] =
        (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;
  mti_ = 624;
}

uint32_t PyRandom::NextU32() {
  static constexpr uint32_t kMag01[2] = {0x0u, 0x9908b0dfu};
  if (mti_ >= 624) {
    int kk = 0;
    for (; kk < 624 - 397; ++kk) {
      uint32_t y = (mt_[kk] & 0x80000000u) | (mt_[kk + 1] & 0x7fffffffu);
      mt_[kk] = mt_[kk + 397] ^ (y >> 1) ^ kMag01[y & 1u];
    }
    for (; kk < 623; ++kk) {
      uint32_t y = (mt_[kk] & 0x80000000u) | (mt_[kk + 1] & 0x7fffffffu);
      mt_[kk] = mt_[kk + (397 - 624)] ^ (y >> 1) ^ kMag01[y & 1u];
    }
    uint32_t y = (mt_[623] & 0x80000000u) | (mt_[0] & 0x7fffffffu);
    mt_[623] = mt_[396] ^ (y >> 1) ^ kMag01[y & 1u];
    mti_ = 0;
  }
  uint32_t y = mt_[mti_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

int64_t PyRandom::RandBelow(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) <= n) ++bits;  // n.bit_length()
  int64_t r = GetRandBits(bits);
  while (r >= n) r = GetRandBits(bits);
  return r;
}

std::vector<int64_t> PyRandom::Sample(int64_t n, int64_t k) {
  std::vector<int64_t> result(k);
  int64_t setsize = 21;  // CPython: size of a small set() before it resizes
  if (k > 5) {
    setsize += static_cast<int64_t>(
        std::pow(4.0, std::ceil(std::log(static_cast<double>(k * 3)) / std::log(4.0))));
  }
  if (n <= setsize) {
    std::vector<int64_t> pool(n);
    for (int64_t i = 0; i < n; ++i) pool[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = RandBelow(n - i);
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
    return result;
  }
  std::vector<int64_t> selected;
  for (int64_t i = 0; i < k; ++i) {
    int64_t j = RandBelow(n);
    while (std::find(selected.begin(), selected.end(), j) != selected.end()) j = RandBelow(n);
    selected.push_back(j);
    result[i] = j;
  }
  return result;
}

double PyRandom::Random() {
  const uint32_t a = NextU32() >> 5, b = NextU32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

int64_t NumpyRandomState::RandInt(int64_t low, int64_t high) {
  const uint64_t rng = static_cast<uint64_t>(high - low - 1);
  if (rng == 0) return low;
  uint64_t mask = rng;
  for (int shift = 1; shift < 64; shift <<= 1) mask |= mask >> shift;
  uint64_t v;
  do {
    v = mt_.NextU32() & mask;
  } while (v > rng);
  return low + static_cast<int64_t>(v);
}

}  // namespace focal
