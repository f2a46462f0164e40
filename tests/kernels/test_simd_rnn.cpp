// The fused gate rows of the recurrent layers (kernels/rnn_gates.h; one StubCheck per
// registered stub, simd_checks.h) at every level this CPU has, against the scalar
// formulas written out here in double, and against the baseline level: LSTM, GRU and
// Elman cells, forward and backward, over hidden sizes that leave no tail, only a tail
// or both, with saturating, signed-zero, infinite and NaN pre-activations in body and
// tail alike.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/rnn_gates.h"
#include "simd_checks.h"

using namespace ag;
using namespace simd_checks;

namespace {

// One lane to 33: only a tail, whole vectors (2 to 16 lanes) and vectors plus a tail.
const std::vector<int64_t> kHidden{1, 3, 7, 8, 16, 17, 33};
const std::vector<int64_t> kRows{1, 2, 3};

// ---- the reference: double formulas with a running error scale ------------------
// v, a formula's value in double; m, the sum of the magnitudes of what it adds up (the
// scale of T's rounding errors on the way to it: |v| unless terms cancel). A kernel's
// element passes when it is within rel * m of v (NaN for NaN, the same infinity).
struct E {
  double v, m;
};
E leaf(double x) { return {x, std::abs(x)}; }
const E kOne{1, 1};
E operator+(E a, E b) { return {a.v + b.v, a.m + b.m}; }
E operator-(E a, E b) { return {a.v - b.v, a.m + b.m}; }
E operator*(E a, E b) { return {a.v * b.v, a.m * b.m}; }

// sigmoid(x) = 1 / (1 + exp(-x)), exp(-x) rounded to T so that it overflows where T's
// does (sigmoid(-100) is 0 in float, as the scalar formula in float gives). The error
// scale grows by the derivative times the argument's.
template <class T>
E sigmoid(E x) {
  const double e = static_cast<T>(std::exp(-x.v)), s = 1 / (1 + e);
  return {s, std::abs(s) + (std::isfinite(x.v) ? s * (1 - s) * x.m : 0)};
}
E tanh_(E x) {
  const double t = std::tanh(x.v);
  return {t, std::abs(t) + (std::isfinite(x.v) ? (1 - t * t) * x.m : 0)};
}

// Per T: tolerance relative to the error scale (a few ulp of each step and of xsimd's
// exp / tanh), the same between a level and the baseline, and an absolute floor at
// T's smallest normal number (denormal results).
template <class T>
struct Tol {
  static constexpr bool f32 = std::is_same_v<T, float>;
  static constexpr double rel = f32 ? 4e-6 : 1e-13;
  static constexpr double level = f32 ? 1e-6 : 1e-14;
  static constexpr double abs = std::numeric_limits<T>::min();
};

template <class T>
bool near(T got, E want, double rel) {
  if (std::isnan(want.v)) return std::isnan(got);
  if (std::isinf(want.v)) return got == want.v;
  return std::isfinite(got) && std::abs(double(got) - want.v) <= rel * want.m + Tol<T>::abs;
}

// Output buffers are filled with a guard value (so an element left unwritten fails) and
// have one more guard element past their end, which no kernel may write.
template <class T>
constexpr T kGuard = T(-7.25);
template <class T>
std::vector<T> out_buffer(int64_t count) {
  return std::vector<T>(size_t(count) + 1, kGuard<T>);
}
template <class T>
std::vector<T> in_out(std::vector<T> x) {
  x.push_back(kGuard<T>);
  return x;
}

// "" when got (with its guard) matches want; else the count and the first miss.
template <class T>
std::string mismatch(const std::vector<T>& got, const std::vector<E>& want, double rel = Tol<T>::rel) {
  std::ostringstream s;
  int bad = 0;
  for (std::size_t k = 0; k < want.size(); ++k)
    if (!near(got[k], want[k], rel) && bad++ == 0)
      s << "element " << k << ": " << got[k] << ", want " << want[k].v << " (scale " << want[k].m << ")";
  if (got.size() != want.size() + 1 || !same_bits(got.back(), kGuard<T>)) s << " guard overwritten";
  return bad || !s.str().empty() ? std::to_string(bad) + " far, " + s.str() : "";
}
// The same, against the baseline level's values with the reference's error scales.
template <class T>
std::string mismatch_base(const std::vector<T>& got, const std::vector<T>& base, const std::vector<E>& ref) {
  std::vector<E> want(ref.size());
  for (std::size_t k = 0; k < ref.size(); ++k) want[k] = {double(base[k]), ref[k].m};
  return mismatch(got, want, Tol<T>::level);
}
// Saturation is exact, not only within the tolerance: sigmoid(+-inf) = 1 / 0 and
// tanh(+-inf) = +-1, and the same at +-1e4.
template <class T>
int saturated_off(const std::vector<T>& pre, const std::vector<T>& got, const std::vector<E>& want) {
  int bad = 0;
  for (std::size_t k = 0; k < pre.size(); ++k) bad += std::abs(pre[k]) >= T(1e4) && !same_bits(got[k], T(want[k].v));
  return bad;
}
// The backward kernels only add and multiply (-ffp-contract=off): the baseline's bits.
template <class T>
bool same_all(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!same_bits(a[k], b[k])) return false;
  return true;
}

