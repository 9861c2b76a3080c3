// SPDX-License-Identifier: Apache-2.0
// CPython's random.Random (MT19937, random.seed(int), random(), getrandbits,
// _randbelow, sample) reimplemented bit for bit, so everything seeded here
// (lm-eval's bootstrap and few-shot draws, RULER-style samples) reproduces
// what the Python tools draw, on any machine.
#ifndef FOCAL_BASE_PY_RANDOM_H_
#define FOCAL_BASE_PY_RANDOM_H_

#include <cstdint>
#include <vector>

namespace focal {

// CPython's random.Random: MT19937 seeded like random.seed(int) and random().
class PyRandom {
 public:
  explicit PyRandom(uint64_t seed);
  // MT19937's own init_genrand(seed) (numpy's legacy RandomState(int) seeding).
  struct Genrand {
    uint32_t seed;
  };
  explicit PyRandom(Genrand g) { InitGenrand(g.seed); }
  uint32_t NextU32();
  double Random();  // [0, 1) with 53 random bits, as CPython
  // random.choices(population of size n) index: floor(random() * n).
  int64_t ChoiceIndex(int64_t n) { return static_cast<int64_t>(Random() * static_cast<double>(n)); }
  // getrandbits(k) for 1 <= k <= 32.
  uint32_t GetRandBits(int k) { return NextU32() >> (32 - k); }
  // _randbelow(n): getrandbits(n.bit_length()) until below n (n < 2^32).
  int64_t RandBelow(int64_t n);
  // random.sample(range(n), k) as CPython 3.11 draws it (pool or set method).
  std::vector<int64_t> Sample(int64_t n, int64_t k);

 private:
  void InitGenrand(uint32_t s);
  uint32_t mt_[624];
  int mti_ = 625;
};

// numpy.random.RandomState(seed) for an int seed (init_genrand) and its
// legacy randint: RULER draws its variable-tracking values with it.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) : mt_(PyRandom::Genrand{seed}) {}
  // randint(low, high), high exclusive, high - low <= 2^32: masked rejection
  // on 32-bit draws, as numpy's legacy bounded integers.
  int64_t RandInt(int64_t low, int64_t high);

 private:
  PyRandom mt_;
};

}  // namespace focal

#endif  // FOCAL_BASE_PY_RANDOM_H_
