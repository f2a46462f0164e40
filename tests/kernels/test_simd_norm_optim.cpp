// The dispatched rows of layer norm, the Adam update and float sums (EltOps,
// ops/kernels/simd.h) at every vector width this CPU has, against the float64 formulas
// written out here (Adam: torch's scalar update, bit for bit).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <vector>

#include "simd_checks.h"

using namespace ag;
using namespace simd_checks;

namespace {

// Layer norm written out in double, summing in order: what EltOps::layer_norm must give
// to float rounding (its sums run in WD double lanes, so the last double bits differ).
struct LnRef {
  std::vector<double> y, dx, dw, db;
};
LnRef layer_norm_ref(const std::vector<float>& x, const std::vector<float>& g, const std::vector<float>& w,
                     const std::vector<float>& b, int64_t rows, int64_t n, double eps) {
  LnRef r{std::vector<double>(x.size()), std::vector<double>(x.size()), std::vector<double>(size_t(n)),
          std::vector<double>(size_t(n))};
  for (int64_t i = 0; i < rows; ++i) {
    double mu = 0, var = 0, sgw = 0, sgwx = 0;
    for (int64_t j = 0; j < n; ++j) mu += x[size_t(i * n + j)];
    mu /= double(n);
    for (int64_t j = 0; j < n; ++j) var += (x[size_t(i * n + j)] - mu) * (x[size_t(i * n + j)] - mu);
    const double rs = 1 / std::sqrt(var / double(n) + eps);
    for (int64_t j = 0; j < n; ++j) {
      const size_t ij = size_t(i * n + j);
      const double h = (x[ij] - mu) * rs, gw = double(g[ij]) * w[size_t(j)];
      r.y[ij] = h * w[size_t(j)] + b[size_t(j)];
      sgw += gw, sgwx += gw * h;
      r.dw[size_t(j)] += g[ij] * h, r.db[size_t(j)] += g[ij];
    }
    for (int64_t j = 0; j < n; ++j) {
      const size_t ij = size_t(i * n + j);
      const double h = (x[ij] - mu) * rs;
      r.dx[ij] = rs * (double(g[ij]) * w[size_t(j)] - sgw / double(n) - h * sgwx / double(n));
    }
  }
  return r;
}

// |got - want| <= rtol * (|want| + scale): relative, with a floor at the row's scale
// (a cancelled dx element of 1e-9 against values of 1 is not a relative error).
int count_far(const std::vector<float>& got, const std::vector<double>& want, double rtol, double scale) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += !(std::abs(double(got[i]) - want[i]) <= rtol * (std::abs(want[i]) + scale));
  return bad;
}

}  // namespace

TEST_CASE("simd elementwise: layer norm rows at every width match the float64 formulas") {
  for (int64_t n : {1, 3, 8, 17, 64, 128, 129}) {
    CAPTURE(n);
    const int64_t rows = 5;
    const std::vector<float> x = values<float>(rows * n, 21 + uint64_t(n), false), g = values<float>(rows * n, 22, false),
                             w = values<float>(n, 23, false), b = values<float>(n, 24, false);
    const LnRef ref = layer_norm_ref(x, g, w, b, rows, n, 1e-5);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const auto& E = kernels::elt_ops<float>(level);
      std::vector<float> y(x.size()), mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows)),
          dx(x.size());
      std::vector<double> dw(size_t(n), 0.0), db(size_t(n), 0.0);
      E.layer_norm(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, n, 1e-5);
      E.layer_norm_backward(x.data(), g.data(), w.data(), mean.data(), rstd.data(), dx.data(), dw.data(), db.data(),
                            rows, n);
      CHECK(count_far(y, ref.y, 1e-6, 1) == 0);
      CHECK(count_far(dx, ref.dx, 1e-5, 1) == 0);
      const std::vector<float> dwf(dw.begin(), dw.end()), dbf(db.begin(), db.end());
      CHECK(count_far(dwf, ref.dw, 1e-6, 1) == 0);
      CHECK(count_far(dbf, ref.db, 1e-6, 1) == 0);
      // No weight or bias: y is xhat itself.
      std::vector<float> y0(x.size());
      E.layer_norm(x.data(), nullptr, nullptr, y0.data(), mean.data(), rstd.data(), rows, n, 1e-5);
      int bad = 0;
      for (std::size_t i = 0; i < y0.size(); ++i)
        bad += !(std::abs(y0[i] * w[i % size_t(n)] + b[i % size_t(n)] - ref.y[i]) <= 1e-5 * (std::abs(ref.y[i]) + 1));
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("layer_norm: weight and bias gradients do not depend on the thread count") {
  const int prev = get_num_threads();
  Tensor x = Tensor::from_vector(values<float>(300 * 96, 31, false)).reshape({300, 96});
  Tensor w0 = Tensor::from_vector(values<float>(96, 32, false)), b0 = Tensor::from_vector(values<float>(96, 33, false));
  std::vector<std::vector<float>> grads[2];
  for (int t : {1, 2}) {
    set_num_threads(t);
    Tensor xi = x.detach().requires_grad_(), w = w0.detach().requires_grad_(), b = b0.detach().requires_grad_();
    (layer_norm(xi, {96}, w, b) * x).sum().backward();
    grads[t - 1] = {xi.grad().to_vector<float>(), w.grad().to_vector<float>(), b.grad().to_vector<float>()};
  }
  set_num_threads(prev);
  CHECK(grads[0] == grads[1]);
}