template <class T>
std::vector<T> to_t(const std::vector<E>& e) {
  std::vector<T> t(e.size());
  for (std::size_t k = 0; k < e.size(); ++k) t[k] = static_cast<T>(e[k].v);
  return t;
}

// N(0, 9) values, a quarter of them special: signed zeros, infinities, NaN, and
// pre-activations where sigmoid and tanh saturate (in T or only in double) or not.
template <class T>
std::vector<T> inputs(int64_t count, uint64_t seed) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T sp[] = {T(0),   -T(0),   inf,   -inf,  std::numeric_limits<T>::quiet_NaN(), T(100), T(-100),
                  T(1e4), T(-1e4), T(20), T(-20)};
  Generator g(seed);
  std::vector<T> x(static_cast<std::size_t>(count));
  for (T& v : x) {
    v = static_cast<T>(g.normal() * 3);
    if (g.integer(0, 4) == 0) v = sp[g.integer(0, int64_t(std::size(sp)))];
  }
  return x;
}

// f(n, H, seed) for every row count and hidden size, each with its own inputs.
template <class F>
void each_shape(F f) {
  uint64_t seed = 100;
  for (int64_t H : kHidden)
    for (int64_t n : kRows) {
      CAPTURE(H);
      CAPTURE(n);
      f(n, H, seed += 10);
    }
}

// ---- LSTM ----------------------------------------------------------------------
// Pre-activations (n, 4H) in gate order i, f, g, o and c_prev (n, H); the reference
// step: acts i, f, g, o; c = f c_prev + i g; tanh_c = tanh(c); r = o tanh_c. Backward
// from the reference's acts and tanh_c (rounded to T), dr and dc.
template <class T>
struct LstmCase {
  int64_t n, H;
  std::vector<T> pre, c_prev, dr, dc;
  std::vector<E> acts, c, tanh_c, r;
  LstmCase(int64_t n_, int64_t H_, uint64_t seed)
      : n(n_),
        H(H_),
        pre(inputs<T>(4 * n * H, seed)),
        c_prev(inputs<T>(n * H, seed + 1)),
        dr(inputs<T>(n * H, seed + 2)),
        dc(inputs<T>(n * H, seed + 3)),
        acts(size_t(4 * n * H)),
        c(size_t(n * H)),
        tanh_c(size_t(n * H)),
        r(size_t(n * H)) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < H; ++j) {
        const size_t k = size_t(b * H + j), q = size_t(b * 4 * H + j), h = size_t(H);
        const E i = sigmoid<T>(leaf(pre[q])), f = sigmoid<T>(leaf(pre[q + h])), g = tanh_(leaf(pre[q + 2 * h])),
                o = sigmoid<T>(leaf(pre[q + 3 * h]));
        acts[q] = i, acts[q + h] = f, acts[q + 2 * h] = g, acts[q + 3 * h] = o;
        c[k] = f * leaf(c_prev[k]) + i * g;
        tanh_c[k] = tanh_(c[k]);
        r[k] = o * tanh_c[k];
      }
  }
};

