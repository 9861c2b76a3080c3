// SPDX-License-Identifier: Apache-2.0
#include "base/np_random.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>

namespace focal {
namespace {

// numpy/random/bit_generator.pyx, SeedSequence (pool size 4, no spawn key).
constexpr uint32_t kInitA = 0x43b0d7e5u;
constexpr uint32_t kMultA = 0x931e8875u;
constexpr uint32_t kInitB = 0x8b51f9ddu;
constexpr uint32_t kMultB = 0x58f38dedu;
constexpr uint32_t kMixMultL = 0xca01f9ddu;
constexpr uint32_t kMixMultR = 0x4973f715u;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

uint32_t HashMix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t Mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixMultL * x - kMixMultR * y;
  r ^= r >> kXShift;
  return r;
}

// SeedSequence(seed).generate_state(4, np.uint64).
void GenerateState(uint64_t seed, uint64_t out[4]) {
  std::vector<uint32_t> entropy;  // the seed's 32-bit words, least significant first
  do {
    entropy.push_back(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
    seed >>= 32;
  } while (seed != 0);
  uint32_t pool[kPoolSize];
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i) {
    pool[i] = HashMix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0u, hash_const);
  }
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = Mix(pool[dst], HashMix(pool[src], hash_const));
    }
  }
  for (size_t src = kPoolSize; src < entropy.size(); ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      pool[dst] = Mix(pool[dst], HashMix(entropy[src], hash_const));
    }
  }
  uint32_t words[8];
  uint32_t hc = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[i % kPoolSize];
    v ^= hc;
    hc *= kMultB;
    v *= hc;
    v ^= v >> kXShift;
    words[i] = v;
  }
  for (int i = 0; i < 4; ++i) {  // viewed as little-endian uint64
    out[i] = static_cast<uint64_t>(words[2 * i]) | (static_cast<uint64_t>(words[2 * i + 1]) << 32);
  }
}

constexpr unsigned __int128 kMultiplier =
    (static_cast<unsigned __int128>(2549297995355413924ULL) << 64) + 4865540595714422341ULL;

}  // namespace

void NumpyPcg64::Step() { state_ = state_ * kMultiplier + inc_; }

NumpyPcg64::NumpyPcg64(uint64_t seed) {
  uint64_t v[4];
  GenerateState(seed, v);
  // pcg64_set_seed(state, seed = v[0..1], inc = v[2..3]); a 128-bit
  // constant is (high << 64) + low with v[0] / v[2] the high words.
  const unsigned __int128 initstate = (static_cast<unsigned __int128>(v[0]) << 64) + v[1];
  const unsigned __int128 initseq = (static_cast<unsigned __int128>(v[2]) << 64) + v[3];
  state_ = 0;
  inc_ = (initseq << 1) | 1;
  Step();
  state_ += initstate;
  Step();
}

uint64_t NumpyPcg64::Next64() {
  Step();
  const uint64_t value = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (value >> rot) | (value << ((64 - rot) & 63));
}

uint32_t NumpyPcg64::Next32() {
  if (has_uint32_) {
    has_uint32_ = false;
    return uinteger_;
  }
  const uint64_t next = Next64();
  has_uint32_ = true;
  uinteger_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next & 0xFFFFFFFFu);
}

uint64_t NumpyPcg64::RandomInterval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  uint64_t value;
  if (max <= 0xFFFFFFFFu) {
    while ((value = (Next32() & mask)) > max) {
    }
  } else {
    while ((value = (Next64() & mask)) > max) {
    }
  }
  return value;
}

std::vector<int64_t> NumpyPermutation(uint64_t seed, int64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(out.begin(), out.end(), 0);
  NumpyPcg64 rng(seed);
  // Generator.shuffle of a 1-d array: Fisher-Yates from the end.
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.RandomInterval(static_cast<uint64_t>(i)));
    std::swap(out[i], out[j]);
  }
  return out;
}

}  // namespace focal
