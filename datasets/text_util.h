// SPDX-License-Identifier: Apache-2.0
// String transforms that must reproduce Python (lm-eval) byte for byte,
// since any difference changes the scored text. Exposed for tests.
#ifndef FOCAL_DATASETS_TEXT_UTIL_H_
#define FOCAL_DATASETS_TEXT_UTIL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace focal::datasets {

// Python str.strip(): removes leading and trailing characters for which
// str.isspace() is true, including the non-ASCII ones (NBSP, U+2000..U+200A,
// U+3000, ...) in UTF-8.
absl::string_view PyStrip(absl::string_view s);

// Python str.capitalize(): first character upper-cased, all others
// lower-cased. Handles ASCII and the Latin-1 letters (U+00C0..U+00FE); other
// characters are copied unchanged, so UTF-8 is never corrupted (Python would
// also change e.g. Greek or Cyrillic letters; HellaSwag's WikiHow/ActivityNet
// contexts are English).
std::string PyCapitalize(absl::string_view s);

// lm-eval's hellaswag utils.py preprocess():
//   text = text.strip()
//   text = text.replace(" [title]", ". ")
//   text = re.sub("\\[.*?\\]", "", text)
//   text = text.replace("  ", " ")
// Both replaces are Python's single left-to-right pass over non-overlapping
// matches, so "   " becomes "  ", not " ".
std::string HellaswagPreprocess(absl::string_view text);

// LAMBADA's split, as lm-eval's templates do it: context =
// ' '.join(text.split(' ')[:-1]) and target = ' ' + text.split(' ')[-1].
// Splitting on ' ' (not on whitespace) keeps the empty words of double
// spaces, so the context keeps them too.
struct LastWordSplit {
  std::string context;
  std::string target;
};
LastWordSplit SplitLastWord(absl::string_view text);

}  // namespace focal::datasets

#endif  // FOCAL_DATASETS_TEXT_UTIL_H_
