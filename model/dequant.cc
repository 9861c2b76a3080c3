// SPDX-License-Identifier: Apache-2.0
// Block layouts (bytes, in order; "half" is an IEEE fp16 scale):
//   Q4_0 (32 values, 18 B): half d; 16 B of nibbles. Value j < 16 is the low
//        nibble of byte j, value j + 16 the high nibble; y = (q - 8) * d.
//   Q4_1 (32, 20 B): half d, half m; nibbles as Q4_0; y = q * d + m.
//   Q5_0 (32, 22 B): half d; u32 of fifth bits (bit j for value j); nibbles
//        as Q4_0; y = (q - 16) * d.
//   Q5_1 (32, 24 B): half d, half m; fifth bits; nibbles; y = q * d + m.
//   Q8_0 (32, 34 B): half d; 32 int8; y = q * d.
//   Q4_K (256, 144 B): half d, half dmin; 12 B of eight 6-bit (scale, min)
//        pairs; 128 B of nibbles: per 64 values, 32 bytes whose low nibbles
//        are sub-block 2i and high nibbles sub-block 2i+1;
//        y = (d * scale) * q - (dmin * min).
//   Q5_K (256, 176 B): as Q4_K with 32 B of fifth bits before the nibbles
//        (bit s of byte l for value l of sub-block s).
//   Q6_K (256, 210 B): 128 B low nibbles, 64 B of 2-bit high parts, 16 int8
//        scales (one per 16 values), half d; y = (d * scale) * (q - 32).
// This file is compiled with -ffp-contract=off: a fused multiply-add would
// round once where ggml's reference rounds twice.
#include "model/dequant.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/dtype.h"

namespace focal::model {
namespace {

using kernels::Bf16ToF32;
using kernels::F16ToF32;

float Half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return F16ToF32(h);
}

void RowQ4_0(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 18, y += 32) {
    const float d = Half(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
      const int x0 = (qs[j] & 0x0F) - 8;
      const int x1 = (qs[j] >> 4) - 8;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void RowQ4_1(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 20, y += 32) {
    const float d = Half(b);
    const float m = Half(b + 2);
    const uint8_t* qs = b + 4;
    for (int j = 0; j < 16; ++j) {
      const int x0 = qs[j] & 0x0F;
      const int x1 = qs[j] >> 4;
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    }
  }
}

void RowQ5_0(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 22, y += 32) {
    const float d = Half(b);
    uint32_t qh;
    std::memcpy(&qh, b + 2, 4);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < 16; ++j) {
      const int h0 = ((qh >> j) & 1) << 4;
      const int h1 = ((qh >> (j + 16)) & 1) << 4;
      const int x0 = ((qs[j] & 0x0F) | h0) - 16;
      const int x1 = ((qs[j] >> 4) | h1) - 16;
      y[j] = static_cast<float>(x0) * d;
      y[j + 16] = static_cast<float>(x1) * d;
    }
  }
}

void RowQ5_1(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 24, y += 32) {
    const float d = Half(b);
    const float m = Half(b + 2);
    uint32_t qh;
    std::memcpy(&qh, b + 4, 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < 16; ++j) {
      const int h0 = ((qh >> j) & 1) << 4;
      const int h1 = ((qh >> (j + 16)) & 1) << 4;
      const int x0 = (qs[j] & 0x0F) | h0;
      const int x1 = (qs[j] >> 4) | h1;
      y[j] = static_cast<float>(x0) * d + m;
      y[j + 16] = static_cast<float>(x1) * d + m;
    }
  }
}

void RowQ8_0(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 34, y += 32) {
    const float d = Half(b);
    for (int j = 0; j < 32; ++j) {
      y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    }
  }
}

// The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes:
// sub-blocks 0-3 sit in the low 6 bits of bytes j and j+4; 4-7 take their low
// 4 bits from byte j+4 and their top 2 bits from the spare bits of bytes j-4
// (scale) and j (min).
void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void RowQ4_K(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 144) {
    const float d = Half(b);
    const float dmin = Half(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* q = b + 16;
    for (int s = 0; s < 8; s += 2, q += 32) {
      uint8_t sc, m;
      ScaleMinK4(s, scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      ScaleMinK4(s + 1, scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc);
      const float m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void RowQ5_K(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 176) {
    const float d = Half(b);
    const float dmin = Half(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + 48;
    for (int s = 0; s < 8; s += 2, ql += 32) {
      uint8_t sc, m;
      ScaleMinK4(s, scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      ScaleMinK4(s + 1, scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc);
      const float m2 = dmin * static_cast<float>(m);
      const uint8_t bit1 = static_cast<uint8_t>(1u << s), bit2 = static_cast<uint8_t>(2u << s);
      for (int l = 0; l < 32; ++l) {
        const int v = (ql[l] & 0x0F) + ((qh[l] & bit1) ? 16 : 0);
        *y++ = d1 * static_cast<float>(v) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int v = (ql[l] >> 4) + ((qh[l] & bit2) ? 16 : 0);
        *y++ = d2 * static_cast<float>(v) - m2;
      }
    }
  }
}

void RowQ6_K(const uint8_t* b, int64_t nb, float* y) {
  for (int64_t i = 0; i < nb; ++i, b += 210) {
    const float d = Half(b + 208);
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace

bool CanDequantize(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

const char* DequantizableTypes() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K";
}

absl::Status Dequantize(GgmlType type, const uint8_t* src, int64_t n, float* dst) {
  const GgmlTypeTraits* t = FindGgmlType(static_cast<uint32_t>(type));
  if (t == nullptr || !CanDequantize(type)) {
    return absl::UnimplementedError(absl::StrCat("cannot dequantize type ", GgmlTypeName(type),
                                                 " (supported: ", DequantizableTypes(), ")"));
  }
  if (n < 0 || n % t->block_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(n, " values are not whole ", t->name, " blocks of ", t->block_size));
  }
  const int64_t nb = n / t->block_size;
  switch (type) {
    case GgmlType::kF32:
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      break;
    case GgmlType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = Half(src + 2 * i);
      break;
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = Bf16ToF32(h);
      }
      break;
    case GgmlType::kQ4_0:
      RowQ4_0(src, nb, dst);
      break;
    case GgmlType::kQ4_1:
      RowQ4_1(src, nb, dst);
      break;
    case GgmlType::kQ5_0:
      RowQ5_0(src, nb, dst);
      break;
    case GgmlType::kQ5_1:
      RowQ5_1(src, nb, dst);
      break;
    case GgmlType::kQ8_0:
      RowQ8_0(src, nb, dst);
      break;
    case GgmlType::kQ4_K:
      RowQ4_K(src, nb, dst);
      break;
    case GgmlType::kQ5_K:
      RowQ5_K(src, nb, dst);
      break;
    case GgmlType::kQ6_K:
      RowQ6_K(src, nb, dst);
      break;
    default:
      break;  // excluded by CanDequantize
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> DequantizeTensor(const GgufTensor& tensor,
                                                    absl::string_view file) {
  if (!CanDequantize(tensor.type)) {
    return absl::UnimplementedError(
        absl::StrCat(file, ": tensor '", tensor.name, "' has type ", GgmlTypeName(tensor.type),
                     ", which cannot be dequantized (supported: ", DequantizableTypes(), ")"));
  }
  std::vector<float> out(static_cast<size_t>(tensor.num_elements));
  absl::Status s = Dequantize(tensor.type, tensor.data, tensor.num_elements, out.data());
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(file, ": tensor '", tensor.name, "': ", s.message()));
  }
  return out;
}

}  // namespace focal::model
