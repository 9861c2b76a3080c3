// SPDX-License-Identifier: Apache-2.0
#include "reports/svg.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace focal::reports::svg {
namespace {

constexpr const char* kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                    "#e69f00", "#56b4e9", "#f0e442", "#000000"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

}  // namespace

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string Num(double x) { return absl::StrFormat("%.1f", x); }

const char* Color(size_t i) { return kPalette[i % kPaletteSize]; }

double NiceStep(double range, int n) {
  if (!(range > 0)) return 1;
  const double raw = range / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

std::string TickLabel(double v, double step) {
  const int digits = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return absl::StrFormat("%.*f", digits, v);
}

void FitY(const std::vector<double>& values, Frame* f) {
  double lo = 0, hi = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo >= 0 && hi <= 1) {
    f->ymin = 0;
    f->ymax = 1;
    return;
  }
  if (lo >= 0 && hi <= 100 && hi > 50) {
    f->ymin = 0;
    f->ymax = 100;
    return;
  }
  const double step = NiceStep(hi - lo, 5);
  f->ymin = std::floor(lo / step) * step;
  f->ymax = std::ceil(hi / step) * step;
  if (f->ymax <= f->ymin) f->ymax = f->ymin + 1;
}

std::map<double, double> XPositions(const std::set<double>& xs, const Frame& f, bool log2,
                                    double lo, double hi) {
  std::map<double, double> pos;
  auto t = [&](double v) { return log2 ? std::log2(v) : v; };
  for (double v : xs) {
    const double span = t(hi) - t(lo);
    const double frac = span > 0 ? (t(v) - t(lo)) / span : 0.5;
    pos[v] = f.left + 20 + (f.width - 40) * frac;
  }
  return pos;
}

std::string Open(double w, double h, const std::string& title) {
  return absl::StrCat("<svg width=\"", Num(w), "\" height=\"", Num(h), "\" viewBox=\"0 0 ", Num(w),
                      " ", Num(h), "\" role=\"img\">\n<title>", Escape(title),
                      "</title>\n<text class=\"title\" x=\"", Num(w / 2),
                      "\" y=\"22\" text-anchor=\"middle\">", Escape(title), "</text>\n");
}

std::string Close() { return "</svg>\n"; }

std::string Axes(const Frame& f, const std::string& xlabel, const std::string& ylabel,
                 double xlabel_y) {
  std::string out;
  const double step = NiceStep(f.ymax - f.ymin, 5);
  const double first = std::ceil(f.ymin / step - 1e-9);
  for (int i = 0;; ++i) {
    double v = (first + i) * step;  // by index: no accumulated rounding
    if (v > f.ymax + step * 1e-6) break;
    if (std::abs(v) < step * 1e-6) v = 0;  // never "-0.0"
    const double y = f.Y(v);
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", Num(f.left), "\" y1=\"", Num(y), "\" x2=\"",
                    Num(f.left + f.width), "\" y2=\"", Num(y), "\"/>\n<text x=\"", Num(f.left - 6),
                    "\" y=\"", Num(y + 4), "\" text-anchor=\"end\">", TickLabel(v, step),
                    "</text>\n");
  }
  absl::StrAppend(&out, "<line class=\"axis\" x1=\"", Num(f.left), "\" y1=\"", Num(f.top),
                  "\" x2=\"", Num(f.left), "\" y2=\"", Num(f.Bottom()),
                  "\"/>\n<line class=\"axis\" x1=\"", Num(f.left), "\" y1=\"", Num(f.Bottom()),
                  "\" x2=\"", Num(f.left + f.width), "\" y2=\"", Num(f.Bottom()), "\"/>\n");
  absl::StrAppend(&out, "<text class=\"label\" x=\"", Num(f.left + f.width / 2), "\" y=\"",
                  Num(xlabel_y), "\" text-anchor=\"middle\">", Escape(xlabel), "</text>\n");
  const double cy = f.top + f.height / 2;
  absl::StrAppend(&out, "<text class=\"label\" x=\"18\" y=\"", Num(cy),
                  "\" text-anchor=\"middle\" transform=\"rotate(-90 18 ", Num(cy), ")\">",
                  Escape(ylabel), "</text>\n");
  return out;
}

