// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/cpu: the AVX512_BF16 tile kernel behind gemm.h's BF16
// x BF16 GEMM (which picks it, tiles it and threads it).
#ifndef FOCAL_KERNELS_CPU_GEMM_BF16_DOT_H_
#define FOCAL_KERNELS_CPU_GEMM_BF16_DOT_H_

#include <cstdint>

#include "kernels/cpu/gemm.h"

namespace focal::kernels::cpu {

// True when this CPU has AVX-512 (F, BW) with AVX512_BF16.
bool HasAvx512Bf16();

// out(rows, cols) = x(rows, depth) . w(cols, depth)^T by vdpbf16ps,
// single-threaded. Only where HasAvx512Bf16() (checked).
void GemmNTBf16Dot(ConstMatBf16 x, ConstMatBf16 w, Mat out, int64_t rows, int64_t cols,
                   int64_t depth);

}  // namespace focal::kernels::cpu

#endif  // FOCAL_KERNELS_CPU_GEMM_BF16_DOT_H_
