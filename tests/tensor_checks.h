#pragma once
// Helpers for the tensor core tests (test_tensor*.cpp): value comparison that reports
// the first mismatch, and a shorthand for "throws this type with a message containing".
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

// CHECK_THROWS_MSG(expr, ag::ShapeError, "part of the message")
#define CHECK_THROWS_MSG(expr, Type, text) CHECK_THROWS_WITH_AS(expr, doctest::Contains(text), Type)

namespace tc {

// "" when t holds `want` (row-major) within |got - want| <= tol * (1 + |want|), else a
// description of the first mismatch; use as CHECK(tc::diff(t, {...}) == "") so doctest
// shows it. NaN matches NaN; infinities match when equal.
inline std::string diff(const ag::Tensor& t, const std::vector<double>& want, double tol = 0.0) {
  std::vector<double> got = t.to_vector<double>();
  std::ostringstream os;
  if (got.size() != want.size()) {
    os << "got " << got.size() << " elements (shape " << t.shape() << "), expected " << want.size();
    return os.str();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool same = (std::isnan(g) && std::isnan(w)) || g == w ||
                (std::isfinite(w) && std::abs(g - w) <= tol * (1.0 + std::abs(w)));
    if (!same) {
      os.precision(17);
      os << "element " << i << " of shape " << t.shape() << ": got " << g << ", expected " << w;
      return os.str();
    }
  }
  return "";
}

// Same for two tensors: shapes must match, then values within tol.
inline std::string diff(const ag::Tensor& got, const ag::Tensor& want, double tol = 0.0) {
  if (!(got.shape() == want.shape())) {
    std::ostringstream os;
    os << "shape " << got.shape() << " vs expected " << want.shape();
    return os.str();
  }
  return diff(got, want.to_vector<double>(), tol);
}

// Shapes and strides as text, for readable failures: CHECK(tc::str(t.strides()) == "[1, 3]").
inline std::string str(const ag::Dims& d) {
  std::ostringstream os;
  os << d;
  return os.str();
}

// A [n] f32 or f64 tensor 0, 1, ..., n-1 built without arange (so arange's own test
// does not depend on it).
inline ag::Tensor iota(int64_t n, ag::DType dtype = ag::DType::f32) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
  return ag::Tensor::from_vector(v).to(dtype);
}

}  // namespace tc