template <class T>
void check_lstm_cell_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const LstmCase<T> ref(n, H, seed);
    std::vector<T> base[4];
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> acts = in_out(ref.pre), c = in_out(ref.c_prev), tc = out_buffer<T>(n * H),
                     r = out_buffer<T>(n * H);
      kernels::lstm_cell_rows.of<T>().get(level)(acts.data(), c.data(), tc.data(), r.data(), n, H);
      CHECK(mismatch(acts, ref.acts) == "");
      CHECK(saturated_off(ref.pre, acts, ref.acts) == 0);
      CHECK(mismatch(c, ref.c) == "");
      CHECK(mismatch(tc, ref.tanh_c) == "");
      CHECK(mismatch(r, ref.r) == "");
      if (level == K::sse2) base[0] = acts, base[1] = c, base[2] = tc, base[3] = r;
      CHECK(mismatch_base(acts, base[0], ref.acts) == "");
      CHECK(mismatch_base(c, base[1], ref.c) == "");
      CHECK(mismatch_base(tc, base[2], ref.tanh_c) == "");
      CHECK(mismatch_base(r, base[3], ref.r) == "");
    }
  });
}

// dc_y = dc + dr o (1 - tanh_c^2); the gates' pre-activations: di = dc_y g i (1 - i),
// df = dc_y c_prev f (1 - f), dg = dc_y i (1 - g^2), do = dr tanh_c o (1 - o); and
// dc_prev = dc_y f.
template <class T>
void check_lstm_cell_backward_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const LstmCase<T> fwd(n, H, seed);
    const std::vector<T> acts = to_t<T>(fwd.acts), tc = to_t<T>(fwd.tanh_c);
    std::vector<E> dgates(acts.size()), dc_prev(tc.size());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < H; ++j) {
        const size_t k = size_t(b * H + j), q = size_t(b * 4 * H + j), h = size_t(H);
        const E i = leaf(acts[q]), f = leaf(acts[q + h]), g = leaf(acts[q + 2 * h]), o = leaf(acts[q + 3 * h]);
        const E t = leaf(tc[k]), d = leaf(fwd.dr[k]), dcy = leaf(fwd.dc[k]) + d * o * (kOne - t * t);
        dgates[q] = dcy * g * i * (kOne - i);
        dgates[q + h] = dcy * leaf(fwd.c_prev[k]) * f * (kOne - f);
        dgates[q + 2 * h] = dcy * i * (kOne - g * g);
        dgates[q + 3 * h] = d * t * o * (kOne - o);
        dc_prev[k] = dcy * f;
      }
    std::vector<T> base[2];
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> dc = in_out(fwd.dc), dg = out_buffer<T>(4 * n * H);
      kernels::lstm_cell_backward_rows.of<T>().get(level)(acts.data(), tc.data(), fwd.c_prev.data(), fwd.dr.data(),
                                                          dc.data(), dg.data(), n, H);
      CHECK(mismatch(dg, dgates) == "");
      CHECK(mismatch(dc, dc_prev) == "");
      if (level == K::sse2) base[0] = dg, base[1] = dc;
      CHECK(same_all(dg, base[0]));
      CHECK(same_all(dc, base[1]));
    }
  });
}

