// SPDX-License-Identifier: Apache-2.0
// Dequantization of ggml tensor types to float32, bit for bit as ggml's
// reference (scalar) dequantize_row_* functions compute it: the same block
// layouts, the same float operations in the same order, fp16 scales widened
// exactly. Checked against goldens from the gguf package
// (tests/reference/make_gguf_reference.py).
#ifndef FOCAL_MODEL_DEQUANT_H_
#define FOCAL_MODEL_DEQUANT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/gguf.h"

namespace focal::model {

// F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K.
bool CanDequantize(GgmlType type);
// "F32, F16, ..." for error messages.
const char* DequantizableTypes();

// Writes the `n` values stored as `type` at `src` to `dst`. `src` holds
// exactly n / block_size blocks. InvalidArgument when `n` is not a multiple
// of the type's block size, Unimplemented for a type CanDequantize rejects.
absl::Status Dequantize(GgmlType type, const uint8_t* src, int64_t n, float* dst);

// The whole tensor, row-major; errors name `file` and the tensor and type.
absl::StatusOr<std::vector<float>> DequantizeTensor(const GgufTensor& tensor,
                                                    absl::string_view file);

}  // namespace focal::model

#endif  // FOCAL_MODEL_DEQUANT_H_
