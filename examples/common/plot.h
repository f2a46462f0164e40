#pragma once
// PNG pictures for the examples (loss curves, attention heatmaps), drawn with PLplot's
// C++ API on its pngcairo device (Debian libplplot-dev + plplot-driver-cairo).
//
// Why PLplot rather than raw cairo: PLplot lays out axes, ticks, tick labels, legends
// (pllegend) and colour bars (plcolorbar) itself, so none of that layout code lives in
// this repository; cairo alone would give us text and lines, and we would go on writing
// the axes by hand.
//
// Every function writes `path` whole (to path + ".tmp", then renamed into place) and
// throws instead of exiting: bad input is an ag::ValueError, a file that cannot be
// written an ag::IOError, a missing PLplot device or a PLplot failure an ag::Error
// (PLplot's exit handler is replaced by one that throws, so a picture never ends a run).
#include <cstdint>
#include <string>
#include <vector>

namespace examples::plot {

struct Color {
  uint8_t r, g, b;
};

struct Series {
  std::string name;  // shown in the legend when the chart has more than one series
  std::vector<double> xs, ys;
  Color color{31, 119, 180};
};

// Every series on shared axes (800 x 500 pixels), with a log-scaled y axis when all ys
// are positive and a legend above the plot when there is more than one series.
// Non-finite points (a diverged loss) are left out, breaking the line there; a series
// whose xs and ys differ in size, or a chart with no finite point at all, is a ValueError.
void line_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                const std::string& xlabel, const std::string& ylabel);

// line_chart with a log-scaled x axis too (tools/bench_sweep's cost against length);
// an x <= 0 is a ValueError.
void log_log_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                   const std::string& xlabel, const std::string& ylabel);

// line_chart with a linear y axis whatever the values (scores such as BLEU, which a log
// axis would squeeze at the top).
void linear_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                  const std::string& xlabel, const std::string& ylabel);

// A line chart of ys against xs.
void line_chart(const std::string& path, const std::string& title, const std::vector<double>& xs,
                const std::vector<double>& ys, const std::string& xlabel, const std::string& ylabel);

// A grid of heatmaps with one colour bar: grid[r][k] is map k of grid row r, rows x cols
// values in [0, 1] row-major (values outside are clamped, NaN is a ValueError), drawn
// white -> dark blue with row_labels down the left and col_labels along the bottom of
// every map (each empty, or one per row / column) and grid_titles[r] above grid row r
// (empty, or one per grid row).
void heatmaps(const std::string& path, const std::string& title,
              const std::vector<std::vector<std::vector<double>>>& grid, int rows, int cols,
              const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
              const std::vector<std::string>& grid_titles);

// A classifier's confusion matrix: counts[t][p] examples of true class t predicted as p
// (n x n, n = labels.size()), each cell shaded by its share of its row (white -> dark
// blue) and labelled with its count; true classes down the left, predicted classes along
// the bottom. A ragged or negative table is a ValueError.
void confusion_matrix(const std::string& path, const std::string& title,
                      const std::vector<std::vector<int64_t>>& counts, const std::vector<std::string>& labels);

// Grayscale images in rows of `cols`: images[k] holds h x w values row-major, 0 black to
// 1 white (clamped; NaN is a ValueError), with captions[k] under it (one per image; a
// '\n' splits it into two lines).
void image_grid(const std::string& path, const std::string& title, const std::vector<std::vector<double>>& images,
                int h, int w, const std::vector<std::string>& captions, int cols);

// v with `digits` decimals ("%.*f").
std::string fmt(double v, int digits = 2);

}  // namespace examples::plot
