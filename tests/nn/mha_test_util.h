#pragma once
// Helpers of the nn::MultiheadAttention tests (test_mha.cpp, test_mha/properties.cpp,
// test_mha/gradcheck_errors.cpp): a relative error, bool masks, random parameters, leaves.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace mha_test {

// max |got - want| / max |want|: relative to the largest reference magnitude, so that
// near-zero gradient entries do not dominate. Infinite when a value is not finite and
// the reference is not the same value.
inline double rel_err(const ag::Tensor& got, const ag::Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  auto a = got.to_vector<double>(), b = want.to_vector<double>();
  double worst = 0, scale = 0;
  for (double v : b)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;  // also equal infinities
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

inline ag::Tensor bool_tensor(const std::vector<int>& v, const ag::Shape& shape) {
  return ag::ne(ag::Tensor::from_vector<int64_t>(std::vector<int64_t>(v.begin(), v.end()), shape), 0.0);
}

// Random values for every parameter (biases too: reset_parameters zeroes them, which
// would hide bias bugs).
inline void randomize(ag::nn::Module& m, uint64_t seed) {
  ag::Generator gen(seed);
  ag::TensorMap sd;
  for (auto& [n, p] : m.named_parameters()) sd.insert(n, ag::randn(p.shape(), ag::DType::f64, &gen) * 0.5);
  m.load_state_dict(sd);
}

inline ag::Tensor grad_input(const ag::Tensor& t, ag::DType dtype = ag::DType::f64) {
  return t.to(dtype).clone().requires_grad_();
}

}  // namespace mha_test
