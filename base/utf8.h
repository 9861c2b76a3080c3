// SPDX-License-Identifier: Apache-2.0
// UTF-8 well-formedness, for every reader of untrusted text (tokenizers,
// dataset readers).
#ifndef FOCAL_BASE_UTF8_H_
#define FOCAL_BASE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace focal {

// Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool IsValidUtf8(absl::string_view s);

// Length of the well-formed UTF-8 sequence at s[i] (i < s.size()), or 0
// when ill-formed; on 0, *prefix is the length of the longest prefix of one
// that is there (the "maximal subpart" that one U+FFFD replaces).
size_t Utf8WellFormedAt(absl::string_view s, size_t i, size_t* prefix);

// Appends code point `cp` (<= U+10FFFF) to `out` as UTF-8.
void AppendUtf8(uint32_t cp, std::string& out);

}  // namespace focal

#endif  // FOCAL_BASE_UTF8_H_
