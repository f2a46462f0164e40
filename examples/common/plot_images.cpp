// PLplot drawing of plot.h's confusion matrix and image grid (the classifier examples).
#include <algorithm>
#include <cmath>

#include "common/plot.h"
#include "common/plot_page.h"

namespace examples::plot {

using namespace detail;

// ---- a confusion matrix, an image grid -------------------------------------------------

namespace {

// White -> dark blue on cmap1 (the heatmaps' scale), or black -> white for images.
void blue_scale(Page& page) {
  const PLFLT at[] = {0, 1}, r[] = {1, 30 / 255.0}, g[] = {1, 75 / 255.0}, b[] = {1, 165 / 255.0};
  page->scmap1n(256);
  page->scmap1l(true, 2, at, r, g, b);
}
void gray_scale(Page& page) {
  const PLFLT at[] = {0, 1}, v[] = {0, 1};
  page->scmap1n(256);
  page->scmap1l(true, 2, at, v, v, v);
}

// Axes in pixels of a W x H page, y counting down as in the layout code.
void pixel_axes(Page& page, int W, int H) {
  page->vpor(0, 1, 0, 1);
  page->wind(0, W, H, 0);
}

}  // namespace

void confusion_matrix(const std::string& path, const std::string& title,
                      const std::vector<std::vector<int64_t>>& counts, const std::vector<std::string>& labels) {
  const std::size_t n = labels.size();
  AG_CHECK(n > 0 && counts.size() == n, ValueError, "confusion_matrix: ", counts.size(), " rows for ", n, " labels (",
           path, ")");
  std::vector<int64_t> row_sum(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    AG_CHECK(counts[t].size() == n, ValueError, "confusion_matrix: row ", t, " has ", counts[t].size(), " counts, not ",
             n, " (", path, ")");
    for (int64_t c : counts[t]) {
      AG_CHECK(c >= 0, ValueError, "confusion_matrix: negative count ", c, " in row ", t, " (", path, ")");
      row_sum[t] += c;
    }
  }
  std::size_t longest = 0;
  for (const auto& l : labels) longest = std::max(longest, l.size());
  // Layout in pixels: about 8 px a character at 14 px; the class names of the columns
  // written upward under the matrix.
  const int cell = 54, label_w = 8 * static_cast<int>(longest) + 16;
  const int left = label_w + 40, top = 64, right = 30, bottom = label_w + 44;
  const int side = static_cast<int>(n) * cell, H = top + side + bottom;
  const int W = std::max(left + side + right, left + 12 * static_cast<int>(title.size()));  // room for the title

  std::lock_guard<std::mutex> lock(plplot_mutex());
  Page page(path, W, H);
  blue_scale(page);
  page->vpor(static_cast<double>(left) / W, static_cast<double>(left + side) / W,
             1.0 - static_cast<double>(top + side) / H, 1.0 - static_cast<double>(top) / H);
  page->wind(0, static_cast<PLFLT>(n), static_cast<PLFLT>(n), 0);  // row 0 at the top
  page.text_px(15);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t p = 0; p < n; ++p) {
      const double share = row_sum[t] > 0 ? static_cast<double>(counts[t][p]) / static_cast<double>(row_sum[t]) : 0;
      const PLFLT x0 = static_cast<PLFLT>(p), y0 = static_cast<PLFLT>(t);
      const PLFLT xs[] = {x0, x0 + 1, x0 + 1, x0}, ys[] = {y0, y0, y0 + 1, y0 + 1};
      page->col1(std::clamp(share, 0.0, 1.0));
      page->fill(4, xs, ys);
      page->col0(share > 0.5 ? 0 : kInk);  // white on dark cells
      page->ptex(x0 + 0.5, y0 + 0.62, 1, 0, 0.5, std::to_string(counts[t][p]).c_str());
    }
  page->col0(kInk);
  page->box("bc", 0, 0, "bc", 0, 0);
  page.text_px(14);
  for (std::size_t i = 0; i < n; ++i) {
    const double at = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    page->mtex("lv", 0.6, 1.0 - at, 1.0, labels[i].c_str());
    page->mtex("bv", 0.6, at, 1.0, labels[i].c_str());
  }
  pixel_axes(page, W, H);
  page.text_px(16);
  page->ptex(left + side / 2.0, H - 14.0, 1, 0, 0.5, "predicted class");
  page->ptex(18, top + side / 2.0, 0, -1, 0.5, "true class");  // upward (y counts down)
  page.text_px(22);
  page->ptex(left, 38, 1, 0, 0.0, title.c_str());
  page.finish();
}

