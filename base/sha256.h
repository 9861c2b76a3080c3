// SPDX-License-Identifier: Apache-2.0
// SHA-256 (FIPS 180-4) for weights and request checksums. None of our Debian
// dependencies exposes one, and absl::Hash is salted per process.
#ifndef FOCAL_BASE_SHA256_H_
#define FOCAL_BASE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace focal {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(absl::string_view s) { Update(s.data(), s.size()); }
  // Finishes and returns the 32-byte digest; the object must not be reused.
  std::array<uint8_t, 32> Finish();
  // Finishes and returns the digest as 64 lower-case hex characters.
  std::string HexDigest();

 private:
  void Block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// Hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

}  // namespace focal

#endif  // FOCAL_BASE_SHA256_H_
