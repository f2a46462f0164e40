#pragma once
// The op table: one line per differentiable op (or per interesting case of one). It
// mirrors the op families (ops/README.md): tests/ops/op_table/<family>.cpp registers the
// lines of the ops in attograd/ops/<family>.h with AG_OP_TABLE(<family>). test_ops.cpp
// runs every line: the forward on seeded float64 inputs that require grad, a central-
// difference gradcheck, and a gradgradcheck (double backward) unless the line opts out.
// Adding an op adds one line to its family's file.
#include <attograd/attograd.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace op_table {
using namespace ag;

// ---- inputs ------------------------------------------------------------------
// An Init makes input `i` of a line (values only; the runner sets requires_grad).
using Init = Tensor (*)(std::size_t i, const Shape& shape, Generator& rng);

inline Tensor normal(std::size_t, const Shape& s, Generator& rng) { return randn(s, DType::f64, &rng); }

// log, sqrt, rsqrt, pow, denominators: U[0.5, 2).
inline Tensor positive(std::size_t, const Shape& s, Generator& rng) { return uniform(s, 0.5, 2.0, DType::f64, &rng); }

// (-0.9, 0.9): asin, acos, atanh and other ops defined on (-1, 1).
inline Tensor unit(std::size_t, const Shape& s, Generator& rng) { return uniform(s, -0.9, 0.9, DType::f64, &rng); }

// Away from kinks and ties (relu, abs, clamp, max, maximum): a shuffled grid of step 0.2,
// shifted by 0.05 for even inputs and 0.15 for odd ones. Values within an input differ by
// >= 0.2, across inputs 0 and 1 by >= 0.1, and every value is >= 0.05 away from each
// multiple of 0.1 (so clamp bounds like -0.3 or 0.5 and relu's 0 are never near).
inline Tensor distinct(std::size_t i, const Shape& s, Generator& rng) {
  const int64_t n = ag::numel(s);
  std::vector<int64_t> perm(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) perm[size_t(k)] = k;
  for (int64_t k = n - 1; k > 0; --k) std::swap(perm[size_t(k)], perm[size_t(rng.integer(0, k + 1))]);
  std::vector<double> v(perm.size());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = 0.2 * static_cast<double>(perm[k] - n / 2) + (i % 2 ? 0.15 : 0.05);
  return Tensor::from_vector(v, s);
}

// Non-contiguous leaves: the last two dims transposed in memory (1-D falls back to a
// stride-2 slice). gradcheck perturbs them through their strides.
inline Tensor strided(std::size_t, const Shape& s, Generator& rng) {
  Shape wide = s;
  wide[wide.size() - 1] *= 2;
  return randn(wide, DType::f64, &rng).slice(-1, 0, wide.back(), 2);
}
inline Tensor transposed(std::size_t i, const Shape& s, Generator& rng) {
  if (s.size() < 2) return strided(i, s, rng);
  Shape t = s;
  std::swap(t[t.size() - 1], t[t.size() - 2]);
  return randn(t, DType::f64, &rng).transpose(-1, -2);
}

// Constants used inside the lambdas (no gradient).
inline Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
inline Tensor bools(const std::vector<int64_t>& v, const Shape& s) { return ne(i64(v, s), 0.0); }
inline Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline const std::optional<double> kNone;  // an optional bound left out

// ---- lines ---------------------------------------------------------------------
using OpFn = Tensor (*)(const std::vector<Tensor>&);
struct OpCase {
  const char* name;  // the op first; other words name the case (and other ops it covers)
  std::vector<Shape> shapes;
  OpFn fn;
  Init init = normal;
  // false where the op has no second derivative to check (say why beside the line).
  bool gradgrad = true;
  // The family that registered the line (set by the registry, not by the line).
  const char* family = "";
};

// Registers a family's lines; test_ops runs all of them.
struct Family {
  Family(const char* name, std::vector<OpCase> (*make)());
};
// AG_OP_TABLE(shape) { return {...lines...}; } in tests/ops/op_table/shape.cpp.
#define AG_OP_TABLE(family) \
  static std::vector<op_table::OpCase> op_table_##family(); \
  static const op_table::Family op_table_family_##family(#family, op_table_##family); \
  static std::vector<op_table::OpCase> op_table_##family()

// Every registered line, families in name order.
const std::vector<OpCase>& all();

// A line's inputs come from a seed made of its name, so adding lines elsewhere does not
// change them (FNV-1a).
inline uint64_t seed_of(const char* name) {
  uint64_t h = 1469598103934665603ull;
  for (const char* p = name; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  return h;
}

inline std::vector<Tensor> inputs_of(const OpCase& c) {
  Generator rng(seed_of(c.name));
  std::vector<Tensor> x;
  for (std::size_t i = 0; i < c.shapes.size(); ++i) {
    Tensor t = c.init(i, c.shapes[i], rng);
    AG_CHECK(t.shape() == c.shapes[i], ShapeError, c.name, ": input ", i, " has shape ", t.shape(), ", not ",
             c.shapes[i]);
    x.push_back(t.requires_grad_());
  }
  return x;
}

}  // namespace op_table