void image_grid(const std::string& path, const std::string& title, const std::vector<std::vector<double>>& images,
                int h, int w, const std::vector<std::string>& captions, int cols) {
  AG_CHECK(h > 0 && w > 0 && cols > 0, ValueError, "image_grid: images of ", h, " x ", w, " in ", cols, " columns (",
           path, ")");
  AG_CHECK(!images.empty(), ValueError, "image_grid: no images to draw (", path, ")");
  AG_CHECK(captions.size() == images.size(), ValueError, "image_grid: ", captions.size(), " captions for ",
           images.size(), " images (", path, ")");
  for (std::size_t k = 0; k < images.size(); ++k) {
    AG_CHECK(images[k].size() == static_cast<std::size_t>(h) * static_cast<std::size_t>(w), ValueError,
             "image_grid: image ", k, " has ", images[k].size(), " values, not ", h, " x ", w, " (", path, ")");
    for (double v : images[k]) AG_CHECK(!std::isnan(v), ValueError, "image_grid: NaN in image ", k, " (", path, ")");
  }
  // Each image 3 px a pixel (at least 84 px wide), in a cell wide enough for a
  // caption line of ~18 characters at 13 px.
  const int scale = std::max(1, 84 / std::max(h, w)), iw = w * scale, ih = h * scale;
  const int cw = std::max(iw, 150) + 10, ch = ih + 46, top = 60, margin = 16;
  const int n = static_cast<int>(images.size()), rows = (n + cols - 1) / cols, used = std::min(n, cols);
  const int W = std::max(2 * margin + used * cw, 2 * margin + 12 * static_cast<int>(title.size()));
  const int H = top + rows * ch + margin;

  std::lock_guard<std::mutex> lock(plplot_mutex());
  Page page(path, W, H);
  gray_scale(page);
  page->scol0(kFirstSeries, 200, 30, 30);  // the second caption line (a wrong prediction)
  for (int k = 0; k < n; ++k) {
    const double ox = margin + (k % cols) * cw + (cw - iw) / 2.0, oy = top + (k / cols) * ch;
    page->vpor(ox / W, (ox + iw) / W, 1.0 - (oy + ih) / H, 1.0 - oy / H);
    page->wind(0, w, h, 0);  // pixel (y, x) covers [x, x + 1] x [y, y + 1], row 0 at the top
    const std::vector<double>& im = images[static_cast<std::size_t>(k)];
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const PLFLT xs[] = {PLFLT(x), PLFLT(x + 1), PLFLT(x + 1), PLFLT(x)},
                    ys[] = {PLFLT(y), PLFLT(y), PLFLT(y + 1), PLFLT(y + 1)};
        page->col1(std::clamp(
            im[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x)], 0.0, 1.0));
        page->fill(4, xs, ys);
      }
    page->col0(kInk);
    page->box("bc", 0, 0, "bc", 0, 0);
    page.text_px(13);
    const std::string& c = captions[static_cast<std::size_t>(k)];
    const std::size_t nl = c.find('\n');
    page->mtex("b", 1.3, 0.5, 0.5, c.substr(0, nl).c_str());
    if (nl != std::string::npos) {
      page->col0(kFirstSeries);
      page->mtex("b", 2.6, 0.5, 0.5, c.substr(nl + 1).c_str());
    }
  }
  pixel_axes(page, W, H);
  page->col0(kInk);
  page.text_px(22);
  page->ptex(margin, 36, 1, 0, 0.0, title.c_str());
  page.finish();
}

}  // namespace examples::plot
