// SPDX-License-Identifier: Apache-2.0
// The pipeline of an HF BPE tokenizer (`tokenizers` 0.22's
// TokenizerImpl::encode): added tokens that are not normalized are cut out of
// the raw text; the rest is normalized, normalized added tokens are cut out;
// pre-tokenizers split what remains; each piece is BPE-merged on its own.
// The in-memory front end (GGUF vocabularies) is bpe_tokenizer_parts.cc, the
// decoders bpe_decoder.cc.
#include "model/bpe_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/bpe_tokenizer_impl.h"
#include "model/unicode.h"

namespace focal::model {
namespace {

// Ids beyond this are refused: the id -> token table is dense.
constexpr int64_t kMaxId = int64_t{1} << 24;

// Rust's \s (White_Space), as the added-token lstrip/rstrip regexes use.
size_t LeadingWhitespace(absl::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t next = pos;
    if (!IsWhitespace(DecodeUtf8(s, &next))) break;
    pos = next;
  }
  return pos;
}

size_t TrailingWhitespaceStart(absl::string_view s) {
  size_t start = s.size();
  bool in_run = false;
  for (size_t pos = 0; pos < s.size();) {
    const size_t at = pos;
    if (IsWhitespace(DecodeUtf8(s, &pos))) {
      if (!in_run) start = at;
      in_run = true;
    } else {
      in_run = false;
    }
  }
  return in_run ? start : s.size();
}

}  // namespace

void AddedMatcher::Add(Pattern p) { patterns.push_back(std::move(p)); }

void AddedMatcher::Finish() {
  std::stable_sort(patterns.begin(), patterns.end(), [](const Pattern& a, const Pattern& b) {
    return a.text.size() > b.text.size();
  });
  for (auto& v : by_first) v.clear();
  for (size_t i = 0; i < patterns.size(); ++i) {
    by_first[static_cast<unsigned char>(patterns[i].text[0])].push_back(static_cast<int>(i));
  }
}

void AddedMatcher::Split(std::vector<Piece>* pieces) const {
  if (patterns.empty()) return;
  std::vector<Piece> out;
  for (Piece& piece : *pieces) {
    if (piece.id >= 0) {
      out.push_back(std::move(piece));
      continue;
    }
    const std::string& s = piece.text;
    // (begin, end, id): id -1 for the text between tokens.
    std::vector<std::tuple<size_t, size_t, int32_t>> parts;
    size_t start_offset = 0;
    for (size_t pos = 0; pos < s.size();) {
      const Pattern* hit = nullptr;
      for (int i : by_first[static_cast<unsigned char>(s[pos])]) {
        const Pattern& p = patterns[i];
        if (s.compare(pos, p.text.size(), p.text) == 0) {
          hit = &p;
          break;  // longest first
        }
      }
      if (hit == nullptr) {
        ++pos;
        continue;
      }
      size_t start = pos, stop = pos + hit->text.size();
      pos = stop;  // the search resumes after the match itself
      if (hit->lstrip) {
        start =
            std::max(TrailingWhitespaceStart(absl::string_view(s).substr(0, start)), start_offset);
      }
      if (hit->rstrip) stop += LeadingWhitespace(absl::string_view(s).substr(stop));
      if (start_offset < start) parts.emplace_back(start_offset, start, -1);
      parts.emplace_back(start, stop, hit->id);
      start_offset = stop;
    }
    if (start_offset < s.size()) parts.emplace_back(start_offset, s.size(), -1);
    for (const auto& [b, e, id] : parts) {
      if (b >= e) continue;
      Piece p;
      p.text = s.substr(b, e - b);
      p.at_start = piece.at_start && b == 0;
      p.id = id;
      out.push_back(std::move(p));
    }
  }
  *pieces = std::move(out);
}

void BpeTokenizer::Impl::Normalize(std::string* s) const {
  for (const NormalizerStep& n : normalizer) {
    switch (n.type) {
      case NormalizerStep::Type::kPrepend:
        if (!s->empty()) s->insert(0, n.content);
        break;
      case NormalizerStep::Type::kReplace:
        ReplaceAllLiteral(s, n.pattern, n.content);
        break;
    }
  }
}

