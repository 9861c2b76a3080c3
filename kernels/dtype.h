// SPDX-License-Identifier: Apache-2.0
// Scalar conversions between F16/BF16 storage and F32 compute.
#ifndef FOCAL_KERNELS_DTYPE_H_
#define FOCAL_KERNELS_DTYPE_H_

#include <cstdint>
#include <cstring>

namespace focal::kernels {

// BF16 is the top half of an F32: widening is exact.
inline float Bf16ToF32(uint16_t h) {
  uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// IEEE binary16 -> binary32, exact for every input (subnormals, inf, NaN).
inline float F16ToF32(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // Subnormal: renormalise.
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// F32 -> BF16 with round-to-nearest-even (as torch does); NaN stays NaN.
inline uint16_t F32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace focal::kernels

#endif  // FOCAL_KERNELS_DTYPE_H_
