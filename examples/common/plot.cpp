// PLplot drawing for examples/common/plot.h. PLplot keeps global state (the current
// stream, the exit handler), so one picture is drawn at a time, under a mutex.
#include "common/plot.h"

#include <attograd/error.h>
#include <plplot/plstream.h>

#include "common/plot_page.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace examples::plot {

using namespace detail;

namespace {

// Positions of the labelled ticks of a log axis spanning [lo, hi] (log10 units): the
// mantissas 1..9, or 1, 2, 5, or 1 alone, whichever gives at most 8 labels; halves
// (1, 1.5, .., 9.5) when 1..9 gives fewer than 3 (a range within one decade).
std::vector<double> log_ticks(double lo, double hi) {
  auto at = [&](const std::vector<double>& mantissas) {
    std::vector<double> t;
    for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e)
      for (double m : mantissas)
        if (double v = e + std::log10(m); v >= lo && v <= hi) t.push_back(v);
    return t;
  };
  std::vector<double> halves;
  for (double m = 1; m < 10; m += 0.5) halves.push_back(m);
  for (const auto& ms : {std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 5}, {1}}) {
    std::vector<double> t = at(ms);
    if (ms.size() == 9 && t.size() < 3) return at(halves);
    if (t.size() <= 8 || ms.size() == 1) return t;
  }
  return {};
}

std::string tick_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  // From a thousand up to a million in full ("2000", not "2e+03"): sequence lengths, MiB.
  if (double r = std::strtod(buf, nullptr); r >= 1000 && r < 1e6) std::snprintf(buf, sizeof buf, "%.0f", r);
  return buf;
}

// Tick labels of a heatmap: the token of the cell centred on `value` (cells sit at
// integers), counting rows from the top.
struct TokenAxes {
  const std::vector<std::string>* rows;
  const std::vector<std::string>* cols;
};

void token_label(PLINT axis, PLFLT value, char* label, PLINT length, PLPointer data) {
  const auto* t = static_cast<const TokenAxes*>(data);
  const auto& names = axis == PL_X_AXIS ? *t->cols : *t->rows;
  long i = std::lround(value);
  if (axis != PL_X_AXIS) i = static_cast<long>(names.size()) - 1 - i;
  std::string s = i >= 0 && i < static_cast<long>(names.size()) ? names[static_cast<std::size_t>(i)] : "";
  std::snprintf(label, static_cast<std::size_t>(length), "%s", s.c_str());
}

}  // namespace

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// ---- line charts ---------------------------------------------------------------------

namespace {

// line_chart and log_log_chart: see plot.h.
void draw_lines(const std::string& path, const std::string& title, const std::vector<Series>& series,
                const std::string& xlabel, const std::string& ylabel, bool log_x, bool linear_y = false) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  bool logy = !linear_y;
  for (const Series& s : series) {
    AG_CHECK(s.xs.size() == s.ys.size(), ValueError, "line_chart: series '", s.name, "' has ", s.xs.size(), " xs but ",
             s.ys.size(), " ys (", path, ")");
    for (std::size_t i = 0; i < s.xs.size(); ++i) {
      if (!std::isfinite(s.xs[i]) || !std::isfinite(s.ys[i])) continue;
      AG_CHECK(!log_x || s.xs[i] > 0, ValueError, "line_chart: log x axis but series '", s.name, "' has x ", s.xs[i],
               " (", path, ")");
      x0 = std::min(x0, s.xs[i]), x1 = std::max(x1, s.xs[i]);
      y0 = std::min(y0, s.ys[i]), y1 = std::max(y1, s.ys[i]);
      logy = logy && s.ys[i] > 0;
    }
  }
  AG_CHECK(x0 <= x1, ValueError, "line_chart: no finite point to draw in ", series.size(), " series (", path, ")");
  auto ty = [&](double v) { return logy ? std::log10(v) : v; };
  auto tx = [&](double v) { return log_x ? std::log10(v) : v; };
  x0 = tx(x0), x1 = tx(x1);
  if (x1 - x0 < 1e-12) x0 -= 0.5, x1 += 0.5;
  y0 = ty(y0), y1 = ty(y1);
  if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
  const double pad = 0.04 * (y1 - y0);  // keeps the curve's ends off the frame
  y0 -= pad, y1 += pad;

