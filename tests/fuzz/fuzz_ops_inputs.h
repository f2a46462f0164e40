#pragma once
// The op fuzzer's input decoding (tests/fuzz/fuzz_ops.cpp, its only includer): values and
// integers with their edges, the input tensors (shape, dtype, layout) and an op's Params.
// The order of the reads is the corpus format: changing it changes what every input means.
#include "fuzz_util.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace {

using ag::DType;
using ag::Shape;
using ag::Tensor;

// ---- values, integers and tensors ---------------------------------------------------

double decode_value(uint8_t b) {
  switch (b) {
    case 255: return INFINITY;
    case 254: return -INFINITY;
    case 253: return NAN;
    case 252: return 1e30;
    case 251: return 1e300;  // inf in f32
    case 250: return std::numeric_limits<double>::denorm_min();
    case 249: return -std::numeric_limits<float>::denorm_min();
    case 248: return 9223372036854775808.0;  // 2^63: just past int64
    case 247: return -2147483649.0;          // just past int32
    default: return (int(b) - 126) / 8.0;    // exact in f32: k/8, |k| <= 126
  }
}

// Integer edges: bytes 240..255 pick one, others give -8..8.
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min(), kMax64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kEdges[16] = {kMin64,
                                kMax64,
                                kMin64 + 1,
                                kMax64 - 1,
                                INT32_MIN,
                                INT32_MAX,
                                int64_t{INT32_MIN} - 1,
                                int64_t{INT32_MAX} + 1,
                                -1,
                                0,
                                int64_t{1} << 62,
                                -(int64_t{1} << 62),
                                int64_t{1} << 53,
                                (int64_t{1} << 53) + 1,
                                kMax64 / 2 + 1,
                                255};
int64_t decode_int(uint8_t b) { return b >= 240 ? kEdges[b - 240] : int64_t(b % 17) - 8; }

Tensor make_input(fuzz::Bytes& in, const Shape* like) {
  static const DType kDTypes[] = {DType::f32, DType::f64, DType::f32, DType::f64, DType::i32, DType::i64, DType::b8};
  const DType dtype = kDTypes[in.u8() % 7];
  Shape shape;
  if (like && in.flag()) {
    // Broadcast-compatible with an earlier input: its shape, some dims set to 1.
    for (int64_t d : *like) shape.push_back(in.u8() % 3 == 0 ? 1 : d);
  } else {
    const int64_t ndim = in.range(0, 3);
    for (int64_t i = 0; i < ndim; ++i) {
      const int64_t d = in.u8() % 9;
      shape.push_back(d == 0 ? 0 : 1 + (d - 1) % 4);
    }
  }
  // The layout: 0 contiguous, 1 transposed, 2 every other element of dim 0, 3 expanded.
  const int layout = shape.empty() ? 0 : in.u8() % 4;
  Shape base = shape;
  if (layout == 1) std::swap(base[0], base[base.size() - 1]);
  if (layout == 2) base[0] *= 2;
  if (layout == 3) base[0] = 1;
  Tensor t;
  if (ag::is_integral(dtype)) {  // exact int64 values (2^63 - 1 is not a double), wrapped into i32
    std::vector<int64_t> values(size_t(ag::numel(base)));
    for (int64_t& v : values) v = decode_int(in.u8());
    t = Tensor::from_vector(values, base).to(dtype);
  } else {
    std::vector<double> values(size_t(ag::numel(base)));
    for (double& v : values) {
      const uint8_t b = in.u8();
      v = ag::is_floating(dtype) ? decode_value(b) : double(b & 1);
    }
    t = Tensor::from_vector(values, base).to(dtype);
  }
  if (layout == 1) t = t.transpose(0, -1);
  if (layout == 2) t = t.slice(0, 0, base[0], 2);
  if (layout == 3) t = t.expand(shape);
  return t;
}

// ---- an op's parameters -------------------------------------------------------------

// An op's arguments beyond its tensors, decoded once and given to both paths.
struct Params {
  int64_t d0 = 0, d1 = 0, n = 0;
  bool keep = false;
  std::vector<int64_t> list;       // small, or now and then an integer edge
  int64_t i0 = 0, i1 = 0, i2 = 0;  // decode_int: starts, lengths, pads, ranges
  double v = 0;                    // decode_value: fill values
};

Params decode_params(fuzz::Bytes& in) {
  Params p;
  p.d0 = in.range(-4, 3);
  p.d1 = in.range(-4, 3);
  p.n = in.u8();
  p.keep = in.flag();
  const int64_t len = in.range(0, 4);
  for (int64_t i = 0; i < len; ++i) {
    const uint8_t b = in.u8();
    p.list.push_back(b >= 240 ? kEdges[b - 240] : int64_t(b % 8) - 2);
  }
  p.i0 = decode_int(in.u8());
  p.i1 = decode_int(in.u8());
  p.i2 = decode_int(in.u8());
  p.v = decode_value(in.u8());
  return p;
}

}  // namespace
