// SPDX-License-Identifier: Apache-2.0
// The per-format readers behind ReadDocs (reader.h documents each format).
// Internal to focal_datasets: callers go through ReadDocs so the id list in
// reader.cc stays the one place that names them.
#ifndef FOCAL_DATASETS_FORMATS_H_
#define FOCAL_DATASETS_FORMATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/doc.h"
#include "datasets/reader_util.h"

namespace focal::datasets {

absl::StatusOr<std::vector<Doc>> ReadArc(absl::string_view path, const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadHellaswag(absl::string_view path,
                                               const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadHellaswagLlamacpp(absl::string_view path,
                                                       const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadPiqa(absl::string_view path, const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadBoolq(absl::string_view path, const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadLambada(absl::string_view path, const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadLambadaPlain(absl::string_view path,
                                                  const ReaderOptions& options);
absl::StatusOr<std::vector<Doc>> ReadWinogrande(absl::string_view path,
                                                const ReaderOptions& options);

// HellaSwag has exactly four endings in every release.
inline constexpr int kHellaswagChoices = 4;

// The LAMBADA document for one passage (shared by both LAMBADA layouts).
Doc MakeLambadaDoc(std::string text, int64_t index);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_FORMATS_H_