  std::lock_guard<std::mutex> lock(plplot_mutex());
  Page page(path, 800, 500);
  page->scmap0n(static_cast<PLINT>(kFirstSeries + series.size()));
  page->scol0(0, 255, 255, 255);
  page->scol0(kInk, 40, 40, 40);
  page->scol0(kGrid, 225, 225, 225);
  const bool legend = series.size() > 1;
  // More than four names take two legend rows (six names in one row run off the page).
  const PLINT legend_cols = static_cast<PLINT>(series.size() <= 4 ? series.size() : (series.size() + 1) / 2);
  const PLINT legend_rows = legend_cols > 0 ? (static_cast<PLINT>(series.size()) + legend_cols - 1) / legend_cols : 1;
  page->vpor(0.11, 0.97, 0.13, legend ? (legend_rows > 1 ? 0.74 : 0.80) : 0.87);
  page->wind(x0, x1, y0, y1);
  page.text_px(17);

  // Grid first, under the curves; then the frame with its ticks and numbers.
  page->col0(kGrid);
  page->width(1);
  std::vector<double> yticks = logy ? log_ticks(y0, y1) : std::vector<double>{};
  std::vector<double> xticks = log_x ? log_ticks(x0, x1) : std::vector<double>{};
  page->box(log_x ? "" : "g", 0, 0, logy ? "" : "g", 0, 0);
  for (double v : yticks) page->join(x0, v, x1, v);
  for (double v : xticks) page->join(v, y0, v, y1);
  page->col0(kInk);
  page->box(log_x ? "bcstl" : "bcnst", 0, 0, logy ? "bcstl" : "bcnstv", 0, 0);
  for (double v : yticks) page->mtex("lv", 0.8, (v - y0) / (y1 - y0), 1.0, tick_text(std::pow(10.0, v)).c_str());
  for (double v : xticks) page->mtex("b", 1.5, (v - x0) / (x1 - x0), 0.5, tick_text(std::pow(10.0, v)).c_str());
  page->mtex("b", 3.2, 0.5, 0.5, (xlabel + (log_x ? ", log scale" : "")).c_str());
  page->mtex("l", 5.5, 0.5, 0.5, (ylabel + (logy ? ", log scale" : "")).c_str());

  page->width(2);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const PLINT col = static_cast<PLINT>(kFirstSeries + k);
    page->scol0(col, s.color.r, s.color.g, s.color.b);
    page->col0(col);
    // Runs of finite points are drawn as lines, a lone point as a dot.
    std::vector<PLFLT> rx, ry;
    auto flush = [&] {
      if (rx.size() == 1) page->string(1, rx.data(), ry.data(), "•");
      if (rx.size() > 1) page->line(static_cast<PLINT>(rx.size()), rx.data(), ry.data());
      rx.clear(), ry.clear();
    };
    for (std::size_t i = 0; i < s.xs.size(); ++i) {
      if (!std::isfinite(s.xs[i]) || !std::isfinite(s.ys[i]) || (logy && s.ys[i] <= 0)) {
        flush();
        continue;
      }
      rx.push_back(tx(s.xs[i])), ry.push_back(ty(s.ys[i]));
    }
    flush();
  }
  page->width(1);

  if (legend) {  // one or two rows above the frame, never over a curve
    std::vector<PLINT> opts(series.size(), PL_LEGEND_LINE), colors(series.size()), styles(series.size(), 1);
    std::vector<PLFLT> widths(series.size(), 2.0);
    std::vector<const char*> names(series.size());
    for (std::size_t k = 0; k < series.size(); ++k)
      colors[k] = static_cast<PLINT>(kFirstSeries + k), names[k] = series[k].name.c_str();
    std::vector<PLINT> text_colors(series.size(), kInk);
    PLFLT w = 0, h = 0;
    page->legend(&w, &h, PL_LEGEND_ROW_MAJOR, PL_POSITION_TOP | PL_POSITION_OUTSIDE, 0.0, 0.02, 0.06, 0, kInk, 1,
                 legend_rows, legend_cols, static_cast<PLINT>(series.size()), opts.data(), 1.0, 1.0, 2.0, 0.0,
                 text_colors.data(), names.data(), nullptr, nullptr, nullptr, nullptr, colors.data(), styles.data(),
                 widths.data(), nullptr, nullptr, nullptr, nullptr);
  }
  page->col0(kInk);
  page.text_px(24);
  page->mtex("t", legend ? (legend_rows > 1 ? 4.6 : 3.2) : 1.6, 0.0, 0.0, title.c_str());
  page.finish();
}

}  // namespace

