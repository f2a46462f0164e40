// dropout1d and dropout2d (ops/random.cpp): whole channels kept (scaled by 1/(1-p)) or
// zeroed, at the rate p over many channels, repeatable from a seed, the identity in eval,
// and a gradient that is the mask. All draws come from fixed seeds, so no check can flake.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <vector>

#include "tensor_checks.h"

using namespace ag;

namespace {

// Per (sample, channel) plane of y = f(x) for x of ones: 1 if the plane is all 1/(1-p),
// 0 if all zero; FAILs on a mixed plane.
std::vector<int> kept_planes(const Tensor& y, int64_t plane, double p) {
  const std::vector<double> v = y.to_vector<double>();
  std::vector<int> kept;
  for (std::size_t start = 0; start < v.size(); start += static_cast<std::size_t>(plane)) {
    int zeros = 0, scaled = 0;
    for (std::size_t k = start; k < start + static_cast<std::size_t>(plane); ++k) {
      zeros += v[k] == 0.0;
      scaled += std::abs(v[k] - 1.0 / (1.0 - p)) < 1e-6;  // f32: 1/(1-p) rounded to float
    }
    CHECK_MESSAGE((zeros == plane || scaled == plane), "plane at ", start, " is mixed: ", zeros, " zeros, ", scaled,
                  " scaled of ", plane);
    kept.push_back(scaled == plane);
  }
  return kept;
}

}  // namespace

TEST_CASE("dropout2d and dropout1d drop whole channels at rate p") {
  const double p = 0.3;
  Generator gen(123);
  // 64 samples x 50 channels = 3200 channels of 3x2 elements.
  Tensor y2 = dropout2d(ones({64, 50, 3, 2}, DType::f64), p, true, &gen);
  std::vector<int> kept = kept_planes(y2, 6, p);
  REQUIRE(kept.size() == 3200);
  double frac = 0;
  for (int k : kept) frac += k;
  frac /= static_cast<double>(kept.size());
  // Binomial(3200, 0.7): standard deviation sqrt(0.7 0.3 / 3200) = 0.0081; the seed is
  // fixed, and 0.03 is 3.7 of them.
  CHECK(std::abs(frac - (1 - p)) < 0.03);
  // Unbatched (C, H, W): one draw per channel.
  kept = kept_planes(dropout2d(ones({40, 2, 2}, DType::f64), 0.5, true, &gen), 4, 0.5);
  CHECK(kept.size() == 40);
  // dropout1d: (N, C, L) and (C, L).
  kept = kept_planes(dropout1d(ones({20, 30, 5}, DType::f64), p, true, &gen), 5, p);
  CHECK(kept.size() == 600);
  kept = kept_planes(dropout1d(ones({30, 5}, DType::f32), p, true, &gen), 5, p);
  CHECK(kept.size() == 30);
  // Both outcomes occur (a mask of all ones or all zeros would pass the plane check).
  int sum = 0;
  for (int k : kept) sum += k;
  CHECK(sum > 0);
  CHECK(sum < 30);
}

TEST_CASE("dropout2d: eval, p = 0 and p = 1, same seed same mask") {
  Generator gen(1);
  Tensor x = randn({2, 3, 4, 4}, DType::f64, &gen);
  // Eval and p == 0 return x itself; p == 1 zeros everything.
  CHECK(dropout2d(x, 0.5, false).impl() == x.impl());
  CHECK(dropout2d(x, 0.0, true).impl() == x.impl());
  Tensor cl = x.select(0, 0).flatten(1);  // (C, L)
  CHECK(dropout1d(cl, 0.5, false).impl() == cl.impl());
  CHECK(tc::diff(dropout2d(x, 1.0, true, &gen), std::vector<double>(96, 0.0)) == "");
  Generator a(77), b(77);
  CHECK(tc::diff(dropout2d(x, 0.5, true, &a), dropout2d(x, 0.5, true, &b)) == "");
  // The next call draws a fresh mask from the advanced stream.
  CHECK(tc::diff(dropout2d(x, 0.5, true, &a), dropout2d(x, 0.5, true, &gen)) != "");
  // The default generator repeats under manual_seed.
  manual_seed(5);
  Tensor first = dropout1d(x.flatten(2), 0.5, true);
  manual_seed(5);
  CHECK(tc::diff(dropout1d(x.flatten(2), 0.5, true), first) == "");
}

TEST_CASE("dropout2d: the gradient is the mask, and double backward works") {
  Generator gen(9);
  Tensor x = randn({2, 4, 3, 3}, DType::f64, &gen).requires_grad_();
  Generator g1(31);
  Tensor y = dropout2d(x, 0.5, true, &g1);
  y.sum().backward();
  // The mask from the same seed on ones: 0 or 2 per channel.
  Generator g2(31);
  Tensor mask = dropout2d(ones({2, 4, 3, 3}, DType::f64), 0.5, true, &g2);
  CHECK(tc::diff(x.grad(), mask) == "");
  // Double backward: d sum(y^2) / dx = 2 mask^2 x, whose own gradient (of its sum) is 2 mask^2.
  Tensor x2 = x.detach().requires_grad_();
  Generator g3(31);
  Tensor y2 = dropout2d(x2, 0.5, true, &g3);
  Tensor gx = grad({(y2 * y2).sum()}, {x2}, {}, {}, true)[0];  // 2 mask^2 x
  Tensor ggx = grad({gx.sum()}, {x2})[0];                      // 2 mask^2
  CHECK(tc::diff(ggx, mask * mask * 2.0, 1e-15) == "");
}

TEST_CASE("dropout1d / dropout2d: errors") {
  Tensor x = ones({2, 3, 4, 4});
  CHECK_THROWS_MSG(dropout2d(x, 1.5, true), ValueError, "dropout2d: dropout probability has to be between 0 and 1");
  CHECK_THROWS_MSG(dropout2d(x, -0.1, false), ValueError, "dropout2d: dropout probability");
  CHECK_THROWS_MSG(dropout1d(x, 0.5, true), ShapeError, "dropout1d: expected a 2-D or 3-D input");
  CHECK_THROWS_MSG(dropout1d(x, 0.5, false), ShapeError, "got shape [2, 3, 4, 4]");  // checked in eval too
  CHECK_THROWS_MSG(dropout2d(ones({3, 4}), 0.5, true), ShapeError, "dropout2d: expected a 3-D or 4-D input");
  CHECK_THROWS_MSG(dropout2d(ones({1, 2, 3, 4, 5}), 0.5, true), ShapeError, "[1, 2, 3, 4, 5]");
  CHECK_THROWS_MSG(dropout2d(ones({2, 3, 4}, DType::i64), 0.5, true), DTypeError, "dropout2d");
}
