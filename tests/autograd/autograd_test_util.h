// Helpers of the test_autograd program (tests/autograd/test_autograd.cpp and the parts in
// tests/autograd/test_autograd/): f64 tensors, leaves that require grad, causal attention.
#pragma once

#include <attograd/attograd.h>

#include <vector>

namespace autograd_test_util {

inline ag::Tensor f64(const std::vector<double>& v, const ag::Shape& s) { return ag::Tensor::from_vector(v, s); }
inline ag::Tensor f64(const std::vector<double>& v) { return ag::Tensor::from_vector(v); }
inline ag::Tensor leaf(const std::vector<double>& v, const ag::Shape& s) { return f64(v, s).requires_grad_(); }
inline ag::Tensor leaf(const std::vector<double>& v) { return f64(v).requires_grad_(); }

inline ag::SdpaOptions causal() {  // set by name: a designated initializer would warn
  ag::SdpaOptions o;
  o.causal = true;
  return o;
}

}  // namespace autograd_test_util
