// The ops on the dispatched elementwise rows at every level this CPU has: tensor arithmetic
// and where / masked_fill bit for bit, GELU as PyTorch's, softmax and log_softmax rows.
// The rows: test_simd_elementwise.cpp; layer norm, Adam and sums: test_simd_norm_optim.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "../gelu_reference.h"
#include "../simd_checks.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace simd_checks;
using namespace gelu_reference;

TEST_CASE("simd elementwise: tensor arithmetic (bias rows, scalars, strided) is the same at every width") {
  LevelGuard guard;
  const std::vector<float> av = values<float>(6 * 37, 1), bv = values<float>(37, 2);
  Tensor a = Tensor::from_vector(av).reshape({6, 37}), bias = Tensor::from_vector(bv);
  Tensor at = Tensor::from_vector(av).reshape({37, 6}).t();  // strided rows: the scalar path
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    kernels::set_simd_level(level);
    const std::vector<float> sum = (a + bias).to_vector<float>(), q = (bias / a).to_vector<float>(),
                             s = (a * 0.5).to_vector<float>(), d = (at - a).to_vector<float>();
    int bad = 0;
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 37; ++j) {
        const std::size_t ij = size_t(i * 37 + j);
        const float x = av[ij], y = bv[size_t(j)], xt = av[size_t(j * 6 + i)];
        bad += !same_bits(sum[ij], x + y) + !same_bits(q[ij], y / x) + !same_bits(s[ij], x * 0.5f) +
               !same_bits(d[ij], xt - x);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("simd elementwise: float GELU is PyTorch's float arithmetic around a correctly rounded erf / tanh") {
  LevelGuard guard;
  for (bool tanh_form : {false, true}) {
    CAPTURE(tanh_form);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      for (int64_t n : kLengths) {
        const std::vector<float> xv = values<float>(n, 11 + uint64_t(n));
        const std::vector<float> y =
            gelu(Tensor::from_vector(xv), tanh_form ? GeluApprox::tanh : GeluApprox::none).to_vector<float>();
        CHECK(gelu_mismatches(xv, y, tanh_form) == 0);
      }
    }
  }
}

TEST_CASE("simd elementwise: float GELU backward is the float64 gradient rounded, at every width") {
  LevelGuard guard;
  for (bool tanh_form : {false, true}) {
    CAPTURE(tanh_form);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const int64_t n = 1000;
      const std::vector<float> xv = values<float>(n, 5, false), gv = values<float>(n, 6);
      const std::vector<float> dx = gelu_backward(Tensor::from_vector(gv), Tensor::from_vector(xv),
                                                  tanh_form ? GeluApprox::tanh : GeluApprox::none)
                                        .to_vector<float>();
      CHECK(gelu_backward_worst_ulps(gv, xv, dx, tanh_form) <= 1);
    }
  }
  // Special values: NaN and infinities where the float64 formula has them.
  const std::vector<float> xs{0.0f, -0.0f, INFINITY, -INFINITY, NAN, -20.0f, 1e30f};
  const std::vector<float> dx =
      gelu_backward(Tensor::from_vector(std::vector<float>(xs.size(), 1.0f)), Tensor::from_vector(xs))
          .to_vector<float>();
  CHECK(dx[0] == 0.5f);
  CHECK(dx[1] == 0.5f);
  CHECK(std::isnan(dx[2]));  // inf * pdf(inf) = inf * 0, as the composite formula
  CHECK(std::isnan(dx[3]));
  CHECK(std::isnan(dx[4]));
  CHECK(dx[5] == 0.0f);
  CHECK(dx[6] == 1.0f);
}

TEST_CASE("gelu float64: the fused pass equals the composite formula; strided input; errors") {
  const double alpha = std::numbers::sqrt2 / 2;
  const std::vector<double> xv = values<double>(301, 9);
  Tensor x = Tensor::from_vector(xv);
  // Forward: bit for bit the ops it replaced (same libm calls, same order).
  CHECK(tc::diff(gelu(x), x * 0.5 * (1.0 + erf(x * alpha))) == "");
  // A transposed (non-contiguous) input gives the contiguous answer.
  Tensor m = Tensor::from_vector(values<double>(12 * 7, 4)).reshape({12, 7});
  CHECK(tc::diff(gelu(m.t()), gelu(m.t().contiguous())) == "");
  CHECK(tc::diff(gelu_backward(m.t(), m.t(), GeluApprox::tanh),
                 gelu_backward(m.t().contiguous(), m.t().contiguous(), GeluApprox::tanh)) == "");
  // Backward against gelu'(x) written out: a few ulps (exp and erf round on their own).
  const std::vector<double> dx = gelu_backward(ones({301}, DType::f64), x).to_vector<double>();
  int bad = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double want = dgelu_ref(xv[i], false);
    if (std::isnan(want))
      bad += !std::isnan(dx[i]);
    else
      bad += !(std::abs(dx[i] - want) <= 1e-14 * std::max(1.0, std::abs(want)));
  }
  CHECK(bad == 0);
  CHECK_THROWS_MSG(gelu_backward(ones({2, 3}), ones({3, 2})), ShapeError,
                   "gelu_backward: grad_output [2, 3] f32 must match input [3, 2] f32");
  CHECK_THROWS_AS(gelu_backward(ones({2}, DType::f64), ones({2})), ShapeError);
}