absl::StatusOr<std::vector<int32_t>> BpeTokenizer::Impl::EncodeText(absl::string_view text) const {
  if (!IsValidUtf8(text)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot encode text that is not valid UTF-8"));
  }
  std::vector<int32_t> ids;
  if (text.empty()) return ids;
  std::vector<Piece> pieces(1);
  pieces[0].text = std::string(text);
  pieces[0].at_start = true;
  raw_added.Split(&pieces);
  for (Piece& p : pieces) {
    if (p.id < 0) Normalize(&p.text);
  }
  pieces.erase(
      std::remove_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.text.empty(); }),
      pieces.end());
  normalized_added.Split(&pieces);
  for (const PreTokenizerStep& step : pre_tokenizer) RunPreTokenizer(step, &pieces);
  for (const Piece& p : pieces) {
    if (p.id >= 0) {
      ids.push_back(p.id);
    } else {
      Bpe(p.text, &ids);
    }
  }
  return ids;
}

void BpeTokenizer::Impl::Bpe(absl::string_view word, std::vector<int32_t>* out) const {
  if (ignore_merges) {
    if (auto it = vocab.find(word); it != vocab.end()) {
      out->push_back(it->second);
      return;
    }
  }
  struct Symbol {
    int32_t id;
    int prev, next;
    bool alive;
  };
  std::vector<Symbol> syms;
  const auto add = [&](int32_t id) {
    const int n = static_cast<int>(syms.size());
    if (n > 0) syms.back().next = n;
    syms.push_back({id, n - 1, -1, true});
  };
  // One symbol per code point: its token, else its <0xNN> byte tokens, else
  // the unknown token (consecutive unknowns fused into one when fuse_unk);
  // with none of those the code point is dropped, as the library does.
  bool unk_pending = false;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = Utf8Length(static_cast<unsigned char>(word[pos]));
    const absl::string_view ch = word.substr(pos, len);
    pos += len;
    if (auto it = vocab.find(ch); it != vocab.end()) {
      if (unk_pending) add(unk_id);
      unk_pending = false;
      add(it->second);
      continue;
    }
    if (byte_fallback) {
      bool all = true;
      for (unsigned char b : ch) all = all && byte_ids[b] >= 0;
      if (all) {
        // (A pending unknown is not flushed first: the library's order.)
        for (unsigned char b : ch) add(byte_ids[b]);
        continue;
      }
    }
    if (unk_id >= 0) {
      if (unk_pending && !fuse_unk) add(unk_id);
      unk_pending = true;
    }
  }
  if (unk_pending) add(unk_id);

  // Lowest rank first, then leftmost; stale entries are skipped when popped.
  struct Merge {
    uint32_t rank;
    int pos;
    int32_t new_id;
    bool operator>(const Merge& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const auto find = [&](int32_t a, int32_t b) {
    return merges.find((static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
                       static_cast<uint32_t>(b));
  };
  std::priority_queue<Merge, std::vector<Merge>, std::greater<Merge>> queue;
  for (int i = 0; i + 1 < static_cast<int>(syms.size()); ++i) {
    if (auto it = find(syms[i].id, syms[i + 1].id); it != merges.end()) {
      queue.push({it->second.first, i, it->second.second});
    }
  }
  while (!queue.empty()) {
    const Merge top = queue.top();
    queue.pop();
    Symbol& left = syms[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = syms[left.next];
    auto it = find(left.id, right.id);
    if (it == merges.end() || it->second.second != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) syms[left.next].prev = top.pos;
    if (left.prev >= 0) {
      if (auto m = find(syms[left.prev].id, left.id); m != merges.end()) {
        queue.push({m->second.first, left.prev, m->second.second});
      }
    }
    if (left.next >= 0) {
      if (auto m = find(left.id, syms[left.next].id); m != merges.end()) {
        queue.push({m->second.first, top.pos, m->second.second});
      }
    }
  }
  for (const Symbol& s : syms) {
    if (s.alive) out->push_back(s.id);
  }
}

absl::StatusOr<std::unique_ptr<BpeTokenizer::Impl>> BuildBpeImpl(BpeSpec spec) {
  auto impl = std::make_unique<BpeTokenizer::Impl>();
  impl->path = spec.source;
  int64_t max_id = -1;
  for (const auto& [token, id] : spec.vocab) {
    if (id < 0 || id >= kMaxId) {
      return SpecError(
          spec, spec.vocab_field,
          absl::StrCat("token '", token, "' has id ", id, ", outside [0, ", kMaxId, ")"));
    }
    max_id = std::max(max_id, id);
  }
  for (const BpeAddedToken& t : spec.added) max_id = std::max<int64_t>(max_id, t.id);
  if (max_id >= kMaxId) {
    return SpecError(spec, spec.added_field, absl::StrCat("id ", max_id, " is too large"));
  }
  impl->id_to_token.assign(max_id + 1, std::string());
  impl->kind.assign(max_id + 1, BpeTokenizer::Impl::kAbsent);
  impl->vocab.reserve(spec.vocab.size());
  for (const auto& [token, id] : spec.vocab) {
    const int32_t i = static_cast<int32_t>(id);
    if (impl->kind[i] != BpeTokenizer::Impl::kAbsent) {
      return SpecError(
          spec, spec.vocab_field,
          absl::StrCat("tokens '", impl->id_to_token[i], "' and '", token, "' both have id ", id));
    }
    if (!impl->vocab.emplace(token, i).second) {
      return SpecError(spec, spec.vocab_field, absl::StrCat("token '", token, "' is listed twice"));
    }
    impl->id_to_token[i] = token;
    impl->kind[i] = BpeTokenizer::Impl::kModel;
  }

  // Merges: both halves and their concatenation must be tokens. A pair
  // listed twice keeps its later rank, as the library's map does.
  impl->merges.reserve(spec.merges.size());
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [a, b] = spec.merges[rank];
    const std::string field = absl::StrCat(spec.merges_field, "[", rank, "]");
    auto ia = impl->vocab.find(a), ib = impl->vocab.find(b);
    if (ia == impl->vocab.end() || ib == impl->vocab.end()) {
      return SpecError(
          spec, field,
          absl::StrCat("merge '", a, " ", b, "' refers to token '", ia == impl->vocab.end() ? a : b,
                       "', which is not in ", spec.vocab_field));
    }
    auto im = impl->vocab.find(a + b);
    if (im == impl->vocab.end()) {
      return SpecError(spec, field,
                       absl::StrCat("merge '", a, " ", b, "' makes '", a + b, "', which is not in ",
                                    spec.vocab_field));
    }
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(ia->second)) << 32) |
                         static_cast<uint32_t>(ib->second);
    impl->merges[key] = {static_cast<uint32_t>(rank), im->second};
  }

  if (spec.has_unk) {
    auto it = impl->vocab.find(spec.unk_token);
    if (it == impl->vocab.end()) {
      return SpecError(spec, "model.unk_token",
                       absl::StrCat("'", spec.unk_token, "' is not in ", spec.vocab_field));
    }
    impl->unk_id = it->second;
  }
  impl->fuse_unk = spec.fuse_unk;
  impl->byte_fallback = spec.byte_fallback;
  impl->ignore_merges = spec.ignore_merges;
  for (int b = 0; b < 256; ++b) {
    auto it = impl->vocab.find(absl::StrFormat("<0x%02X>", b));
    impl->byte_ids[b] = it == impl->vocab.end() ? -1 : it->second;
  }
  impl->normalizer = std::move(spec.normalizer);
  impl->pre_tokenizer = std::move(spec.pre_tokenizer);
  impl->has_decoder = spec.has_decoder;
  impl->decoder = std::move(spec.decoder);

  // Added tokens get ids as the library assigns them: a token already in the
  // vocabulary keeps its id, a new one takes the next id after the
  // vocabulary (or after the last added one). The file's id must agree.
  const int64_t model_size = static_cast<int64_t>(spec.vocab.size());
  int64_t max_added = -1;
  absl::flat_hash_map<std::string, int32_t> added_ids;
  for (size_t i = 0; i < spec.added.size(); ++i) {
    const BpeAddedToken& t = spec.added[i];
    const std::string field = absl::StrCat(spec.added_field, "[", i, "]");
    if (t.content.empty()) continue;  // the library ignores these
    if (t.single_word) {
      return absl::UnimplementedError(
          absl::StrCat(spec.source, ": ", field, ": added token '", t.content,
                       "' has single_word: true, which is not implemented"));
    }
    if (added_ids.contains(t.content)) {
      return SpecError(spec, field, absl::StrCat("added token '", t.content, "' is listed twice"));
    }
    int64_t id;
    if (auto it = impl->vocab.find(t.content); it != impl->vocab.end()) {
      id = it->second;
    } else if (max_added < 0) {
      id = model_size;
    } else {
      id = max_added >= model_size || model_size == 0 ? max_added + 1 : model_size;
    }
    if (id != t.id) {
      return SpecError(
          spec, field,
          absl::StrCat("added token '", t.content, "' has id ", t.id, " but would get id ", id));
    }
    max_added = std::max(max_added, id);
    added_ids[t.content] = static_cast<int32_t>(id);
    impl->id_to_token[id] = t.content;
    impl->kind[id] = t.special ? BpeTokenizer::Impl::kSpecial : BpeTokenizer::Impl::kAdded;
    AddedMatcher::Pattern p{t.content, static_cast<int32_t>(id), t.lstrip, t.rstrip};
    if (t.normalized) {
      impl->Normalize(&p.text);
      if (p.text.empty()) continue;
      impl->normalized_added.Add(std::move(p));
    } else {
      impl->raw_added.Add(std::move(p));
    }
  }
  impl->raw_added.Finish();
  impl->normalized_added.Finish();

  for (int32_t id : spec.prefix) {
    if (id < 0 || id >= static_cast<int64_t>(impl->kind.size()) ||
        impl->kind[id] == BpeTokenizer::Impl::kAbsent) {
      return SpecError(spec, "post_processor", absl::StrCat("id ", id, " is not a token"));
    }
  }
  for (int32_t id : spec.suffix) {
    if (id < 0 || id >= static_cast<int64_t>(impl->kind.size()) ||
        impl->kind[id] == BpeTokenizer::Impl::kAbsent) {
      return SpecError(spec, "post_processor", absl::StrCat("id ", id, " is not a token"));
    }
  }
  impl->prefix = std::move(spec.prefix);
  impl->suffix = std::move(spec.suffix);
  impl->bos_id = spec.bos_id;
  impl->eos_id = spec.eos_id;
  return impl;
}

