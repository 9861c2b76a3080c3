// SPDX-License-Identifier: Apache-2.0
// Inline SVG drawing primitives for the HTML report: a plot frame with a
// linear y scale, axes with "nice" ticks, bars, whiskers, polylines, point
// markers, legends and escaping. Each function returns markup ending in a
// newline; the chart layout (what goes where) is the caller's.
//
// Every number is printed with a fixed precision (coordinates "%.1f", tick
// labels as many decimals as the step needs), so the same inputs always give
// byte-identical markup. Styling is by class names (title, label, grid, axis,
// legend, whisker, sig) that the page's stylesheet defines.
#ifndef FOCAL_REPORTS_SVG_H_
#define FOCAL_REPORTS_SVG_H_

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace focal::reports::svg {

// Escapes &, <, >, " and ' for text and attribute values (the rules of both
// SVG and HTML).
std::string Escape(const std::string& s);

// A coordinate or length as markup: "%.1f".
std::string Num(double x);

// The i-th colour of a colour-blind-friendly palette (Okabe-Ito), cycled.
const char* Color(size_t i);

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `n` ticks
// over `range`; 1 when the range is not positive.
double NiceStep(double range, int n);

// The tick value `v` with as many decimals as `step` needs (0.2: one, 0.05:
// two, 0.005: three; none from 1 up).
std::string TickLabel(double v, double step);

// The plot area (pixels) and its linear y scale [ymin, ymax].
struct Frame {
  double left = 70, top = 40, width = 600, height = 300;
  double ymin = 0, ymax = 1;
  // The pixel row of value `v`.
  double Y(double v) const { return top + height * (1 - (v - ymin) / (ymax - ymin)); }
  double Bottom() const { return top + height; }
};

// Sets f's y range to hold `values` (NaNs ignored), starting at 0 or below
// for negative values: 0..1 when everything fits, 0..100 for percentages
// above 50, else rounded out to a nice step.
void FitY(const std::vector<double>& values, Frame* f);

// The pixel column of each of `xs` on a scale from `lo` to `hi` (log2 when
// `log2`), inset 20 px from both sides of the frame; the middle when lo == hi.
std::map<double, double> XPositions(const std::set<double>& xs, const Frame& f, bool log2,
                                    double lo, double hi);

// The opening <svg> tag of a w x h image with `title` as its accessible
// title and as a centred heading; Close() ends it.
std::string Open(double w, double h, const std::string& title);
std::string Close();

// The y axis with ticks, tick labels and grid lines across the frame, the x
// axis line, `xlabel` centred under the frame at `xlabel_y` and `ylabel`
// rotated along the left edge.
std::string Axes(const Frame& f, const std::string& xlabel, const std::string& ylabel,
                 double xlabel_y);

// A tick mark under the x axis at column x with `label` below it.
std::string XTick(const Frame& f, double x, const std::string& label);

// A category label under the x axis, ending at (x, y) and slanted 35 degrees.
std::string SlantedLabel(double x, double y, const std::string& label);

// A bar `width` wide at column x from the baseline (0, or ymin when above
// 0) to value v, with `tooltip`; nothing for a NaN value.
std::string Bar(const Frame& f, double x, double width, double v, const std::string& color,
                const std::string& tooltip);

// A vertical interval [lo, hi] (values) at column x with 10 px end caps.
std::string Whisker(const Frame& f, double x, double lo, double hi);

// A bold "*" centred at (x, y): a significant difference.
std::string SignificanceMark(double x, double y);

// A 2 px line through `points` (pixels, in order), dashed when `dashed`.
std::string Polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                     bool dashed);

// A 3 px dot at (x, y) (pixels) with `tooltip`.
std::string Marker(double x, double y, const std::string& color, const std::string& tooltip);

// One legend row: a swatch (a filled square when `bar`, else a line, dashed
// when `dashed`; none when `color` is empty) and `label`.
struct LegendEntry {
  std::string label;
  std::string color;
  bool dashed = false;
  bool bar = false;
};

// A legend column whose first row's text baseline is at (x, y), 20 px a row.
std::string Legend(double x, double y, const std::vector<LegendEntry>& entries);

}  // namespace focal::reports::svg

#endif  // FOCAL_REPORTS_SVG_H_
