// SPDX-License-Identifier: Apache-2.0
#include "datasets/reader_util.h"

#include <bzlib.h>
#include <zlib.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/file_util.h"
#include "base/status_macros.h"

namespace focal::datasets {
namespace {

bool IsBlank(absl::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<Line>> SplitLines(absl::string_view contents, absl::string_view path) {
  std::vector<Line> lines;
  int64_t number = 0;
  while (!contents.empty()) {
    size_t nl = contents.find('\n');
    absl::string_view text = contents.substr(0, nl);
    contents.remove_prefix(nl == absl::string_view::npos ? contents.size() : nl + 1);
    // CRLF files (edited on Windows) read like LF files; a '\r' left on the
    // last word would otherwise change LAMBADA targets without any error.
    if (absl::EndsWith(text, "\r")) text.remove_suffix(1);
    lines.push_back({text, ++number});
  }
  while (!lines.empty() && IsBlank(lines.back().text)) lines.pop_back();
  for (const Line& line : lines) {
    if (IsBlank(line.text)) return LineError(path, line.number, "blank line");
  }
  return lines;
}

namespace {

// gunzip of a whole .gz file (several members allowed, as gzip writes them).
absl::StatusOr<std::string> Gunzip(absl::string_view path, const std::string& raw) {
  z_stream strm{};
  if (inflateInit2(&strm, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("cannot initialise gzip decompression");
  }
  std::string out;
  char buf[1 << 16];
  strm.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  strm.avail_in = static_cast<uInt>(raw.size());
  int rc = Z_OK;
  while (true) {
    strm.next_out = reinterpret_cast<Bytef*>(buf);
    strm.avail_out = sizeof(buf);
    rc = inflate(&strm, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - strm.avail_out);
    if (rc == Z_STREAM_END && strm.avail_in > 0) {
      rc = inflateReset(&strm);  // the next gzip member
      if (rc != Z_OK) break;
      continue;
    }
    if (rc != Z_OK) break;
    if (strm.avail_in == 0 && strm.avail_out != 0) break;  // truncated input
  }
  inflateEnd(&strm);
  if (rc != Z_STREAM_END) {
    return absl::DataLossError(
        absl::StrCat(path, ": corrupt or truncated gzip data (zlib error ", rc, ")"));
  }
  return out;
}

}  // namespace

// Reads `path`, decompressing it when it ends in ".bz2" (the form the
// llama.cpp HellaSwag file is distributed in) or ".gz" (lost-in-the-middle's
// files, used by HELMET).
absl::StatusOr<std::string> ReadDataFile(absl::string_view path) {
  FOCAL_ASSIGN_OR_RETURN(std::string raw, ReadFile(path));
  if (absl::EndsWith(path, ".gz")) return Gunzip(path, raw);
  if (!absl::EndsWith(path, ".bz2")) return raw;
  bz_stream strm{};
  if (BZ2_bzDecompressInit(&strm, 0, 0) != BZ_OK) {
    return absl::InternalError("cannot initialise bzip2 decompression");
  }
  std::string out;
  char buf[1 << 16];
  strm.next_in = raw.data();
  strm.avail_in = static_cast<unsigned int>(raw.size());
  int rc = BZ_OK;
  while (rc == BZ_OK) {
    strm.next_out = buf;
    strm.avail_out = sizeof(buf);
    rc = BZ2_bzDecompress(&strm);
    out.append(buf, sizeof(buf) - strm.avail_out);
    if (rc == BZ_OK && strm.avail_in == 0 && strm.avail_out != 0) break;  // truncated input
  }
  BZ2_bzDecompressEnd(&strm);
  if (rc != BZ_STREAM_END) {
    return absl::DataLossError(
        absl::StrCat(path, ": corrupt or truncated bzip2 data (bzip2 error ", rc, ")"));
  }
  return out;
}

absl::StatusOr<std::vector<Line>> ReadLines(absl::string_view path, std::string* storage) {
  FOCAL_ASSIGN_OR_RETURN(*storage, ReadDataFile(path));
  return SplitLines(*storage, path);
}

absl::Status LineError(absl::string_view path, int64_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", what));
}

absl::StatusOr<JsonRecord> JsonRecord::Parse(const Line& line, absl::string_view path) {
  const std::string source = absl::StrCat(path, ":", line.number);
  absl::StatusOr<JsonValue> value = ParseJson(line.text, source);
  if (!value.ok()) {
    // The parser sees one line, so its position reads "<source>:1:<col>";
    // turn that into the position in the file, "<path>:<line>:<col>".
    absl::string_view msg = value.status().message();
    const std::string prefix = absl::StrCat(source, ":1:");
    if (absl::ConsumePrefix(&msg, prefix)) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", msg));
    }
    return value.status();
  }
  if (!value->is_object()) return LineError(path, line.number, "expected a JSON object");
  return JsonRecord(*std::move(value), std::string(path), line.number);
}

JsonRecord JsonRecord::FromArrayElement(JsonValue value, std::string path, int64_t index) {
  JsonRecord r(std::move(value), std::move(path), index);
  r.array_element_ = true;
  return r;
}

absl::Status JsonRecord::Error(absl::string_view what) const {
  if (array_element_) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": record ", line_, ": ", what));
  }
  return LineError(path_, line_, what);
}

absl::Status JsonRecord::FieldError(absl::string_view field, absl::string_view what) const {
  return Error(absl::StrCat("field '", field, "' ", what));
}

const JsonValue* JsonRecord::Find(absl::string_view field, const JsonValue* obj) const {
  const JsonValue* v = (obj == nullptr ? value_ : *obj).Find(field);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

absl::StatusOr<const JsonValue*> JsonRecord::Get(absl::string_view field, const JsonValue* obj,
                                                 absl::string_view name) const {
  const JsonValue* v = Find(field, obj);
  if (v == nullptr) {
    return Error(absl::StrCat("missing field '", name.empty() ? field : name, "'"));
  }
  return v;
}

absl::StatusOr<std::string> JsonRecord::String(absl::string_view field, const JsonValue* obj,
                                               absl::string_view name) const {
  FOCAL_ASSIGN_OR_RETURN(const JsonValue* v, Get(field, obj, name));
  if (!v->is_string()) return FieldError(name.empty() ? field : name, "must be a string");
  return v->string_value();
}

absl::StatusOr<std::vector<JsonRecord>> ReadJsonl(absl::string_view path) {
  std::string contents;
  FOCAL_ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, &contents));
  std::vector<JsonRecord> records;
  records.reserve(lines.size());
  for (const Line& line : lines) {
    FOCAL_ASSIGN_OR_RETURN(JsonRecord record, JsonRecord::Parse(line, path));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<JsonRecord>> ReadJsonRecords(absl::string_view path) {
  FOCAL_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  const size_t first = contents.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || contents[first] != '[') return ReadJsonl(path);
  FOCAL_ASSIGN_OR_RETURN(JsonValue all, ParseJson(contents, path));
  std::vector<JsonRecord> records;
  records.reserve(all.array().size());
  for (size_t i = 0; i < all.array().size(); ++i) {
    if (!all.array()[i].is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": record ", i, ": expected a JSON object"));
    }
    records.push_back(
        JsonRecord::FromArrayElement(all.array()[i], std::string(path), static_cast<int64_t>(i)));
  }
  return records;
}

}  // namespace focal::datasets
