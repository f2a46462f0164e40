// The dispatched elementwise rows (EltOps, ops/kernels/simd.h) at every vector width
// this CPU has: arithmetic must equal IEEE's scalar answer bit for bit (body and tail,
// broadcast rows, special values), and the fused GELU forward and backward must equal
// the formulas they replace: PyTorch's float arithmetic around a correctly rounded
// erf / tanh for float, libm's float64 formulas for double.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "kernels/simd.h"
#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using K = ag::kernels::SimdLevel;

namespace {

struct LevelGuard {
  K saved = kernels::simd_level();
  ~LevelGuard() { kernels::set_simd_level(saved); }
};

const std::vector<int64_t> kLengths{0, 1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 100, 257, 600};

// Random values with the special ones sprinkled through body and tail.
template <class T>
std::vector<T> values(int64_t n, uint64_t seed, bool specials = true) {
  Generator g(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(g.normal() * 3);
  const T sp[] = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                  std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(), T(-20), T(1e30), T(-2.5)};
  if (specials)
    for (std::size_t i = 0; i < x.size(); i += 5) x[i] = sp[(i / 5) % std::size(sp)];
  return x;
}

template <class T>
bool same_bits(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

template <class T>
T apply(int op, T a, T b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
  }
}

template <class T>
void check_arith_rows() {
  for (K level : kernels::available_simd_levels()) {
    CAPTURE(kernels::to_string(level));
    const auto& E = kernels::elt_ops<T>(level);
    for (int op = 0; op < 4; ++op)
      for (int layout = 0; layout < 3; ++layout)
        for (int64_t n : kLengths) {
          CAPTURE(op);
          CAPTURE(layout);
          CAPTURE(n);
          const std::vector<T> a = values<T>(n + 1, 3 + uint64_t(n)), b = values<T>(n + 1, 50 + uint64_t(n));
          std::vector<T> out(static_cast<std::size_t>(n + 1), T(7));
          E.arith[op][layout](out.data(), a.data(), b.data(), n);
          int bad = 0;
          for (int64_t i = 0; i < n; ++i) {
            const T x = layout == 2 ? a[0] : a[size_t(i)], y = layout == 1 ? b[0] : b[size_t(i)];
            bad += !same_bits(out[size_t(i)], apply(op, x, y));
          }
          CHECK(bad == 0);
          CHECK(out[size_t(n)] == T(7));  // nothing written past n
        }
  }
}

// PyTorch's float GELU: float arithmetic, erf / tanh correctly rounded (libm's erff).
float gelu_ref(float x, bool tanh_form) {
  const float alpha = static_cast<float>(std::numbers::sqrt2 / 2);
  const float k = static_cast<float>(std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5), c = 0.044715f;
  if (tanh_form) {
    const float x3 = static_cast<float>(std::pow(static_cast<double>(x), 3.0));
    return (x * 0.5f) * (1.0f + static_cast<float>(std::tanh(static_cast<double>((x + x3 * c) * k))));
  }
  return (x * 0.5f) * (1.0f + static_cast<float>(std::erf(static_cast<double>(x * alpha))));
}

// gelu'(x) in float64 (the derivation in ops/elementwise.cpp).
double dgelu_ref(double x, bool tanh_form) {
  const double k = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, c = 0.044715;
  if (tanh_form) {
    const double t = std::tanh((x + c * x * x * x) * k);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
  }
  return 0.5 * std::erfc(-x / std::numbers::sqrt2) + x * std::exp(-0.5 * x * x) * std::numbers::inv_sqrtpi / std::numbers::sqrt2;
}

int ulps_apart(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1 << 30;
  if (a == b) return 0;
  auto ord = [](float v) {
    int32_t i;
    std::memcpy(&i, &v, 4);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return static_cast<int>(std::min<int64_t>(std::abs(ord(a) - ord(b)), 1 << 30));
}

}  // namespace

TEST_CASE("simd elementwise: add, sub, mul, div rows equal IEEE's scalar answer at every width") {
  check_arith_rows<float>();
  check_arith_rows<double>();
}

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
        int bad = 0;
        for (int64_t i = 0; i < n; ++i) {
          // Exact but for an erf / tanh that rounds the other way (xsimd's double is a few
          // double ulps off libm's): one float ulp of erf, times x / 2.
          const float want = gelu_ref(xv[size_t(i)], tanh_form), got = y[size_t(i)];
          const bool ok = same_bits(got, want) ||
                          std::abs(got - want) <= std::abs(xv[size_t(i)]) * 0.5f * 6e-8f + 1e-37f;
          if (!ok) INFO("x = ", xv[size_t(i)], ": got ", got, ", want ", want);
          bad += !ok;
        }
        CHECK(bad == 0);
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
      int worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(double(gv[size_t(i)]) * dgelu_ref(xv[size_t(i)], tanh_form));
        worst = std::max(worst, std::abs(want) < 1e-30f ? 0 : ulps_apart(dx[size_t(i)], want));
      }
      CHECK(worst <= 1);
    }
  }
  // Special values: NaN and infinities where the float64 formula has them.
  const std::vector<float> xs{0.0f, -0.0f, INFINITY, -INFINITY, NAN, -20.0f, 1e30f};
  const std::vector<float> dx = gelu_backward(Tensor::from_vector(std::vector<float>(xs.size(), 1.0f)),
                                              Tensor::from_vector(xs))
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
    if (std::isnan(want)) bad += !std::isnan(dx[i]);
    else bad += !(std::abs(dx[i] - want) <= 1e-14 * std::max(1.0, std::abs(want)));
  }
  CHECK(bad == 0);
  CHECK_THROWS_MSG(gelu_backward(ones({2, 3}), ones({3, 2})), ShapeError,
                   "gelu_backward: grad_output [2, 3] f32 must match input [3, 2] f32");
  CHECK_THROWS_AS(gelu_backward(ones({2}, DType::f64), ones({2})), ShapeError);
}

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
          bad += !(std::isinf(x[i]) ? ly[i] == ninf : std::abs(ly[i] - std::log(want)) <= 2e-6 * (1 + std::abs(std::log(want))));
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
                               wb = where(row_mask, a, b).to_vector<float>(), ws = where(c, a, b.t().t()).to_vector<float>();
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
