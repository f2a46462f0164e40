#pragma once
// Shared by tests/ops/test_tensor_methods.cpp and tensor_method_checks.cpp: the inputs
// every method check uses, the comparisons, and the table of checks (one per method name).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor_checks.h"

namespace tm_checks {

using ag::Tensor;

// (3, 4) f64 in (0.13, 0.76), no ties, inside every pointwise op's domain (acosh: x + 1).
inline Tensor X() {
  std::vector<double> v;
  for (int i = 0; i < 12; ++i) v.push_back(0.13 + 0.057 * ((i * 5) % 12));
  return Tensor::from_vector(v, ag::Shape{3, 4});
}
inline Tensor Y() { return ag::add(ag::flip(X(), {1}), 0.01); }  // (3, 4), differs from X everywhere
inline Tensor mask() { return ag::gt(X(), 0.4); }                // (3, 4) bool
inline Tensor i64(const std::vector<int64_t>& v, const ag::Shape& s) { return Tensor::from_vector(v, s); }

// Same shape, dtype and values (NaN equal to NaN).
inline void same(const Tensor& method, const Tensor& free) {
  REQUIRE(method.defined());
  REQUIRE(free.defined());
  CHECK(method.dtype() == free.dtype());
  CHECK(tc::diff(method, free) == "");
}
inline void same(const std::pair<Tensor, Tensor>& method, const std::pair<Tensor, Tensor>& free) {
  same(method.first, free.first);
  same(method.second, free.second);
}
inline void same(const std::vector<Tensor>& method, const std::vector<Tensor>& free) {
  REQUIRE(method.size() == free.size());
  for (std::size_t i = 0; i < method.size(); ++i) same(method[i], free[i]);
}

// The gradient of sum(f(x) * w) for a fixed w, through the method and the free form.
inline void same_grad(const std::function<Tensor(const Tensor&)>& method,
                      const std::function<Tensor(const Tensor&)>& free) {
  Tensor a = X().requires_grad_(), b = X().requires_grad_();
  Tensor ya = method(a), yb = free(b);
  Tensor w = ag::add(ag::mul(ag::ones_like(ya), 0.5), ag::reshape(ag::arange(0.0, double(ya.numel())), ya.shape()));
  ag::sum(ag::mul(ya, w)).backward();
  ag::sum(ag::mul(yb, w)).backward();
  REQUIRE(a.grad().defined());
  CHECK(tc::diff(a.grad(), b.grad()) == "");
}

// name -> check: calls the method form and the free function, and compares them.
using Check = std::function<void()>;
const std::map<std::string, Check>& checks();  ///< tests/ops/tensor_method_checks.cpp

}  // namespace tm_checks
