#pragma once
// Small PNG pictures without a plotting library, shared by the examples: an RGB canvas,
// a 3x5 pixel font for labels, line charts (one or more series) and a grid of heatmaps,
// written with libpng's simplified API.
#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace examples::plot {

struct Color {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int w, int h, Color bg = {255, 255, 255}) : w_(w), h_(h), px_(static_cast<std::size_t>(w * h * 3)) {
    for (int i = 0; i < w * h; ++i) set_index(i, bg);
  }
  int width() const { return w_; }
  int height() const { return h_; }

  void set(int x, int y, Color c) {
    if (x >= 0 && y >= 0 && x < w_ && y < h_) set_index(y * w_ + x, c);
  }
  void rect(int x0, int y0, int x1, int y1, Color c) {
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) set(x, y, c);
  }
  void line(int x0, int y0, int x1, int y1, Color c, int thick = 1) {
    int n = std::max(std::abs(x1 - x0), std::abs(y1 - y0)) + 1;
    for (int i = 0; i <= n; ++i) {
      int x = x0 + (x1 - x0) * i / n, y = y0 + (y1 - y0) * i / n;
      rect(x - thick / 2, y - thick / 2, x - thick / 2 + thick, y - thick / 2 + thick, c);
    }
  }
  // Text in the 3x5 font at `scale` pixels per font pixel; returns the width drawn.
  int text(int x, int y, const std::string& s, Color c, int scale = 2);

  void save(const std::string& path) const {
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    img.width = static_cast<png_uint_32>(w_);
    img.height = static_cast<png_uint_32>(h_);
    img.format = PNG_FORMAT_RGB;
    std::string tmp = path + ".tmp";  // written whole, then renamed into place
    if (!png_image_write_to_file(&img, tmp.c_str(), 0, px_.data(), 0, nullptr) ||
        std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw std::runtime_error("plot: cannot write " + path + ": " + img.message);
    }
  }

 private:
  void set_index(int i, Color c) {
    px_[static_cast<std::size_t>(i) * 3] = c.r;
    px_[static_cast<std::size_t>(i) * 3 + 1] = c.g;
    px_[static_cast<std::size_t>(i) * 3 + 2] = c.b;
  }
  int w_, h_;
  std::vector<uint8_t> px_;
};

