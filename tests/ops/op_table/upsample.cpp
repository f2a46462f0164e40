// Op table lines: interpolate (ops/upsample.cpp), every mode and align_corners setting, up
// and down, 1-d and 2-d, size and scale_factor (whose 1 / scale_factor coordinates differ
// from n / out when n * scale_factor is not an integer). Every mode is linear in x, so the
// gradcheck has no kinks to avoid; the values are checked by hand in test_interpolate.cpp.
#include "op_table.h"

namespace op_table {
namespace {
using M = InterpolateMode;
InterpolateFuncOptions sized(std::vector<int64_t> size, M mode) {
  return InterpolateFuncOptions().size(std::move(size)).mode(mode);
}
InterpolateFuncOptions scaled(std::vector<double> factor, M mode) {
  return InterpolateFuncOptions().scale_factor(std::move(factor)).mode(mode);
}
}  // namespace

AG_OP_TABLE(upsample) {
  return {
      // ---- nearest ----
      {"interpolate nearest 1-d up size 7 from 4",
       {{2, 2, 4}},
       [](auto& x) { return interpolate(x[0], sized({7}, M::nearest)); }},
      {"interpolate nearest 2-d scale_factor 2 (the i / 2 shortcut)",
       {{1, 2, 3, 3}},
       [](auto& x) { return interpolate(x[0], scaled({2}, M::nearest)); }},
      {"interpolate nearest 2-d down scale_factor 0.6 0.75 non-contiguous",
       {{1, 2, 5, 4}},
       [](auto& x) {
         return interpolate(x[0], scaled({0.6, 0.75}, M::nearest));
       },
       transposed},
      // ---- nearest_exact ----
      {"interpolate nearest_exact 1-d up scale_factor 1.7",
       {{2, 2, 3}},
       [](auto& x) { return interpolate(x[0], scaled({1.7}, M::nearest_exact)); }},
      {"interpolate nearest_exact 2-d down size 3 4 from 5 6",
       {{1, 2, 5, 6}},
       [](auto& x) {
         return interpolate(x[0], sized({3, 4}, M::nearest_exact));
       }},
      // ---- linear ----
      {"interpolate linear up size 7 from 4",
       {{2, 2, 4}},
       [](auto& x) { return interpolate(x[0], sized({7}, M::linear)); }},
      {"interpolate linear align_corners down size 4 from 6",
       {{2, 2, 6}},
       [](auto& x) { return interpolate(x[0], sized({4}, M::linear).align_corners(true)); }},
      {"interpolate linear align_corners up scale_factor 2.5",
       {{1, 2, 3}},
       [](auto& x) { return interpolate(x[0], scaled({2.5}, M::linear).align_corners(true)); }},
      {"interpolate linear down scale_factor 0.7 recompute_scale_factor",
       {{2, 1, 6}},
       [](auto& x) { return interpolate(x[0], scaled({0.7}, M::linear).recompute_scale_factor(true)); }},
      // ---- bilinear ----
      {"interpolate bilinear up scale_factor 1.5 non-contiguous",
       {{1, 2, 3, 4}},
       [](auto& x) { return interpolate(x[0], scaled({1.5}, M::bilinear).align_corners(false)); },
       transposed},
      {"interpolate bilinear align_corners up size 5 4 from 3 3",
       {{1, 2, 3, 3}},
       [](auto& x) {
         return interpolate(x[0], sized({5, 4}, M::bilinear).align_corners(true));
       }},
      {"interpolate bilinear down size 3 4 from 5 6",
       {{2, 1, 5, 6}},
       [](auto& x) {
         return interpolate(x[0], sized({3, 4}, M::bilinear));
       }},
      {"interpolate bilinear align_corners down to one row",
       {{1, 1, 4, 5}},
       [](auto& x) {
         return interpolate(x[0], sized({1, 3}, M::bilinear).align_corners(true));
       }},
      // ---- area (adaptive average pooling) ----
      {"interpolate area 1-d down size 4 from 6",
       {{2, 2, 6}},
       [](auto& x) { return interpolate(x[0], sized({4}, M::area)); }},
      {"interpolate area 2-d down scale_factor 0.5",
       {{1, 2, 4, 6}},
       [](auto& x) { return interpolate(x[0], scaled({0.5}, M::area)); }},
      {"interpolate area 2-d up size 3 5 from 2 3",
       {{1, 1, 2, 3}},
       [](auto& x) {
         return interpolate(x[0], sized({3, 5}, M::area));
       }},
  };
}

}  // namespace op_table