TEST_CASE("simd elementwise: Adam rows are torch's scalar update bit for bit at every width; sum_sq") {
  using Step = kernels::EltOps<float>::AdamStep;
  // AdamW (decoupled), Adam with L2 weight decay, plain Adam; step 3's bias corrections.
  const Step steps[] = {{true, 0.01f, 1 - 1e-3f * 0.01f, 0.9f, 0.999f, 0.1f, 1 - 0.999f, 1e-8f, 1e-3f / (1 - 0.729f), 0.05f},
                        {false, 0.01f, 1, 0.9f, 0.999f, 0.1f, 1 - 0.999f, 1e-8f, 2e-3f, 0.03f},
                        {false, 0.0f, 1, 0.8f, 0.99f, 0.2f, 0.01f, 1e-6f, 1e-2f, 0.5f}};
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<float> w0 = values<float>(n, 61), g = values<float>(n, 62), m0 = values<float>(n, 63, false);
    std::vector<float> v0 = values<float>(n, 64, false), x0 = values<float>(n, 65);
    for (auto& e : v0) e = e * e;
    for (const Step& h : steps)
      for (bool ams : {false, true})
        for (K level : kernels::available_simd_levels()) {
          CAPTURE(kernels::to_string(level));
          CAPTURE(ams);
          std::vector<float> w = w0, m = m0, v = v0, x = x0;
          kernels::elt_ops<float>(level).adam(w.data(), g.data(), m.data(), v.data(), ams ? x.data() : nullptr, n, h);
          int bad = 0;
          for (std::size_t i = 0; i < std::size_t(n); ++i) {
            float wi = w0[i], gi = g[i], mi = m0[i], vi = v0[i], xi = x0[i];
            if (h.decoupled) wi = wi * h.decay;
            else if (h.wd != 0) gi = gi + h.wd * wi;
            mi = mi * h.b1 + h.c1 * gi;
            vi = vi * h.b2 + h.c2 * gi * gi;
            float vv = vi;
            if (ams) vv = xi = std::isnan(xi) || std::isnan(vi) ? NAN : std::max(xi, vi);
            wi = wi - h.ss * (mi / (std::sqrt(vv) / h.bc + h.eps));
            bad += !same_bits(w[i], wi) + !same_bits(m[i], mi) + !same_bits(v[i], vi) + (ams && !same_bits(x[i], xi));
          }
          CHECK(bad == 0);
        }
    for (K level : kernels::available_simd_levels()) {
      double want = 0;
      for (float e : m0) want += double(e) * e;
      const double got = kernels::elt_ops<float>(level).sum_sq(m0.data(), n);
      CHECK(std::abs(got - want) <= 1e-12 * want);
    }
  }
}

TEST_CASE("simd elementwise: float sums (rows and leading dims) at every width equal the ordered double sum") {
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<float> x = values<float>(n, 71, false), s = values<float>(n, 72);  // s: inf, -inf, NaN inside
    double want = 0, want_s = 0;
    for (float e : x) want += e;
    for (float e : s) want_s += e;
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const auto& E = kernels::elt_ops<float>(level);
      CHECK(std::abs(E.sum(x.data(), n) - want) <= 1e-12 * (1 + std::abs(want)));
      const double got_s = E.sum(s.data(), n);
      CHECK(((std::isnan(got_s) && std::isnan(want_s)) || got_s == want_s || got_s == doctest::Approx(want_s)));
      std::vector<double> acc(static_cast<std::size_t>(n), 1.0);
      E.add_to(acc.data(), s.data(), n);
      int bad = 0;
      for (std::size_t j = 0; j < acc.size(); ++j) bad += !same_bits(acc[j], 1.0 + double(s[j]));
      CHECK(bad == 0);
    }
  }
  // Through the op: a (300, 37) bias-gradient sum and row sums against the ordered sums.
  const std::vector<float> v = values<float>(300 * 37, 73, false);
  Tensor t = Tensor::from_vector(v).reshape({300, 37});
  const std::vector<float> cols = t.sum({0}).to_vector<float>(), rows = t.sum({1}).to_vector<float>();
  int bad = 0;
  for (int64_t j = 0; j < 37; ++j) {
    double c = 0;
    for (int64_t i = 0; i < 300; ++i) c += v[size_t(i * 37 + j)];
    bad += cols[size_t(j)] != static_cast<float>(c);
  }
  for (int64_t i = 0; i < 300; ++i) {
    double r = 0;
    for (int64_t j = 0; j < 37; ++j) r += v[size_t(i * 37 + j)];
    bad += std::abs(rows[size_t(i)] - static_cast<float>(r)) > 1e-6f * (1 + std::abs(float(r)));
  }
  CHECK(bad == 0);
}