// ---- GRU -----------------------------------------------------------------------
// xg, hg (n, 3H) in gate order r, z, n and h_prev (n, H); the reference step:
// r = sigmoid(hr + xr), z = sigmoid(hz + xz), n = tanh(xn + r hn), h = (h_prev - n) z + n.
// Backward from the reference's acts (rounded to T) and dh.
template <class T>
struct GruCase {
  int64_t n, H;
  std::vector<T> xg, hg, h_prev, dh;
  std::vector<E> acts, h;
  GruCase(int64_t n_, int64_t H_, uint64_t seed)
      : n(n_),
        H(H_),
        xg(inputs<T>(3 * n * H, seed)),
        hg(inputs<T>(3 * n * H, seed + 1)),
        h_prev(inputs<T>(n * H, seed + 2)),
        dh(inputs<T>(n * H, seed + 3)),
        acts(size_t(3 * n * H)),
        h(size_t(n * H)) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < H; ++j) {
        const size_t k = size_t(b * H + j), q = size_t(b * 3 * H + j), w = size_t(H);
        const E r = sigmoid<T>(leaf(hg[q]) + leaf(xg[q])), z = sigmoid<T>(leaf(hg[q + w]) + leaf(xg[q + w]));
        const E nn = tanh_(leaf(xg[q + 2 * w]) + leaf(hg[q + 2 * w]) * r);
        acts[q] = r, acts[q + w] = z, acts[q + 2 * w] = nn;
        h[k] = (leaf(h_prev[k]) - nn) * z + nn;
      }
  }
};

template <class T>
void check_gru_cell_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const GruCase<T> ref(n, H, seed);
    std::vector<T> base[2];
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> acts = out_buffer<T>(3 * n * H), h = out_buffer<T>(n * H);
      kernels::gru_cell_rows.of<T>().get(level)(ref.xg.data(), ref.hg.data(), ref.h_prev.data(), acts.data(), h.data(),
                                                n, H);
      CHECK(mismatch(acts, ref.acts) == "");
      CHECK(mismatch(h, ref.h) == "");
      if (level == K::sse2) base[0] = acts, base[1] = h;
      CHECK(mismatch_base(acts, base[0], ref.acts) == "");
      CHECK(mismatch_base(h, base[1], ref.h) == "");
    }
  });
}

// h = h_prev z + n (1 - z), n = tanh(an), an = xn + r hn: dan = dh (1 - z)(1 - n^2),
// dar = dan hn r (1 - r), daz = dh (h_prev - n) z (1 - z); dxg = (dar, daz, dan),
// dhg = (dar, daz, dan r); dh_prev = dh z.
template <class T>
void check_gru_cell_backward_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const GruCase<T> fwd(n, H, seed);
    const std::vector<T> acts = to_t<T>(fwd.acts);
    std::vector<E> dxg(acts.size()), dhg(acts.size()), dh_prev(size_t(n * H));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < H; ++j) {
        const size_t k = size_t(b * H + j), q = size_t(b * 3 * H + j), w = size_t(H);
        const E r = leaf(acts[q]), z = leaf(acts[q + w]), nn = leaf(acts[q + 2 * w]), g = leaf(fwd.dh[k]);
        const E dan = g * (kOne - z) * (kOne - nn * nn), dar = dan * leaf(fwd.hg[q + 2 * w]) * r * (kOne - r);
        const E daz = g * (leaf(fwd.h_prev[k]) - nn) * z * (kOne - z);
        dxg[q] = dhg[q] = dar, dxg[q + w] = dhg[q + w] = daz, dxg[q + 2 * w] = dan;
        dhg[q + 2 * w] = dan * r;
        dh_prev[k] = g * z;
      }
    std::vector<T> base[3];
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> dx = out_buffer<T>(3 * n * H), dhh = out_buffer<T>(3 * n * H), dp = out_buffer<T>(n * H);
      kernels::gru_cell_backward_rows.of<T>().get(level)(acts.data(), fwd.hg.data(), fwd.h_prev.data(), fwd.dh.data(),
                                                         dx.data(), dhh.data(), dp.data(), n, H);
      CHECK(mismatch(dx, dxg) == "");
      CHECK(mismatch(dhh, dhg) == "");
      CHECK(mismatch(dp, dh_prev) == "");
      if (level == K::sse2) base[0] = dx, base[1] = dhh, base[2] = dp;
      CHECK(same_all(dx, base[0]));
      CHECK(same_all(dhh, base[1]));
      CHECK(same_all(dp, base[2]));
    }
  });
}