// 3x5 glyphs, one row per 3 bits (MSB = left column).
inline const std::array<uint8_t, 5>* glyph(char ch) {
  struct G {
    char c;
    std::array<uint8_t, 5> rows;
  };
  static const G font[] = {
      {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
      {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
      {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
      {':', {0, 2, 0, 2, 0}}, {'/', {1, 1, 2, 4, 4}}, {'%', {5, 1, 2, 4, 5}}, {'(', {1, 2, 2, 2, 1}},
      {')', {4, 2, 2, 2, 4}}, {'=', {0, 7, 0, 7, 0}}, {',', {0, 0, 0, 2, 4}}, {'A', {2, 5, 7, 5, 5}},
      {'B', {6, 5, 6, 5, 6}}, {'C', {3, 4, 4, 4, 3}}, {'D', {6, 5, 5, 5, 6}}, {'E', {7, 4, 6, 4, 7}},
      {'F', {7, 4, 6, 4, 4}}, {'G', {3, 4, 5, 5, 3}}, {'H', {5, 5, 7, 5, 5}}, {'I', {7, 2, 2, 2, 7}},
      {'J', {1, 1, 1, 5, 2}}, {'K', {5, 5, 6, 5, 5}}, {'L', {4, 4, 4, 4, 7}}, {'M', {5, 7, 7, 5, 5}},
      {'N', {6, 5, 5, 5, 5}}, {'O', {2, 5, 5, 5, 2}}, {'P', {6, 5, 6, 4, 4}}, {'Q', {2, 5, 5, 6, 3}},
      {'R', {6, 5, 6, 5, 5}}, {'S', {3, 4, 2, 1, 6}}, {'T', {7, 2, 2, 2, 2}}, {'U', {5, 5, 5, 5, 7}},
      {'V', {5, 5, 5, 5, 2}}, {'W', {5, 5, 5, 7, 5}}, {'X', {5, 5, 2, 5, 5}}, {'Y', {5, 5, 2, 2, 2}},
      {'Z', {7, 1, 2, 4, 7}},
  };
  char u = (ch >= 'a' && ch <= 'z') ? static_cast<char>(ch - 'a' + 'A') : ch;
  for (const auto& g : font)
    if (g.c == u) return &g.rows;
  return nullptr;  // space and anything unknown draw nothing
}

inline int Canvas::text(int x, int y, const std::string& s, Color c, int scale) {
  int x0 = x;
  for (char ch : s) {
    if (const auto* g = glyph(ch))
      for (int r = 0; r < 5; ++r)
        for (int col = 0; col < 3; ++col)
          if ((*g)[r] >> (2 - col) & 1) rect(x + col * scale, y + r * scale, x + (col + 1) * scale, y + (r + 1) * scale, c);
    x += 4 * scale;
  }
  return x - x0;
}

inline std::string fmt(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct Series {
  std::string name;  // shown in the legend when the chart has more than one series
  std::vector<double> xs, ys;
  Color color{31, 119, 180};
};

// Line charts of every series on shared axes, with a log-scaled y axis when all ys are
// positive.
inline void line_chart(const std::string& path, const std::string& title, const std::vector<Series>& series,
                       const std::string& xlabel, const std::string& ylabel) {
  const int W = 720, H = 450, L = 80, R = 20, T = 50, B = 60;
  Canvas c(W, H);
  const Color axis{40, 40, 40}, grid{225, 225, 225};
  c.text(L, 12, title, axis, 3);
  std::vector<double> all_x, all_y;
  for (const auto& s : series) {
    all_x.insert(all_x.end(), s.xs.begin(), s.xs.end());
    all_y.insert(all_y.end(), s.ys.begin(), s.ys.end());
  }
  if (all_x.empty()) return c.save(path);
  bool logy = std::all_of(all_y.begin(), all_y.end(), [](double v) { return v > 0; });
  auto ty = [&](double v) { return logy ? std::log10(v) : v; };
  double x0 = *std::min_element(all_x.begin(), all_x.end());
  double x1 = std::max(*std::max_element(all_x.begin(), all_x.end()), x0 + 1);
  double y0 = ty(*std::min_element(all_y.begin(), all_y.end())), y1 = ty(*std::max_element(all_y.begin(), all_y.end()));
  if (y1 - y0 < 1e-9) y1 = y0 + 1;
  auto px = [&](double x) { return L + static_cast<int>((x - x0) / (x1 - x0) * (W - L - R)); };
  auto py = [&](double y) { return H - B - static_cast<int>((ty(y) - y0) / (y1 - y0) * (H - T - B)); };
  for (int i = 0; i <= 4; ++i) {  // grid and tick labels
    double fy = y0 + (y1 - y0) * i / 4, vy = logy ? std::pow(10, fy) : fy;
    int y = H - B - (H - T - B) * i / 4;
    c.line(L, y, W - R, y, grid);
    c.text(4, y - 5, fmt(vy, vy < 0.1 ? 3 : 2), axis);
    double vx = x0 + (x1 - x0) * i / 4;
    int x = L + (W - L - R) * i / 4;
    c.line(x, T, x, H - B, grid);
    c.text(x - 10, H - B + 8, fmt(vx, 0), axis);
  }
  c.line(L, T, L, H - B, axis, 2);
  c.line(L, H - B, W - R, H - B, axis, 2);
  int legend_y = T + 8;
  for (const auto& s : series) {
    for (std::size_t i = 1; i < s.xs.size(); ++i)
      c.line(px(s.xs[i - 1]), py(s.ys[i - 1]), px(s.xs[i]), py(s.ys[i]), s.color, 2);
    if (s.xs.size() == 1) c.rect(px(s.xs[0]) - 2, py(s.ys[0]) - 2, px(s.xs[0]) + 3, py(s.ys[0]) + 3, s.color);
    if (series.size() > 1) {  // legend, top right
      c.rect(W - R - 150, legend_y + 3, W - R - 130, legend_y + 6, s.color);
      c.text(W - R - 124, legend_y, s.name, axis);
      legend_y += 16;
    }
  }
  c.text(W / 2 - 30, H - 24, xlabel, axis);
  c.text(4, T - 17, ylabel + (logy ? " (LOG)" : ""), axis);
  c.save(path);
}

// A line chart of ys against xs.
inline void line_chart(const std::string& path, const std::string& title, const std::vector<double>& xs,
                       const std::vector<double>& ys, const std::string& xlabel, const std::string& ylabel) {
  line_chart(path, title, std::vector<Series>{{"", xs, ys}}, xlabel, ylabel);
}

// A grid of heatmaps: grid[r][k] is map k of row r (rows x cols values in [0, 1],
// white -> dark blue), each grid row titled, with the row and column tokens printed
// along the edges of every map.
inline void heatmaps(const std::string& path, const std::string& title,
                     const std::vector<std::vector<std::vector<double>>>& grid, int rows, int cols,
                     const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
                     const std::vector<std::string>& grid_titles) {
  const int cell = 24, pad = 44, top = 48, band = 40;
  const int mw = cols * cell, mh = rows * cell, per_row = mh + band + 28;
  std::size_t most = 0;
  for (const auto& r : grid) most = std::max(most, r.size());
  const int W = pad + static_cast<int>(most) * (mw + pad), H = top + static_cast<int>(grid.size()) * per_row + 30;
  Canvas c(W, H);
  const Color ink{40, 40, 40};
  c.text(pad, 12, title, ink, 3);
  for (std::size_t r = 0; r < grid.size(); ++r) {
    int oy = top + static_cast<int>(r) * per_row + band;
    c.text(pad, oy - 34, grid_titles[r], ink);
    for (std::size_t k = 0; k < grid[r].size(); ++k) {
      int ox = pad + static_cast<int>(k) * (mw + pad);
      c.text(ox, oy - 16, "HEAD " + std::to_string(k + 1), ink);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
          double v = std::clamp(grid[r][k][static_cast<std::size_t>(i * cols + j)], 0.0, 1.0);
          Color col{static_cast<uint8_t>(255 - 225 * v), static_cast<uint8_t>(255 - 180 * v),
                    static_cast<uint8_t>(255 - 90 * v)};
          c.rect(ox + j * cell, oy + i * cell, ox + (j + 1) * cell - 1, oy + (i + 1) * cell - 1, col);
        }
      for (int i = 0; i < rows && i < static_cast<int>(row_labels.size()); ++i)
        c.text(ox - 12 - 8 * static_cast<int>(row_labels[i].size() - 1), oy + i * cell + 7, row_labels[i], ink);
      for (int j = 0; j < cols && j < static_cast<int>(col_labels.size()); ++j)
        c.text(ox + j * cell + 7, oy + mh + 6, col_labels[j], ink);
    }
  }
  c.text(pad, H - 22, "ROWS: OUTPUT TOKEN (QUERY)   COLUMNS: SOURCE TOKEN (KEY)", ink);
  c.save(path);
}

}  // namespace examples::plot
