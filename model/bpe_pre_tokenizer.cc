// SPDX-License-Identifier: Apache-2.0
#include "model/bpe_pre_tokenizer.h"

#include <algorithm>
#include <array>

#include "model/unicode.h"

namespace focal::model {
namespace {

constexpr absl::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr absl::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr absl::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The text as code points, with the byte offset of each (and of the end).
struct CodePoints {
  std::vector<char32_t> cp;
  std::vector<CharClass> cls;
  std::vector<size_t> offset;  // cp.size() + 1 entries
};

CodePoints Decode(absl::string_view text) {
  CodePoints c;
  for (size_t pos = 0; pos < text.size();) {
    c.offset.push_back(pos);
    const char32_t cp = DecodeUtf8(text, &pos);
    c.cp.push_back(cp);
    c.cls.push_back(ClassifyCodePoint(cp));
  }
  c.offset.push_back(text.size());
  return c;
}

// Length (in code points) of the match of the regex's alternation at index i,
// 0 when none of its alternatives matches there. Each alternative is tried
// in order, as a backtracking engine does (leftmost-first, not longest).
size_t MatchAt(SplitRegex re, const CodePoints& c, size_t i) {
  const size_t n = c.cp.size();
  const auto is = [&](size_t k, CharClass cls) { return k < n && c.cls[k] == cls; };
  const auto run = [&](size_t k, CharClass cls) {  // end of the run of `cls` from k
    while (k < n && c.cls[k] == cls) ++k;
    return k;
  };
  const bool llama = re != SplitRegex::kGpt2;
  // Contractions; Llama 3's are case-insensitive, where Oniguruma's case
  // folding also maps U+017F (long s) to 's'.
  if (c.cp[i] == '\'' && i + 1 < n) {
    const auto fold = [&](size_t k) -> char32_t {
      if (k >= n) return 0;
      const char32_t x = c.cp[k];
      if (!llama) return x;
      if (x >= 'A' && x <= 'Z') return x - 'A' + 'a';
      if (x == 0x17F) return 's';
      return x;
    };
    const char32_t a = fold(i + 1), b = fold(i + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  const auto space_then = [&](CharClass cls) -> size_t {  // " ?X+"
    if (c.cp[i] == ' ' && is(i + 1, cls)) return run(i + 1, cls) - i;
    if (is(i, cls)) return run(i, cls) - i;
    return 0;
  };
  const auto is_newline = [&](size_t k) { return c.cp[k] == '\r' || c.cp[k] == '\n'; };
  if (!llama) {
    for (CharClass cls : {CharClass::kLetter, CharClass::kNumber, CharClass::kOther}) {
      if (size_t len = space_then(cls)) return len;
    }
  } else {
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (c.cls[i] != CharClass::kLetter && c.cls[i] != CharClass::kNumber && !is_newline(i) &&
        is(i + 1, CharClass::kLetter)) {
      return run(i + 1, CharClass::kLetter) - i;
    }
    if (is(i, CharClass::kLetter)) return run(i, CharClass::kLetter) - i;
    // \p{N}{1,3} (Qwen2: \p{N})
    if (is(i, CharClass::kNumber)) {
      const size_t max = re == SplitRegex::kLlama3 ? 3 : 1;
      size_t k = i;
      while (k < n && k - i < max && c.cls[k] == CharClass::kNumber) ++k;
      return k - i;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    if (size_t len = space_then(CharClass::kOther)) {
      size_t k = i + len;
      while (k < n && is_newline(k)) ++k;
      return k - i;
    }
    // \s*[\r\n]+: the whitespace run up to and including its last newline.
    const size_t ws_end = run(i, CharClass::kWhitespace);
    for (size_t k = ws_end; k > i; --k) {
      if (is_newline(k - 1)) return k - i;
    }
  }
  // \s+(?!\S) then \s+: a whitespace run followed by a non-space keeps its
  // last character for that non-space's match.
  const size_t ws_end = run(i, CharClass::kWhitespace);
  const size_t len = ws_end - i;
  if (len == 0) return 0;
  if (ws_end == n || len == 1) return len;
  return len - 1;
}

// Appends `parts` of `piece` (by byte range), dropping empty ones.
void AppendParts(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& parts,
                 std::vector<Piece>* out) {
  for (const auto& [b, e] : parts) {
    if (b == e) continue;
    Piece p;
    p.text = piece.text.substr(b, e - b);
    p.at_start = piece.at_start && b == 0;
    out->push_back(std::move(p));
  }
}

// Spans of the occurrences of a literal (non-overlapping, left to right).
std::vector<Span> LiteralSpans(absl::string_view text, absl::string_view lit) {
  std::vector<Span> spans;
  size_t prev = 0;
  for (size_t at = text.find(lit); at != absl::string_view::npos; at = text.find(lit, at)) {
    if (prev != at) spans.push_back({prev, at, false});
    spans.push_back({at, at + lit.size(), true});
    at += lit.size();
    prev = at;
  }
  if (prev != text.size()) spans.push_back({prev, text.size(), false});
  return spans;
}

// Spans where each code point satisfying `pred` is its own match.
template <typename Pred>
std::vector<Span> CharSpans(absl::string_view text, Pred pred) {
  std::vector<Span> spans;
  size_t prev = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = DecodeUtf8(text, &pos);
    if (!pred(cp)) continue;
    if (prev < start) spans.push_back({prev, start, false});
    spans.push_back({start, pos, true});
    prev = pos;
  }
  if (prev < text.size()) spans.push_back({prev, text.size(), false});
  return spans;
}

struct ByteMap {
  std::array<char32_t, 256> to_unicode;
  std::array<int, 324> from_unicode;  // every stand-in is below U+0144
  ByteMap() {
    from_unicode.fill(-1);
    // Printable Latin-1 bytes stand for themselves; the rest, in byte order,
    // take U+0100, U+0101, ...
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      to_unicode[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      from_unicode[to_unicode[b]] = b;
    }
  }
};
const ByteMap& Bytes() {
  static const ByteMap* m = new ByteMap();
  return *m;
}

}  // namespace

std::optional<SplitRegex> RecognizeSplitRegex(absl::string_view pattern) {
  for (SplitRegex re : {SplitRegex::kGpt2, SplitRegex::kLlama3, SplitRegex::kQwen2}) {
    if (pattern == SplitRegexPattern(re)) return re;
  }
  return std::nullopt;
}

absl::string_view SplitRegexPattern(SplitRegex re) {
  switch (re) {
    case SplitRegex::kGpt2:
      return kGpt2Pattern;
    case SplitRegex::kLlama3:
      return kLlama3Pattern;
    case SplitRegex::kQwen2:
      return kQwen2Pattern;
  }
  return "";
}

std::vector<Span> FindRegexSpans(SplitRegex re, absl::string_view text) {
  const CodePoints c = Decode(text);
  std::vector<Span> spans;
  size_t prev = 0;  // code point index where the last match ended
  for (size_t i = 0; i < c.cp.size();) {
    const size_t len = MatchAt(re, c, i);
    if (len == 0) {
      ++i;  // no match starts here: the search moves on
      continue;
    }
    if (prev < i) spans.push_back({c.offset[prev], c.offset[i], false});
    spans.push_back({c.offset[i], c.offset[i + len], true});
    i += len;
    prev = i;
  }
  if (prev < c.cp.size()) spans.push_back({c.offset[prev], text.size(), false});
  return spans;
}

std::vector<std::pair<size_t, size_t>> ApplySplitBehavior(const std::vector<Span>& spans,
                                                          SplitBehavior behavior) {
  std::vector<std::pair<size_t, size_t>> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const Span& s : spans) out.emplace_back(s.begin, s.end);
      break;
    case SplitBehavior::kRemoved:
      for (const Span& s : spans) {
        if (!s.is_match) out.emplace_back(s.begin, s.end);
      }
      break;
    case SplitBehavior::kContiguous:
      // Consecutive spans of the same kind join.
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !out.empty()) {
          out.back().second = s.end;
        } else {
          out.emplace_back(s.begin, s.end);
        }
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !out.empty()) {
          out.back().second = s.end;
        } else {
          out.emplace_back(s.begin, s.end);
        }
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      // The mirror image: walk from the end, a match joins the part after it.
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) {
          out.back().first = it->begin;
        } else {
          out.emplace_back(it->begin, it->end);
        }
        previous_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  return out;
}

