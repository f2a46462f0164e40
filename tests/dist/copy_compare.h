#pragma once
// Compares two copy-task models' state dicts by name: the largest |difference|, with
// the attention key bias left out (see below).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <attograd/attograd.h>

inline double max_parameter_difference(const ag::TensorMap& a, const ag::TensorMap& b, int64_t d_model) {
  using namespace ag;
  double worst = 0;
  for (const auto& [name, ta] : a) {
    REQUIRE(b.contains(name));
    Tensor pa = ta, pb = b.at(name);
    if (name.find("in_proj_bias") != std::string::npos) {
      // The key bias's gradient is zero up to rounding (softmax ignores a constant added
      // to every score of a row), and Adam scales that rounding noise up to full-size
      // steps: compare the query and value thirds only.
      const int64_t E = d_model;
      pa = cat({pa.narrow(0, 0, E), pa.narrow(0, 2 * E, E)}, 0);
      pb = cat({pb.narrow(0, 0, E), pb.narrow(0, 2 * E, E)}, 0);
    }
    const double d = amax(abs(pa.to(DType::f64) - pb.to(DType::f64))).item<double>();
    if (d > 1e-4) MESSAGE(name << " differs by " << d);
    worst = std::max(worst, d);
  }
  return worst;
}
