// The dispatched rows of layer norm, the Adam update and float sums (layer_norm_rows.h,
// adam.h, sum_rows.h; one StubCheck per registered stub, simd_checks.h) at every level
// this CPU has, against the float64 formulas written out here (Adam: torch's scalar
// update, bit for bit).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <vector>

#include "kernels/adam.h"
#include "kernels/layer_norm_rows.h"
#include "kernels/sum_rows.h"
#include "simd_checks.h"

using namespace ag;
using namespace simd_checks;

namespace {

// Layer norm written out in double, summing in order: what layer_norm_rows must give to
// T's rounding (its sums run in WD double lanes, so the last double bits differ).
struct LnRef {
  std::vector<double> y, dx, dw, db;
};
template <class T>
LnRef layer_norm_ref(const std::vector<T>& x, const std::vector<T>& g, const std::vector<T>& w, const std::vector<T>& b,
                     int64_t rows, int64_t n, double eps) {
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
template <class T>
int count_far(const std::vector<T>& got, const std::vector<double>& want, double rtol, double scale) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += !(std::abs(double(got[i]) - want[i]) <= rtol * (std::abs(want[i]) + scale));
  return bad;
}

// Rows of x (rows, n) with w, b (n) and g (rows, n) for the checks below; tolerances
// relative to T's rounding (float: its ulp; double: the order of the double sums).
template <class T>
struct LnCase {
  static constexpr int64_t rows = 5;
  static constexpr double tol = std::is_same_v<T, float> ? 1e-6 : 1e-12;
  int64_t n;
  std::vector<T> x, g, w, b;
  LnRef ref;
  explicit LnCase(int64_t n_)
      : n(n_),
        x(values<T>(rows * n, 21 + uint64_t(n), false)),
        g(values<T>(rows * n, 22, false)),
        w(values<T>(n, 23, false)),
        b(values<T>(n, 24, false)),
        ref(layer_norm_ref(x, g, w, b, rows, n, 1e-5)) {}
};

const std::vector<int64_t> kLnLengths{1, 3, 8, 17, 64, 128, 129};

template <class T>
void check_layer_norm_rows() {
  for (int64_t n : kLnLengths) {
    CAPTURE(n);
    const LnCase<T> c(n);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const auto forward = kernels::layer_norm_rows.of<T>().get(level);
      std::vector<T> y(c.x.size()), mean(size_t(c.rows)), rstd(size_t(c.rows));
      forward(c.x.data(), c.w.data(), c.b.data(), y.data(), mean.data(), rstd.data(), c.rows, n, 1e-5);
      CHECK(count_far(y, c.ref.y, c.tol, 1) == 0);
      // No weight or bias: y is xhat itself.
      std::vector<T> y0(c.x.size());
      forward(c.x.data(), nullptr, nullptr, y0.data(), mean.data(), rstd.data(), c.rows, n, 1e-5);
      int bad = 0;
      for (std::size_t i = 0; i < y0.size(); ++i)
        bad += !(std::abs(y0[i] * c.w[i % size_t(n)] + c.b[i % size_t(n)] - c.ref.y[i]) <=
                 10 * c.tol * (std::abs(c.ref.y[i]) + 1));
      CHECK(bad == 0);
    }
  }
}

// From the same level's mean and rstd: dx, and dw, db accumulated onto zeros.
template <class T>
void check_layer_norm_backward_rows() {
  for (int64_t n : kLnLengths) {
    CAPTURE(n);
    const LnCase<T> c(n);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> y(c.x.size()), mean(size_t(c.rows)), rstd(size_t(c.rows)), dx(c.x.size());
      std::vector<double> dw(size_t(n), 0.0), db(size_t(n), 0.0);
      kernels::layer_norm_rows.of<T>().get(level)(c.x.data(), c.w.data(), c.b.data(), y.data(), mean.data(),
                                                  rstd.data(), c.rows, n, 1e-5);
      kernels::layer_norm_backward_rows.of<T>().get(level)(c.x.data(), c.g.data(), c.w.data(), mean.data(), rstd.data(),
                                                           dx.data(), dw.data(), db.data(), c.rows, n);
      CHECK(count_far(dx, c.ref.dx, 10 * c.tol, 1) == 0);
      CHECK(count_far(dw, c.ref.dw, c.tol, 1) == 0);
      CHECK(count_far(db, c.ref.db, c.tol, 1) == 0);
      // dx not wanted: only dw, db (added again onto the first pass's).
      kernels::layer_norm_backward_rows.of<T>().get(level)(c.x.data(), c.g.data(), c.w.data(), mean.data(), rstd.data(),
                                                           nullptr, dw.data(), db.data(), c.rows, n);
      std::vector<double> ref_dw2(c.ref.dw), ref_db2(c.ref.db);
      for (auto& e : ref_dw2) e *= 2;
      for (auto& e : ref_db2) e *= 2;
      CHECK(count_far(dw, ref_dw2, c.tol, 2) == 0);
      CHECK(count_far(db, ref_db2, c.tol, 2) == 0);
    }
  }
}

