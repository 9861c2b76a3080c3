// SPDX-License-Identifier: Apache-2.0
// Writes F32 tensors as a safetensors file (atomically), e.g. for converted
// checkpoints and test fixtures.
#ifndef FOCAL_MODEL_SAFETENSORS_WRITER_H_
#define FOCAL_MODEL_SAFETENSORS_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace focal::model {

struct F32Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Serialises `tensors` (sorted by name, contiguous, header padded to 8 bytes
// as HF's writer does) with optional string metadata.
std::string SerializeSafetensors(const std::map<std::string, F32Tensor>& tensors,
                                 const std::map<std::string, std::string>& metadata = {});

absl::Status WriteSafetensors(absl::string_view path,
                              const std::map<std::string, F32Tensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace focal::model

#endif  // FOCAL_MODEL_SAFETENSORS_WRITER_H_
