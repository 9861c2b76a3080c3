// SPDX-License-Identifier: Apache-2.0
// A safetensors file (model/safetensors.h): header length, header JSON,
// dtypes, shapes and data offsets.
//
// Input: byte 0 selects the layout.
//   even: bytes 1-4 are a little-endian data size D (at most 64 MiB), the
//         rest is the header JSON; the file is its u64 length, the header and
//         D zero bytes (sparse), so mutations reach the offset checks.
//   odd:  the rest is the whole file as is (header length field included).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string path;
  if (data[0] & 1) {
    path = focal::fuzz::WriteScratch("model.safetensors", focal::fuzz::AsText(data + 1, size - 1));
  } else {
    if (size < 5) return 0;
    uint32_t d = 0;
    for (int i = 4; i >= 1; --i) d = (d << 8) | data[i];
    d = std::min<uint32_t>(d, 64u << 20);
    const std::string header(reinterpret_cast<const char*>(data + 5), size - 5);
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i)
      file[i] = static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xff);
    file += header;
    path = focal::fuzz::WriteScratch("model.safetensors", file);
    if (truncate(path.c_str(), static_cast<off_t>(file.size() + d)) != 0) __builtin_trap();
  }
  auto st = focal::model::SafetensorsFile::Open(path);
  if (st.ok()) {
    // Every tensor's bytes are inside the map: read the first and last one.
    volatile uint8_t sink = 0;
    for (const auto& [name, t] : (*st)->tensors()) {
      if (t.bytes > 0) sink = sink + t.data[0] + t.data[t.bytes - 1];
    }
    (void)sink;
  }
  return 0;
}
