// The examples' pictures (examples/common/plot.cpp, drawn with PLplot): a line chart and
// a heatmap grid come out as PNG files of the intended size, written whole (no .tmp
// left behind), and bad input is an error, never a crash or a stray file.
#include <doctest/doctest.h>

#include <attograd/error.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/plot.h"
#include "tensor_checks.h"

namespace fs = std::filesystem;
namespace plot = examples::plot;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(AG_TMP_DIR) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Width and height from a PNG's IHDR chunk: the 8-byte signature, then the chunk's
// length (4 bytes) and type "IHDR" (4 bytes), then width and height big-endian.
struct PngSize {
  uint32_t w = 0, h = 0;
};
PngSize png_size(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<unsigned char> b(24);
  f.read(reinterpret_cast<char*>(b.data()), 24);
  REQUIRE(f.gcount() == 24);
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (int i = 0; i < 8; ++i) REQUIRE(b[static_cast<std::size_t>(i)] == sig[i]);
  REQUIRE(std::string(b.begin() + 12, b.begin() + 16) == "IHDR");
  auto be32 = [&](std::size_t at) {
    return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | uint32_t{b[at + 3]};
  };
  return {be32(16), be32(20)};
}

std::vector<std::string> names_in(const fs::path& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
  return out;
}

// A loss curve, decaying from 4 to 1 over 100 steps.
plot::Series curve(const std::string& name, double scale, plot::Color color = {31, 119, 180}) {
  plot::Series s{name, {}, {}, color};
  for (int i = 1; i <= 100; ++i) s.xs.push_back(i), s.ys.push_back(scale * (1 + 3 * std::exp(-i / 20.0)));
  return s;
}

}  // namespace

TEST_CASE("line_chart writes an 800 x 500 PNG and no temporary file") {
  fs::path d = fresh_dir("plot_line");
  plot::line_chart((d / "two.png").string(), "Loss", {curve("train", 1.0), curve("held-out", 1.2, {214, 39, 40})},
                   "step", "nats/char");
  plot::Series one = curve("", 1.0);
  plot::line_chart((d / "one.png").string(), "Loss", one.xs, one.ys, "step", "loss");
  // Negative ys: a linear y axis.
  plot::line_chart((d / "linear.png").string(), "Signed", {0, 1, 2}, {-1.0, 0.5, 2.0}, "x", "y");
  // Positive ys drawn on a linear axis all the same (BLEU): not the log picture.
  plot::linear_chart((d / "bleu.png").string(), "Loss", {curve("train", 1.0), curve("held-out", 1.2, {214, 39, 40})},
                     "step", "nats/char");
  for (const char* name : {"two.png", "one.png", "linear.png", "bleu.png"}) {
    PngSize s = png_size(d / name);
    CHECK(s.w == 800);
    CHECK(s.h == 500);
  }
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(bytes(d / "bleu.png") != bytes(d / "two.png"));
  CHECK(names_in(d).size() == 4);  // no .tmp beside them
}

TEST_CASE("line_chart: a single point, and NaN points left out of the line") {
  fs::path d = fresh_dir("plot_line_edges");
  plot::line_chart((d / "point.png").string(), "One point", {5.0}, {2.0}, "step", "loss");
  // A diverged run: the NaN and inf points break the line, the rest is drawn.
  plot::line_chart((d / "nan.png").string(), "Diverged", {1, 2, 3, 4, 5}, {3.0, NAN, 2.0, INFINITY, 1.5}, "step",
                   "loss");
  CHECK(png_size(d / "point.png").w == 800);
  CHECK(png_size(d / "nan.png").w == 800);
  CHECK(names_in(d).size() == 2);
}

TEST_CASE("line_chart rejects what it cannot draw, leaving no file") {
  fs::path d = fresh_dir("plot_line_bad");
  const std::string p = (d / "bad.png").string();
  CHECK_THROWS_AS(plot::line_chart(p, "t", {1, 2, 3}, {1.0, 2.0}, "x", "y"), ag::ValueError);  // 3 xs, 2 ys
  CHECK_THROWS_AS(plot::line_chart(p, "t", std::vector<plot::Series>{}, "x", "y"), ag::ValueError);
  CHECK_THROWS_AS(plot::line_chart(p, "t", {}, {}, "x", "y"), ag::ValueError);
  CHECK_THROWS_AS(plot::line_chart(p, "t", {1, 2}, {NAN, NAN}, "x", "y"), ag::ValueError);  // nothing finite
  CHECK(names_in(d).empty());
}

TEST_CASE("log_log_chart: a log-log chart of six series; a non-positive x is a ValueError") {
  fs::path d = fresh_dir("plot_loglog");
  // Six series (two legend rows), xs 128 .. 8192 as tools/bench_sweep's lengths.
  std::vector<plot::Series> six;
  for (int k = 0; k < 6; ++k) {
    plot::Series s{"side " + std::to_string(k), {}, {}, {static_cast<uint8_t>(40 * k), 100, 150}};
    for (double L = 128; L <= 8192; L *= 2) s.xs.push_back(L), s.ys.push_back((k + 1) * L * L * 1e-6);
    six.push_back(s);
  }
  plot::log_log_chart((d / "loglog.png").string(), "Sweep", six, "L", "ms");
  CHECK(png_size(d / "loglog.png").w == 800);
  const std::string bad = (d / "bad.png").string();
  CHECK_THROWS_MSG(plot::log_log_chart(bad, "t", {plot::Series{"s", {0.0, 1.0}, {1.0, 2.0}}}, "x", "y"), ag::ValueError,
                   "line_chart: log x axis but series 's' has x 0");
  CHECK(names_in(d).size() == 1);  // the bad chart left nothing
}

