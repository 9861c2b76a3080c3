// SPDX-License-Identifier: Apache-2.0
// The decoders of an HF BPE tokenizer (`tokenizers` 0.22: ByteLevel, Replace,
// ByteFallback, Fuse, Strip, Metaspace), each mapping a token list to a token
// list, as the library chains them.
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "model/bpe_tokenizer_impl.h"
#include "model/unicode.h"

namespace focal::model {
namespace {

std::vector<char32_t> CodePointsOf(absl::string_view s) {
  std::vector<char32_t> cps;
  for (size_t pos = 0; pos < s.size();) cps.push_back(DecodeUtf8(s, &pos));
  return cps;
}

std::string FromCodePoints(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end; ++i) AppendUtf8(cps[i], &s);
  return s;
}

}  // namespace

// One decoder over the token list (each decoder maps tokens to tokens).
std::vector<std::string> RunBpeDecoder(const DecoderStep& d, std::vector<std::string> tokens) {
  std::vector<std::string> out;
  switch (d.type) {
    case DecoderStep::Type::kByteLevel: {
      // Tokens made only of byte stand-ins become those bytes; any other
      // token keeps its UTF-8. The whole is then read as lossy UTF-8.
      std::string bytes;
      for (const std::string& t : tokens) {
        std::string mapped;
        bool all = true;
        for (size_t pos = 0; pos < t.size() && all;) {
          const int b = ByteFromUnicode(DecodeUtf8(t, &pos));
          if (b < 0) {
            all = false;
          } else {
            mapped.push_back(static_cast<char>(b));
          }
        }
        bytes += all ? mapped : t;
      }
      out.push_back(Utf8Lossy(bytes));
      break;
    }
    case DecoderStep::Type::kReplace:
      for (std::string& t : tokens) {
        ReplaceAllLiteral(&t, d.pattern, d.content);
        out.push_back(std::move(t));
      }
      break;
    case DecoderStep::Type::kByteFallback: {
      // Runs of <0xNN> tokens become their bytes when those are valid UTF-8,
      // else one U+FFFD per byte.
      std::string pending;
      size_t pending_count = 0;
      const auto flush = [&]() {
        if (pending_count == 0) return;
        if (IsValidUtf8(pending)) {
          out.push_back(pending);
        } else {
          for (size_t i = 0; i < pending_count; ++i) out.push_back("\xEF\xBF\xBD");
        }
        pending.clear();
        pending_count = 0;
      };
      for (std::string& t : tokens) {
        int byte = -1;
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
            std::isxdigit(static_cast<unsigned char>(t[3])) &&
            std::isxdigit(static_cast<unsigned char>(t[4]))) {
          byte = std::stoi(t.substr(3, 2), nullptr, 16);
        }
        if (byte >= 0) {
          pending.push_back(static_cast<char>(byte));
          ++pending_count;
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      break;
    }
    case DecoderStep::Type::kFuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      out.push_back(std::move(all));
      break;
    }
    case DecoderStep::Type::kStrip:
      for (const std::string& t : tokens) {
        const std::vector<char32_t> cps = CodePointsOf(t);
        size_t start = 0, stop = cps.size();
        for (size_t i = 0; i < d.start && i < cps.size() && cps[i] == d.strip_char; ++i) {
          start = i + 1;
        }
        for (size_t i = 0; i < d.stop && i < cps.size(); ++i) {
          const size_t index = cps.size() - i - 1;
          if (cps[index] != d.strip_char) break;
          stop = index;
        }
        out.push_back(start < stop ? FromCodePoints(cps, start, stop) : std::string());
      }
      break;
    case DecoderStep::Type::kMetaspace:
      // Every replacement char becomes ' ', except in the first token, where
      // they are dropped (the prepended one), unless prepend_scheme is never.
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string s;
        for (char32_t cp : CodePointsOf(tokens[i])) {
          if (cp == d.replacement) {
            if (!(i == 0 && d.prepend)) s.push_back(' ');
          } else {
            AppendUtf8(cp, &s);
          }
        }
        out.push_back(std::move(s));
      }
      break;
  }
  return out;
}

}  // namespace focal::model