std::string XTick(const Frame& f, double x, const std::string& label) {
  return absl::StrCat("<line class=\"axis\" x1=\"", Num(x), "\" y1=\"", Num(f.Bottom()), "\" x2=\"",
                      Num(x), "\" y2=\"", Num(f.Bottom() + 5), "\"/>\n<text x=\"", Num(x),
                      "\" y=\"", Num(f.Bottom() + 19), "\" text-anchor=\"middle\">", Escape(label),
                      "</text>\n");
}

std::string SlantedLabel(double x, double y, const std::string& label) {
  return absl::StrCat("<text x=\"", Num(x), "\" y=\"", Num(y),
                      "\" text-anchor=\"end\" transform=\"rotate(-35 ", Num(x), " ", Num(y), ")\">",
                      Escape(label), "</text>\n");
}

std::string Bar(const Frame& f, double x, double width, double v, const std::string& color,
                const std::string& tooltip) {
  if (std::isnan(v)) return "";
  const double y0 = f.Y(std::max(0.0, f.ymin)), y1 = f.Y(v);
  return absl::StrCat("<rect x=\"", Num(x), "\" y=\"", Num(std::min(y0, y1)), "\" width=\"",
                      Num(width), "\" height=\"", Num(std::abs(y0 - y1)), "\" fill=\"", color,
                      "\"><title>", Escape(tooltip), "</title></rect>\n");
}

std::string Whisker(const Frame& f, double x, double lo, double hi) {
  const double ylo = f.Y(lo), yhi = f.Y(hi);
  return absl::StrCat("<g class=\"whisker\"><line x1=\"", Num(x), "\" y1=\"", Num(ylo), "\" x2=\"",
                      Num(x), "\" y2=\"", Num(yhi), "\"/><line x1=\"", Num(x - 5), "\" y1=\"",
                      Num(ylo), "\" x2=\"", Num(x + 5), "\" y2=\"", Num(ylo), "\"/><line x1=\"",
                      Num(x - 5), "\" y1=\"", Num(yhi), "\" x2=\"", Num(x + 5), "\" y2=\"",
                      Num(yhi), "\"/></g>\n");
}

std::string SignificanceMark(double x, double y) {
  return absl::StrCat("<text class=\"sig\" x=\"", Num(x), "\" y=\"", Num(y),
                      "\" text-anchor=\"middle\">*</text>\n");
}

std::string Polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                     bool dashed) {
  std::string pts;
  for (const auto& [x, y] : points) {
    absl::StrAppend(&pts, pts.empty() ? "" : " ", Num(x), ",", Num(y));
  }
  return absl::StrCat("<polyline fill=\"none\" stroke=\"", color, "\" stroke-width=\"2\"",
                      dashed ? " stroke-dasharray=\"6 4\"" : "", " points=\"", pts, "\"/>\n");
}

std::string Marker(double x, double y, const std::string& color, const std::string& tooltip) {
  return absl::StrCat("<circle cx=\"", Num(x), "\" cy=\"", Num(y), "\" r=\"3\" fill=\"", color,
                      "\"><title>", Escape(tooltip), "</title></circle>\n");
}

std::string Legend(double x, double y, const std::vector<LegendEntry>& entries) {
  std::string out = "<g class=\"legend\">\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const double ey = y + 20.0 * static_cast<double>(i);
    if (e.color.empty()) {
      // text only
    } else if (e.bar) {
      absl::StrAppend(&out, "<rect x=\"", Num(x), "\" y=\"", Num(ey - 9),
                      "\" width=\"14\" height=\"10\" fill=\"", e.color, "\"/>\n");
    } else {
      absl::StrAppend(&out, "<line x1=\"", Num(x), "\" y1=\"", Num(ey - 4), "\" x2=\"", Num(x + 20),
                      "\" y2=\"", Num(ey - 4), "\" stroke=\"", e.color, "\" stroke-width=\"2\"",
                      e.dashed ? " stroke-dasharray=\"5 3\"" : "", "/>\n");
    }
    absl::StrAppend(&out, "<text x=\"", Num(x + 26), "\" y=\"", Num(ey), "\">", Escape(e.label),
                    "</text>\n");
  }
  absl::StrAppend(&out, "</g>\n");
  return out;
}

}  // namespace focal::reports::svg