absl::StatusOr<std::vector<int32_t>> BpeTokenizer::Encode(absl::string_view text,
                                                          bool add_bos) const {
  if (add_bos && impl_->bos_id < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("tokenizer '", impl_->path, "' has no BOS token but BOS was requested"));
  }
  absl::StatusOr<std::vector<int32_t>> ids = impl_->EncodeText(text);
  if (ids.ok() && add_bos) ids->insert(ids->begin(), impl_->bos_id);
  return ids;
}

absl::StatusOr<std::vector<int32_t>> BpeTokenizer::EncodeWithSpecialTokens(
    absl::string_view text) const {
  absl::StatusOr<std::vector<int32_t>> ids = impl_->EncodeText(text);
  if (!ids.ok()) return ids;
  std::vector<int32_t> out = impl_->prefix;
  out.insert(out.end(), ids->begin(), ids->end());
  out.insert(out.end(), impl_->suffix.begin(), impl_->suffix.end());
  return out;
}

bool BpeTokenizer::HasToken(int32_t id) const {
  return id >= 0 && id < vocab_size() && impl_->kind[id] != Impl::kAbsent;
}

absl::StatusOr<std::string> BpeTokenizer::Decode(absl::Span<const int32_t> ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (!HasToken(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is not in the vocabulary of '", impl_->path, "'"));
    }
    if (impl_->kind[id] == Impl::kSpecial) continue;
    tokens.push_back(impl_->id_to_token[id]);
  }
  if (!impl_->has_decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) absl::StrAppend(&out, i ? " " : "", tokens[i]);
    return out;
  }
  for (const DecoderStep& d : impl_->decoder) tokens = RunBpeDecoder(d, std::move(tokens));
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

std::string BpeTokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return impl_->id_to_token[id];
}

int32_t BpeTokenizer::vocab_size() const { return static_cast<int32_t>(impl_->id_to_token.size()); }
int32_t BpeTokenizer::bos_id() const { return impl_->bos_id; }
int32_t BpeTokenizer::eos_id() const { return impl_->eos_id; }
bool BpeTokenizer::adds_bos() const {
  return bos_id() >= 0 && !prefix_ids().empty() && prefix_ids().front() == bos_id();
}

const std::vector<int32_t>& BpeTokenizer::prefix_ids() const { return impl_->prefix; }
const std::vector<int32_t>& BpeTokenizer::suffix_ids() const { return impl_->suffix; }
const std::string& BpeTokenizer::path() const { return impl_->path; }
const std::string& BpeTokenizer::sha256() const { return impl_->sha256; }

}  // namespace focal::model
