#pragma once
// Helpers shared by the test suites.
#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace test_util {

// The message of the E that f throws, or "<no error>".
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error>";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// max |a - b| over all elements (shapes must match; NaN anywhere gives NaN).
inline double max_abs_diff(const ag::Tensor& a, const ag::Tensor& b) {
  if (!(a.shape() == b.shape())) return INFINITY;
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double d = std::abs(x[i] - y[i]);
    if (std::isnan(d)) return NAN;
    m = std::max(m, d);
  }
  return m;
}

}  // namespace test_util
