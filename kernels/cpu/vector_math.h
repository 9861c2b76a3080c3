// SPDX-License-Identifier: Apache-2.0
// Vectorised element-wise math of the CPU backend: SiLU-gating, the
// attention softmax's exponentials and the log-softmax's sum of exponentials. glibc's exp/expf are
// scalar calls; on the default model these loops took about a tenth of a scoring run.
//
// Each function is one fixed sequence of correctly rounded operations per
// element (explicit fused multiply-adds, built with -ffp-contract=off), and
// sums go into a fixed set of partial sums: the AVX2+FMA path and the
// portable one give the same bits (tests/kernels/vector_math_test.cc).
#ifndef FOCAL_KERNELS_CPU_VECTOR_MATH_H_
#define FOCAL_KERNELS_CPU_VECTOR_MATH_H_

#include <cstdint>

#include "kernels/cpu/gemm.h"

namespace focal::kernels::cpu {

// out[i] = silu(gate[i]) * up[i], silu(x) = x * sigmoid(x), from
// e = exp(-|x|) so nothing overflows: x / (1 + e) for x >= 0, else
// x * e / (1 + e). Relative error a few ulps (expf-like polynomial); gates
// below -87 give 0 (|silu| < 1.5e-36 there), -inf gives NaN as
// x / (1 + exp(-x)) does, and NaN stays NaN. `out` may alias `gate` or `up`.
void SiluMul(const float* gate, const float* up, float* out, int64_t n,
             GemmPath path = GemmPath::kBest);

// sum over j of exp(double(x[j]) - shift), in double, for shift >= every
// x[j] (the row's maximum): each term to about 1 ulp of double, added into
// 16 partial sums (term j into sum j % 16) combined by a fixed tree. A NaN
// term makes the sum NaN; terms below exp(-708) count as exp(-708).
double SumExpShifted(const float* x, int64_t n, double shift, GemmPath path = GemmPath::kBest);

// x[j] = exp(x[j] - shift) in float for shift >= every x[j] (the softmax
// after subtracting the row's maximum): the subtraction rounded, then the
// polynomial SiluMul uses; below exp(-87) the result is 0, NaN stays NaN.
void ExpShifted(float* x, int64_t n, float shift, GemmPath path = GemmPath::kBest);

// The first index of the row's maximum, as the loop "best = 0; if (x[j] >
// x[best]) best = j" finds it: NaNs are skipped, except that a NaN at index
// 0 is kept (nothing compares greater than it). n >= 1.
int64_t FirstArgMax(const float* x, int64_t n, GemmPath path = GemmPath::kBest);

}  // namespace focal::kernels::cpu

#endif  // FOCAL_KERNELS_CPU_VECTOR_MATH_H_
