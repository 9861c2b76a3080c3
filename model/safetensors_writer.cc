// SPDX-License-Identifier: Apache-2.0
#include "model/safetensors_writer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/file_util.h"
#include "base/json_writer.h"

namespace focal::model {

std::string SerializeSafetensors(const std::map<std::string, F32Tensor>& tensors,
                                 const std::map<std::string, std::string>& metadata) {
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      absl::StrAppend(&header, first ? "" : ",", JsonQuote(k), ":", JsonQuote(v));
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  bool first = metadata.empty();
  for (const auto& [name, t] : tensors) {
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    FOCAL_CHECK(numel == static_cast<int64_t>(t.data.size()));
    const uint64_t bytes = t.data.size() * 4;
    absl::StrAppend(&header, first ? "" : ",", JsonQuote(name), ":{\"dtype\":\"F32\",\"shape\":[",
                    absl::StrJoin(t.shape, ","), "],\"data_offsets\":[", offset, ",",
                    offset + bytes, "]}");
    offset += bytes;
    first = false;
  }
  header += "}";
  while (header.size() % 8 != 0) header.push_back(' ');
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out += header;
  for (const auto& [name, t] : tensors) {
    // Little-endian host assumed (x86-64, aarch64), as safetensors requires.
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4);
  }
  return out;
}

absl::Status WriteSafetensors(absl::string_view path,
                              const std::map<std::string, F32Tensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  return WriteFileAtomic(path, SerializeSafetensors(tensors, metadata));
}

}  // namespace focal::model