void line_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                const std::string& xlabel, const std::string& ylabel) {
  draw_lines(path, title, series, xlabel, ylabel, false);
}

void log_log_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                   const std::string& xlabel, const std::string& ylabel) {
  draw_lines(path, title, series, xlabel, ylabel, true);
}

void linear_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                  const std::string& xlabel, const std::string& ylabel) {
  draw_lines(path, title, series, xlabel, ylabel, false, true);
}

void line_chart(const std::string& path, const std::string& title, const std::vector<double>& xs,
                const std::vector<double>& ys, const std::string& xlabel, const std::string& ylabel) {
  line_chart(path, title, std::vector<Series>{{"", xs, ys}}, xlabel, ylabel);
}

// ---- heatmaps ------------------------------------------------------------------------

void heatmaps(const std::string& path, const std::string& title,
              const std::vector<std::vector<std::vector<double>>>& grid, int rows, int cols,
              const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
              const std::vector<std::string>& grid_titles) {
  AG_CHECK(rows > 0 && cols > 0, ValueError, "heatmaps: maps of ", rows, " x ", cols, " (", path, ")");
  AG_CHECK(!grid.empty(), ValueError, "heatmaps: no maps to draw (", path, ")");
  std::size_t most = 0;
  for (std::size_t r = 0; r < grid.size(); ++r) {
    most = std::max(most, grid[r].size());
    for (std::size_t k = 0; k < grid[r].size(); ++k) {
      AG_CHECK(grid[r][k].size() == static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), ValueError,
               "heatmaps: map ", k, " of grid row ", r, " has ", grid[r][k].size(), " values, not ", rows, " x ", cols,
               " (", path, ")");
      for (double v : grid[r][k])
        AG_CHECK(!std::isnan(v), ValueError, "heatmaps: NaN in map ", k, " of grid row ", r, " (", path, ")");
    }
  }
  AG_CHECK(most > 0, ValueError, "heatmaps: no maps to draw (", path, ")");
  AG_CHECK(row_labels.empty() || row_labels.size() == static_cast<std::size_t>(rows), ValueError,
           "heatmaps: ", row_labels.size(), " row labels for ", rows, " rows (", path, ")");
  AG_CHECK(col_labels.empty() || col_labels.size() == static_cast<std::size_t>(cols), ValueError,
           "heatmaps: ", col_labels.size(), " column labels for ", cols, " columns (", path, ")");
  AG_CHECK(grid_titles.empty() || grid_titles.size() == grid.size(), ValueError, "heatmaps: ", grid_titles.size(),
           " titles for ", grid.size(), " grid rows (", path, ")");

  // Layout in pixels: a title band, then per grid row its title, "head k" and the maps
  // with their tick labels; the colour bar on the right. Room for the tokens: about 8 px
  // a character at 13 px; column tokens longer than 3 characters are written upward.
  auto longest = [](const std::vector<std::string>& v) {
    std::size_t n = 0;
    for (const auto& t : v) n = std::max(n, t.size());
    return static_cast<int>(n);
  };
  const bool upright = longest(col_labels) > 3;
  const int cell = 24, right = 120, top = 56, row_head = 48, foot = 34;
  const int left = std::max(50, 8 * longest(row_labels) + 16), gap = left - 4;
  const int row_foot = upright ? 8 * longest(col_labels) + 26 : 44;
  const int mw = cols * cell, mh = rows * cell;
  const int W = left + static_cast<int>(most) * mw + (static_cast<int>(most) - 1) * gap + right;
  const int per_row = row_head + mh + row_foot;
  const int H = top + static_cast<int>(grid.size()) * per_row + foot;
  auto nx = [&](double px) { return px / W; };
  auto ny = [&](double py) { return 1.0 - py / H; };  // pixels count down, PLplot up

  std::lock_guard<std::mutex> lock(plplot_mutex());
  Page page(path, W, H);
  page->scmap1n(256);
  {  // white -> dark blue
    const PLFLT at[] = {0, 1}, r[] = {1, 30 / 255.0}, g[] = {1, 75 / 255.0}, b[] = {1, 165 / 255.0};
    page->scmap1l(true, 2, at, r, g, b);
  }
  TokenAxes axes{&row_labels, &col_labels};
  page->slabelfunc(token_label, &axes);

  for (std::size_t r = 0; r < grid.size(); ++r) {
    const double oy = top + static_cast<double>(r) * per_row + row_head;  // top of this row's maps
    if (!grid_titles.empty()) {
      page->vpor(nx(left), nx(W - right), ny(oy), ny(oy - row_head));
      page.text_px(16);
      page->mtex("t", -1.1, 0.0, 0.0, grid_titles[r].c_str());
    }
    for (std::size_t k = 0; k < grid[r].size(); ++k) {
      const double ox = left + static_cast<double>(k) * (mw + gap);
      page->vpor(nx(ox), nx(ox + mw), ny(oy + mh), ny(oy));
      page->wind(-0.5, cols - 0.5, -0.5, rows - 0.5);  // cell (i, j) centred on (j, rows - 1 - i)
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
          const double v =
              grid[r][k][static_cast<std::size_t>(i) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
          const PLFLT y = rows - 1 - i;  // row 0 at the top
          const PLFLT xs[] = {j - 0.5, j + 0.5, j + 0.5, j - 0.5}, ys[] = {y - 0.5, y - 0.5, y + 0.5, y + 0.5};
          page->col1(std::clamp(v, 0.0, 1.0));
          page->fill(4, xs, ys);
        }
      page->col0(kInk);
      page->box("bc", 0, 0, "bc", 0, 0);
      page.text_px(13);
      // Tokens as tick labels: plbox labels only ticked axes ("t"), turned outward ("i").
      if (!col_labels.empty()) page->box(upright ? "bit" : "bnoit", 1, 1, "", 0, 0);
      for (int j = 0; upright && j < cols; ++j)  // plbox cannot turn x labels: mtex "bv" does
        page->mtex("bv", 0.9, (j + 0.5) / cols, 1.0, col_labels[static_cast<std::size_t>(j)].c_str());
      if (!row_labels.empty()) page->box("", 0, 0, "bnoitv", 1, 1);
      page.text_px(14);
      page->mtex("t", 0.9, 0.0, 0.0, ("head " + std::to_string(k + 1)).c_str());
    }
  }

  // One colour bar for every map, beside the first grid row's maps.
  const double bar_x = W - right + 24, bar_top = top + row_head, bar_h = std::min(mh, 260);
  page->vpor(nx(bar_x), nx(bar_x + 16), ny(bar_top + bar_h), ny(bar_top));
  page->wind(0, 1, 0, 1);
  page.text_px(12);
  {
    const char* label = "weight";
    const char* axis_opts = "bcvtm";
    PLINT label_opt = PL_COLORBAR_LABEL_TOP, sub_ticks = 0, n_values = 2;
    PLFLT ticks = 0.2, w = 0, h = 0;
    const PLFLT range[] = {0.0, 1.0};
    const PLFLT* values[] = {range};
    page->colorbar(&w, &h, PL_COLORBAR_GRADIENT, PL_POSITION_LEFT | PL_POSITION_INSIDE | PL_POSITION_VIEWPORT, 0, 0, 1,
                   1, 0, kInk, 1, 0, 0, kInk, 1, 1, &label_opt, &label, 1, &axis_opts, &ticks, &sub_ticks, &n_values,
                   values);
  }
  page->vpor(0, 1, 0, 1);
  page.text_px(22);
  page->mtex("t", -1.6, nx(left), 0.0, title.c_str());
  page.text_px(13);
  page->mtex("b", -1.4, nx(left), 0.0, "rows: output token (query)    columns: source token (key)");
  page.finish();
}

}  // namespace examples::plot