TEST_CASE("a path in a missing directory is an IOError and leaves nothing behind") {
  fs::path d = fresh_dir("plot_missing");
  fs::path p = d / "no_such_dir" / "loss.png";
  CHECK_THROWS_AS(plot::line_chart(p.string(), "t", {1, 2}, {1.0, 2.0}, "x", "y"), ag::IOError);
  std::vector<std::vector<std::vector<double>>> grid{{std::vector<double>(4, 0.5)}};
  CHECK_THROWS_AS(plot::heatmaps(p.string(), "t", grid, 2, 2, {}, {}, {}), ag::IOError);
  CHECK(names_in(d).empty());
}

TEST_CASE("heatmaps writes a grid of maps with a colour bar as one PNG") {
  fs::path d = fresh_dir("plot_heat");
  // 2 grid rows of 3 maps, each 4 x 5 (rows x cols); map k of row r: a shifted diagonal.
  const int rows = 4, cols = 5;
  std::vector<std::vector<std::vector<double>>> grid(2);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 3; ++k) {
      std::vector<double> m(rows * cols, 0.0);
      for (int i = 0; i < rows; ++i) m[static_cast<std::size_t>(i * cols + (i + k + r) % cols)] = 1.0;
      m[0] = 1.5;  // clamped to 1
      grid[static_cast<std::size_t>(r)].push_back(m);
    }
  plot::heatmaps((d / "attention.png").string(), "Cross-attention per head", grid, rows, cols, {"3", "1", "4", "1"},
                 {"<s>", "3", "1", "4", "1"}, {"decoder layer 1", "decoder layer 2 (last)"});
  // The layout in plot.cpp: width = left 50 + 3 maps of 5 x 24 px + 2 gaps of 46 + right 120
  // = 50 + 360 + 92 + 120 = 622; height = top 56 + 2 x (48 + 4 x 24 + 44) + foot 34 = 466.
  PngSize s = png_size(d / "attention.png");
  CHECK(s.w == 622);
  CHECK(s.h == 466);
  // Labels and titles may be left out.
  plot::heatmaps((d / "bare.png").string(), "Bare", grid, rows, cols, {}, {}, {});
  CHECK(png_size(d / "bare.png").w == 622);
  // Subword tokens: the margins widen to 8 px a character of the longest row token plus
  // 16 ("_noir.": left = 8 * 6 + 16 = 64, gaps 60), and column tokens over 3 characters
  // stand upright in a band of 8 * 6 + 26 = 74 px ("_black"): width 64 + 360 + 2 x 60
  // + 120 = 664, height
  // 56 + 2 x (48 + 96 + 74) + 34 = 526.
  plot::heatmaps((d / "words.png").string(), "Subwords", grid, rows, cols, {"_the", "_chat", "_est", "_noir."},
                 {"_the", "_cat", "_is", "_black", "."}, {"layer 1", "layer 2"});
  CHECK(png_size(d / "words.png").w == 664);
  CHECK(png_size(d / "words.png").h == 526);
  CHECK(names_in(d).size() == 3);
}

TEST_CASE("heatmaps rejects a grid of the wrong size, NaN and mismatched labels") {
  fs::path d = fresh_dir("plot_heat_bad");
  const std::string p = (d / "bad.png").string();
  std::vector<std::vector<std::vector<double>>> ok{{std::vector<double>(6, 0.5)}};  // one 2 x 3 map
  std::vector<std::vector<std::vector<double>>> short_map{{std::vector<double>(5, 0.5)}};
  std::vector<std::vector<std::vector<double>>> nan_map{{{0.1, 0.2, NAN, 0.4, 0.5, 0.6}}};
  CHECK_THROWS_AS(plot::heatmaps(p, "t", short_map, 2, 3, {}, {}, {}), ag::ValueError);
  CHECK_THROWS_AS(plot::heatmaps(p, "t", nan_map, 2, 3, {}, {}, {}), ag::ValueError);
  CHECK_THROWS_AS(plot::heatmaps(p, "t", {}, 2, 3, {}, {}, {}), ag::ValueError);
  CHECK_THROWS_AS(plot::heatmaps(p, "t", {{}}, 2, 3, {}, {}, {}), ag::ValueError);
  CHECK_THROWS_AS(plot::heatmaps(p, "t", ok, 0, 3, {}, {}, {}), ag::ValueError);
  CHECK_THROWS_AS(plot::heatmaps(p, "t", ok, 2, 3, {"a"}, {}, {}), ag::ValueError);           // 1 label, 2 rows
  CHECK_THROWS_AS(plot::heatmaps(p, "t", ok, 2, 3, {}, {"a", "b"}, {}), ag::ValueError);      // 2 labels, 3 cols
  CHECK_THROWS_AS(plot::heatmaps(p, "t", ok, 2, 3, {}, {}, {"one", "two"}), ag::ValueError);  // 2 titles, 1 row
  CHECK(names_in(d).empty());
}

TEST_CASE("fmt") {
  CHECK(plot::fmt(3.14159) == "3.14");
  CHECK(plot::fmt(2.5, 0) == "2");  // printf rounds half to even
  CHECK(plot::fmt(-0.0004, 3) == "-0.000");
}