// AdamW (decoupled), Adam with L2 weight decay, plain Adam; step 3's bias corrections.
template <class T>
std::vector<kernels::AdamStep<T>> adam_steps() {
  return {{true, T(0.01), T(1 - 1e-3 * 0.01), T(0.9), T(0.999), T(0.1), T(1 - 0.999), T(1e-8), T(1e-3 / (1 - 0.729)),
           T(0.05)},
          {false, T(0.01), T(1), T(0.9), T(0.999), T(0.1), T(1 - 0.999), T(1e-8), T(2e-3), T(0.03)},
          {false, T(0), T(1), T(0.8), T(0.99), T(0.2), T(0.01), T(1e-6), T(1e-2), T(0.5)}};
}

// Bit for bit torch's scalar update in T, with and without AMSGrad (NaN and infinities
// among the parameters, gradients and max_exp_avg_sq).
template <class T>
void check_adam_update() {
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<T> w0 = values<T>(n, 61), g = values<T>(n, 62), m0 = values<T>(n, 63, false);
    std::vector<T> v0 = values<T>(n, 64, false), x0 = values<T>(n, 65);
    for (auto& e : v0) e = e * e;
    for (const kernels::AdamStep<T>& h : adam_steps<T>())
      for (bool ams : {false, true})
        for (K level : kernels::available_simd_levels()) {
          CAPTURE(kernels::to_string(level));
          CAPTURE(ams);
          std::vector<T> w = w0, m = m0, v = v0, x = x0;
          kernels::adam_update.of<T>().get(level)(w.data(), g.data(), m.data(), v.data(), ams ? x.data() : nullptr, n,
                                                  h);
          int bad = 0;
          for (std::size_t i = 0; i < std::size_t(n); ++i) {
            T wi = w0[i], gi = g[i], mi = m0[i], vi = v0[i], xi = x0[i];
            if (h.decoupled)
              wi = wi * h.decay;
            else if (h.wd != 0)
              gi = gi + h.wd * wi;
            mi = mi * h.b1 + h.c1 * gi;
            vi = vi * h.b2 + h.c2 * gi * gi;
            T vv = vi;
            if (ams) vv = xi = std::isnan(xi) || std::isnan(vi) ? T(NAN) : std::max(xi, vi);
            wi = wi - h.ss * (mi / (std::sqrt(vv) / h.bc + h.eps));
            bad += !same_bits(w[i], wi) + !same_bits(m[i], mi) + !same_bits(v[i], vi) + (ams && !same_bits(x[i], xi));
          }
          CHECK(bad == 0);
        }
  }
}

template <class T>
void check_sum_sq() {
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<T> x = values<T>(n, 63, false);
    double want = 0;
    for (T e : x) want += double(e) * e;
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      CHECK(std::abs(kernels::sum_sq.of<T>().get(level)(x.data(), n) - want) <= 1e-12 * want);
    }
  }
}

// Against the ordered double sum: x plain, s with inf, -inf and NaN inside.
void check_sum_row() {
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<float> x = values<float>(n, 71, false), s = values<float>(n, 72);
    double want = 0, want_s = 0;
    for (float e : x) want += e;
    for (float e : s) want_s += e;
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const auto sum = kernels::sum_row.get(level);
      CHECK(std::abs(sum(x.data(), n) - want) <= 1e-12 * (1 + std::abs(want)));
      const double got_s = sum(s.data(), n);
      CHECK(((std::isnan(got_s) && std::isnan(want_s)) || got_s == want_s || got_s == doctest::Approx(want_s)));
    }
  }
}

// acc + x in double, bit for bit, special values included; nothing past n.
void check_accumulate_row() {
  for (int64_t n : kLengths) {
    CAPTURE(n);
    const std::vector<float> s = values<float>(n, 72);
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<double> acc(static_cast<std::size_t>(n + 1), 1.0);
      kernels::accumulate_row.get(level)(acc.data(), s.data(), n);
      int bad = 0;
      for (std::size_t j = 0; j < std::size_t(n); ++j) bad += !same_bits(acc[j], 1.0 + double(s[j]));
      CHECK(bad == 0);
      CHECK(acc.back() == 1.0);
    }
  }
}

const std::vector<StubCheck> kChecks{
    {"layer_norm_rows_f32", check_layer_norm_rows<float>},
    {"layer_norm_rows_f64", check_layer_norm_rows<double>},
    {"layer_norm_backward_rows_f32", check_layer_norm_backward_rows<float>},
    {"layer_norm_backward_rows_f64", check_layer_norm_backward_rows<double>},
    {"adam_update_f32", check_adam_update<float>},
    {"adam_update_f64", check_adam_update<double>},
    {"sum_sq_f32", check_sum_sq<float>},
    {"sum_sq_f64", check_sum_sq<double>},
    {"sum_row", check_sum_row},
    {"accumulate_row", check_accumulate_row},
};

}  // namespace

TEST_CASE("simd: every layer-norm, Adam and sum stub has a check, and each level passes it") {
  run_stub_checks("test_simd_norm_optim", kChecks);
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

TEST_CASE("sum: float sums through the op (rows and leading dims) at every level equal the ordered double sum") {
  // A (300, 37) bias-gradient sum and row sums against the ordered sums.
  LevelGuard guard;
  const std::vector<float> v = values<float>(300 * 37, 73, false);
  Tensor t = Tensor::from_vector(v).reshape({300, 37});
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    kernels::set_simd_level(level);
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
}
