#pragma once
// Helpers of the reduction tests (test_reduction.cpp, test_reduction/scans_sort.cpp): float64
// tensors and leaves from literals, indices and bools out, a weighted backward.
#include <attograd/attograd.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace reduction_test {

inline constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kTol = 1e-12;

inline ag::Tensor f64(const std::vector<double>& v, const ag::Shape& s) { return ag::Tensor::from_vector(v, s); }
inline ag::Tensor f64(const std::vector<double>& v) { return ag::Tensor::from_vector(v); }
inline ag::Tensor leaf(const std::vector<double>& v, const ag::Shape& s) { return f64(v, s).requires_grad_(); }
inline ag::Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }
inline std::vector<int64_t> ints(const ag::Tensor& t) { return t.to_vector<int64_t>(); }
inline std::vector<bool> bits(const ag::Tensor& t) { return t.to_vector<bool>(); }

// Backward of sum(y * [1, 2, ..., n]) (the torch scripts use the same weights, so each
// output slot's share of a gradient is visible); returns y.
inline ag::Tensor weighted_backward(const ag::Tensor& y) {
  std::vector<double> w(static_cast<std::size_t>(y.numel()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = double(i + 1);
  y.backward(ag::Tensor::from_vector(w, y.shape()));
  return y;
}

}  // namespace reduction_test
