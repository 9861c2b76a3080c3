// SPDX-License-Identifier: Apache-2.0
// The comparison report as one self-contained HTML page: the Markdown
// report's header and table plus inline SVG charts composed here from the
// primitives of reports/svg.h (no scripts, no network, no external styles or
// fonts).
#ifndef FOCAL_REPORTS_HTML_REPORT_H_
#define FOCAL_REPORTS_HTML_REPORT_H_

#include <string>

#include "reports/results.pb.h"

namespace focal::reports {

// Deterministic: the same report gives byte-identical HTML. Charts:
//  1. per (task, metric) bars of base and each focal model, with the focal's
//     paired interval of the difference as a whisker (base + ci);
//  2. RULER average vs context length, one line per model;
//  3. hotpotqa_long substring_match vs gold depth, one line per model and
//     length.
// A chart without data is replaced by a note.
std::string ComparisonHtml(const ComparisonReport& report);

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(const std::string& s);

}  // namespace focal::reports

#endif  // FOCAL_REPORTS_HTML_REPORT_H_