TEST_CASE("softmax and log_softmax rows (vector exp, short rows and tails) at every width") {
  LevelGuard guard;
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 3, 10, 16, 17, 65}) {
    CAPTURE(n);
    // Row 0 random, row 1 with masked (-inf) entries, row 2 all masked, row 3 with a NaN.
    std::vector<float> x = values<float>(4 * n, 81 + uint64_t(n), false);
    for (int64_t j = 1; j < n; j += 2) x[size_t(n + j)] = ninf;
    for (int64_t j = 0; j < n; ++j) x[size_t(2 * n + j)] = ninf;
    x[size_t(3 * n + n / 2)] = NAN;
    Tensor t = Tensor::from_vector(x).reshape({4, n});
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const std::vector<float> y = softmax(t, -1).to_vector<float>(), ly = log_softmax(t, -1).to_vector<float>();
      int bad = 0;
      for (int64_t r = 0; r < 2; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < n; ++j) m = std::max(m, double(x[size_t(r * n + j)]));
        for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[size_t(r * n + j)]) - m);
        for (int64_t j = 0; j < n; ++j) {
          const double want = std::exp(double(x[size_t(r * n + j)]) - m) / s;
          const std::size_t i = size_t(r * n + j);
          bad += !(std::abs(y[i] - want) <= 1e-6 * want + 1e-37);
          bad += !(std::isinf(x[i]) ? ly[i] == ninf
                                    : std::abs(ly[i] - std::log(want)) <= 2e-6 * (1 + std::abs(std::log(want))));
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        bad += y[size_t(2 * n + j)] != 0.0f || ly[size_t(2 * n + j)] != ninf;  // every key masked
        bad += !std::isnan(y[size_t(3 * n + j)]) || !std::isnan(ly[size_t(3 * n + j)]);
      }
      CHECK(bad == 0);
      // log_softmax backward: g - softmax * sum(g), against the forward's softmax.
      Tensor xr = t.slice(0, 0, 2).detach().requires_grad_();
      Tensor g = Tensor::from_vector(values<float>(2 * n, 90, false)).reshape({2, n});
      (log_softmax(xr, -1) * g).sum().backward();
      const std::vector<float> dx = xr.grad().to_vector<float>(), gv = g.to_vector<float>();
      for (int64_t r = 0; r < 2; ++r) {
        double sg = 0;
        for (int64_t j = 0; j < n; ++j) sg += gv[size_t(r * n + j)];
        for (int64_t j = 0; j < n; ++j) {
          const std::size_t i = size_t(r * n + j);
          const double want = gv[i] - double(y[i]) * sg;
          bad += !(std::abs(dx[i] - want) <= 1e-5 * (1 + std::abs(want)));
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("where / masked_fill rows (values, scalars, broadcast masks) at every width copy the chosen bits") {
  LevelGuard guard;
  for (int64_t n : {1, 5, 16, 17, 40, 100}) {
    CAPTURE(n);
    const std::vector<float> av = values<float>(3 * n, 91), bv = values<float>(3 * n, 92);
    std::vector<uint8_t> cv(static_cast<std::size_t>(3 * n));
    Generator gen(93);
    for (auto& e : cv) e = gen.uniform() < 0.5;
    std::vector<bool> cb(cv.begin(), cv.end());
    Tensor c = Tensor::from_vector(std::vector<float>(cv.begin(), cv.end())).reshape({3, n}).to(DType::b8);
    Tensor a = Tensor::from_vector(av).reshape({3, n}), b = Tensor::from_vector(bv).reshape({3, n});
    Tensor row_mask = c.slice(0, 0, 1);  // (1, n): broadcast over rows
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      kernels::set_simd_level(level);
      const std::vector<float> w = where(c, a, b).to_vector<float>(), f = masked_fill(b, c, -7.5).to_vector<float>(),
                               wb = where(row_mask, a, b).to_vector<float>(),
                               ws = where(c, a, b.t().t()).to_vector<float>();
      int bad = 0;
      for (int64_t i = 0; i < 3 * n; ++i) {
        const std::size_t k = size_t(i), kb = size_t(i % n);
        bad += !same_bits(w[k], cb[k] ? av[k] : bv[k]) + !same_bits(f[k], cb[k] ? -7.5f : bv[k]) +
               !same_bits(wb[k], cb[kb] ? av[k] : bv[k]) + !same_bits(ws[k], w[k]);
      }
      CHECK(bad == 0);
    }
  }
}