void RunPreTokenizer(const PreTokenizerStep& step, std::vector<Piece>* pieces) {
  std::vector<Piece> out;
  out.reserve(pieces->size());
  for (Piece& piece : *pieces) {
    if (piece.id >= 0) {
      out.push_back(std::move(piece));
      continue;
    }
    std::vector<Span> spans;
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
    switch (step.type) {
      case PreTokenizerStep::Type::kByteLevel:
        if (step.add_prefix_space && piece.text[0] != ' ') piece.text = " " + piece.text;
        if (step.use_regex) {
          spans = FindRegexSpans(SplitRegex::kGpt2, piece.text);
        } else {
          spans = {{0, piece.text.size(), false}};
        }
        break;
      case PreTokenizerStep::Type::kSplit:
        spans = step.regex.has_value() ? FindRegexSpans(*step.regex, piece.text)
                                       : LiteralSpans(piece.text, step.literal);
        behavior = step.behavior;
        invert = step.invert;
        break;
      case PreTokenizerStep::Type::kDigits:
        spans = CharSpans(piece.text, IsNumber);
        behavior = step.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous;
        break;
      case PreTokenizerStep::Type::kMetaspace: {
        ReplaceAllLiteral(&piece.text, " ", step.replacement);
        const bool starts = piece.text.compare(0, step.replacement.size(), step.replacement) == 0;
        if (!starts &&
            (step.prepend_scheme == PreTokenizerStep::Prepend::kAlways ||
             (step.prepend_scheme == PreTokenizerStep::Prepend::kFirst && piece.at_start))) {
          piece.text.insert(0, step.replacement);
        }
        if (step.split) {
          const absl::string_view rep = step.replacement;
          spans = CharSpans(piece.text, [&](char32_t cp) {
            size_t pos = 0;
            return DecodeUtf8(rep, &pos) == cp;
          });
          behavior = SplitBehavior::kMergedWithNext;
        } else {
          spans = {{0, piece.text.size(), false}};
        }
        break;
      }
    }
    if (invert) {
      for (Span& s : spans) s.is_match = !s.is_match;
    }
    AppendParts(piece, ApplySplitBehavior(spans, behavior), &out);
  }
  if (step.type == PreTokenizerStep::Type::kByteLevel) {
    const ByteMap& m = Bytes();
    for (Piece& p : out) {
      if (p.id >= 0) continue;
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (unsigned char b : p.text) AppendUtf8(m.to_unicode[b], &mapped);
      p.text = std::move(mapped);
    }
  }
  *pieces = std::move(out);
}

void ReplaceAllLiteral(std::string* s, absl::string_view from, absl::string_view to) {
  std::string out;
  size_t prev = 0;
  for (size_t at = s->find(from.data(), 0, from.size()); at != std::string::npos;
       at = s->find(from.data(), prev, from.size())) {
    out.append(*s, prev, at - prev);
    out.append(to.data(), to.size());
    prev = at + from.size();
  }
  out.append(*s, prev, std::string::npos);
  *s = std::move(out);
}

char32_t ByteToUnicode(uint8_t b) { return Bytes().to_unicode[b]; }

int ByteFromUnicode(char32_t cp) {
  return cp < Bytes().from_unicode.size() ? Bytes().from_unicode[cp] : -1;
}

}  // namespace focal::model