// ---- Elman RNN -----------------------------------------------------------------
// tanh(a), with tanh(+-0) = +-0; relu(a) = a < 0 ? 0 : a, bit for bit (-0 and NaN kept).
template <class T>
void check_rnn_cell_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const int64_t count = n * H;
    const std::vector<T> a = inputs<T>(count, seed);
    std::vector<E> th(a.size());
    std::vector<T> relu(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) th[k] = tanh_(leaf(a[k])), relu[k] = a[k] < 0 ? T(0) : a[k];
    relu.push_back(kGuard<T>);
    std::vector<T> base;
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      std::vector<T> t = in_out(a), r = in_out(a);
      kernels::rnn_cell_rows.of<T>().get(level)(t.data(), count, false);
      kernels::rnn_cell_rows.of<T>().get(level)(r.data(), count, true);
      CHECK(mismatch(t, th) == "");
      CHECK(saturated_off(a, t, th) == 0);
      int zero_sign = 0;
      for (std::size_t k = 0; k < a.size(); ++k) zero_sign += a[k] == 0 && !same_bits(t[k], a[k]);
      CHECK(zero_sign == 0);
      CHECK(same_all(r, relu));
      if (level == K::sse2) base = t;
      CHECK(mismatch_base(t, base, th) == "");
    }
  });
}

// tanh: da = dh (1 - h^2), h from tanh; relu: da = h > 0 ? dh : 0, bit for bit, for h
// from relu and for any h (-0, NaN and -inf give 0).
template <class T>
void check_rnn_cell_backward_rows() {
  each_shape([](int64_t n, int64_t H, uint64_t seed) {
    const int64_t count = n * H;
    const std::vector<T> a = inputs<T>(count, seed), dh = inputs<T>(count, seed + 1);
    std::vector<T> th(a.size()), relu(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) th[k] = T(std::tanh(double(a[k]))), relu[k] = a[k] < 0 ? T(0) : a[k];
    std::vector<E> da(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) da[k] = leaf(dh[k]) * (kOne - leaf(th[k]) * leaf(th[k]));
    std::vector<T> base;
    for (K level : kernels::available_simd_levels()) {
      CAPTURE(kernels::to_string(level));
      const auto backward = kernels::rnn_cell_backward_rows.of<T>().get(level);
      std::vector<T> got = out_buffer<T>(count);
      backward(th.data(), dh.data(), got.data(), count, false);
      CHECK(mismatch(got, da) == "");
      if (level == K::sse2) base = got;
      CHECK(same_all(got, base));
      for (const std::vector<T>& h : {relu, a}) {
        std::vector<T> want(a.size());
        for (std::size_t k = 0; k < a.size(); ++k) want[k] = h[k] > 0 ? dh[k] : T(0);
        want.push_back(kGuard<T>);
        std::vector<T> got_relu = out_buffer<T>(count);
        backward(h.data(), dh.data(), got_relu.data(), count, true);
        CHECK(same_all(got_relu, want));
      }
    }
  });
}

const std::vector<StubCheck> kChecks{
    {"lstm_cell_rows_f32", check_lstm_cell_rows<float>},
    {"lstm_cell_rows_f64", check_lstm_cell_rows<double>},
    {"lstm_cell_backward_rows_f32", check_lstm_cell_backward_rows<float>},
    {"lstm_cell_backward_rows_f64", check_lstm_cell_backward_rows<double>},
    {"gru_cell_rows_f32", check_gru_cell_rows<float>},
    {"gru_cell_rows_f64", check_gru_cell_rows<double>},
    {"gru_cell_backward_rows_f32", check_gru_cell_backward_rows<float>},
    {"gru_cell_backward_rows_f64", check_gru_cell_backward_rows<double>},
    {"rnn_cell_rows_f32", check_rnn_cell_rows<float>},
    {"rnn_cell_rows_f64", check_rnn_cell_rows<double>},
    {"rnn_cell_backward_rows_f32", check_rnn_cell_backward_rows<float>},
    {"rnn_cell_backward_rows_f64", check_rnn_cell_backward_rows<double>},
};

}  // namespace

TEST_CASE("simd: every recurrent gate stub has a check, and each level passes it") {
  run_stub_checks("test_simd_rnn", kChecks);
}
