// Reductions against hand-computed values and a naive reference that walks the
// elements itself: sum, mean, var, max/min, argmax/argmin, logsumexp over single,
// multiple, negative and all dims, keepdim, on contiguous and strided inputs.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

using RowFn = std::function<double(const std::vector<double>&)>;

// Reduces row-major `vals` of `shape` over `dims` (sorted, non-negative): for each kept
// index, f gets the reduced elements in row-major order of the reduced dims.
std::vector<double> reduce_ref(const std::vector<double>& vals, const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& dims, const RowFn& f) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<bool> red(static_cast<std::size_t>(nd), false);
  for (int64_t d : dims) red[static_cast<std::size_t>(d)] = true;
  std::vector<int64_t> kept, reduced;
  for (int64_t d = 0; d < nd; ++d) (red[static_cast<std::size_t>(d)] ? reduced : kept).push_back(d);
  std::vector<int64_t> stride(static_cast<std::size_t>(nd), 1);
  for (int64_t d = nd - 2; d >= 0; --d)
    stride[static_cast<std::size_t>(d)] =
        stride[static_cast<std::size_t>(d + 1)] * shape[static_cast<std::size_t>(d + 1)];
  auto count = [&](const std::vector<int64_t>& ds) {
    int64_t n = 1;
    for (int64_t d : ds) n *= shape[static_cast<std::size_t>(d)];
    return n;
  };
  // offset of the k-th (row-major) combination of indices over `ds`
  auto offset = [&](const std::vector<int64_t>& ds, int64_t k) {
    int64_t off = 0;
    for (auto it = ds.rbegin(); it != ds.rend(); ++it) {
      int64_t n = shape[static_cast<std::size_t>(*it)];
      off += (k % n) * stride[static_cast<std::size_t>(*it)];
      k /= n;
    }
    return off;
  };
  std::vector<double> out;
  for (int64_t o = 0; o < count(kept); ++o) {
    std::vector<double> row;
    for (int64_t r = 0; r < count(reduced); ++r)
      row.push_back(vals[static_cast<std::size_t>(offset(kept, o) + offset(reduced, r))]);
    out.push_back(f(row));
  }
  return out;
}

double r_sum(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v;
  return s;
}
double r_mean(const std::vector<double>& r) { return r_sum(r) / static_cast<double>(r.size()); }
RowFn r_var(int correction) {
  return [correction](const std::vector<double>& r) {
    double m = r_mean(r), s = 0;
    for (double v : r) s += (v - m) * (v - m);
    return s / static_cast<double>(static_cast<int>(r.size()) - correction);
  };
}
double r_max(const std::vector<double>& r) { return *std::max_element(r.begin(), r.end()); }
double r_min(const std::vector<double>& r) { return *std::min_element(r.begin(), r.end()); }
double r_argmax(const std::vector<double>& r) {
  return static_cast<double>(std::max_element(r.begin(), r.end()) - r.begin());
}
double r_argmin(const std::vector<double>& r) {
  return static_cast<double>(std::min_element(r.begin(), r.end()) - r.begin());
}
double r_logsumexp(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += std::exp(v);
  return std::log(s);
}

// [2, 3, 4] values without ties along any dim: v = ((7 i + 5 j + 3 k) mod 13) + i/10 - j/100
std::vector<double> x234_values() {
  std::vector<double> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back((7 * i + 5 * j + 3 * k) % 13 + i / 10.0 - j / 100.0 + k / 1000.0);
  return v;
}

// The same values as the transposed view x.transpose(0, 2) [4, 3, 2] sees them, computed
// by index arithmetic (not by the library).
std::vector<double> transposed_values(const std::vector<double>& v) {
  std::vector<double> t;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) t.push_back(v[static_cast<std::size_t>(12 * i + 4 * j + k)]);
  return t;
}

struct DimsCase {
  std::vector<int64_t> dims;     // as passed (may be negative)
  std::vector<int64_t> wrapped;  // sorted, non-negative
  const char* keep_shape;        // with keepdim
  const char* drop_shape;        // without
};

}  // namespace

TEST_CASE("reduce: hand-computed values on a 2 x 2 tensor") {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  CHECK(diff(x.sum({0}), {4, 6}) == "");
  CHECK(diff(x.sum({1}), {3, 7}) == "");
  CHECK(x.sum().item<float>() == 10.0f);
  CHECK(x.sum().dim() == 0);
  CHECK(diff(x.mean({1}), {1.5, 3.5}) == "");
  CHECK(x.mean().item<float>() == 2.5f);
  CHECK(ag::var(x).item<float>() == doctest::Approx(5.0 / 3.0));    // unbiased: 5 / 3
  CHECK(ag::var(x, {}, 0).item<float>() == doctest::Approx(1.25));  // biased: 5 / 4
  CHECK(diff(ag::var(x, {0}), {2, 2}) == "");                       // over dim 0: ((1-2)^2 + (3-2)^2) / 1
  CHECK(diff(ag::var(x, {0}, 0), {1, 1}) == "");
  auto [mv, mi] = ag::max(x, 1);
  CHECK(diff(mv, {2, 4}) == "");
  CHECK(mi.dtype() == DType::i64);
  CHECK(mi.to_vector<int64_t>() == std::vector<int64_t>{1, 1});
  CHECK(ag::max(x).item<float>() == 4.0f);
  CHECK(ag::min(x).item<float>() == 1.0f);
  CHECK(diff(ag::logsumexp(x, {1}), {std::log(std::exp(1.0) + std::exp(2.0)), std::log(std::exp(3.0) + std::exp(4.0))},
             1e-6) == "");
}

TEST_CASE("reduce: sum, mean, var, logsumexp over single, multiple, negative and all dims") {
  const std::vector<double> v = x234_values();
  const std::vector<int64_t> shape{2, 3, 4};
  std::vector<DimsCase> cases = {
      {{0}, {0}, "[1, 3, 4]", "[3, 4]"},         {{1}, {1}, "[2, 1, 4]", "[2, 4]"},
      {{2}, {2}, "[2, 3, 1]", "[2, 3]"},         {{-1}, {2}, "[2, 3, 1]", "[2, 3]"},
      {{-3}, {0}, "[1, 3, 4]", "[3, 4]"},        {{0, 2}, {0, 2}, "[1, 3, 1]", "[3]"},
      {{-1, 0}, {0, 2}, "[1, 3, 1]", "[3]"},     {{1, -1}, {1, 2}, "[2, 1, 1]", "[2]"},
      {{0, 1, 2}, {0, 1, 2}, "[1, 1, 1]", "[]"},
  };
  for (DType dt : {DType::f64, DType::f32}) {
    Tensor x = Tensor::from_vector(v, {2, 3, 4}).to(dt);
    double tol = dt == DType::f64 ? 1e-12 : 1e-5;
    for (const DimsCase& c : cases) {
      CAPTURE(str(ag::Dims(c.dims)));
      CAPTURE(dt);
      for (bool keep : {false, true}) {
        CAPTURE(keep);
        const char* want_shape = keep ? c.keep_shape : c.drop_shape;
        Tensor s = x.sum(c.dims, keep);
        CHECK(str(s.shape()) == want_shape);
        CHECK(diff(s, reduce_ref(v, shape, c.wrapped, r_sum), tol) == "");
        Tensor m = x.mean(c.dims, keep);
        CHECK(str(m.shape()) == want_shape);
        CHECK(diff(m, reduce_ref(v, shape, c.wrapped, r_mean), tol) == "");
        for (int corr : {0, 1}) {
          Tensor va = ag::var(x, c.dims, corr, keep);
          CHECK(str(va.shape()) == want_shape);
          CHECK(diff(va, reduce_ref(v, shape, c.wrapped, r_var(corr)), tol) == "");
        }
        Tensor l = ag::logsumexp(x, c.dims, keep);
        CHECK(str(l.shape()) == want_shape);
        CHECK(diff(l, reduce_ref(v, shape, c.wrapped, r_logsumexp), tol) == "");
      }
    }
    // {} means all dims
    CHECK(x.sum().item<double>() == doctest::Approx(r_sum(v)).epsilon(tol));
    CHECK(str(x.sum({}, true).shape()) == "[1, 1, 1]");
    CHECK(x.mean().item<double>() == doctest::Approx(r_mean(v)).epsilon(tol));
    CHECK(ag::var(x).item<double>() == doctest::Approx(r_var(1)(v)).epsilon(tol));
    CHECK(ag::var(x, {}, 0).item<double>() == doctest::Approx(r_var(0)(v)).epsilon(tol));
  }
}

TEST_CASE("reduce: max/min values and indices, argmax/argmin, over each dim") {
  const std::vector<double> v = x234_values();
  const std::vector<int64_t> shape{2, 3, 4};
  Tensor x = Tensor::from_vector(v, {2, 3, 4});
  for (int64_t d : {0, 1, 2, -1, -2}) {
    CAPTURE(d);
    std::vector<int64_t> w{d < 0 ? d + 3 : d};
    for (bool keep : {false, true}) {
      auto [mv, mi] = ag::max(x, d, keep);
      auto [nv, ni] = ag::min(x, d, keep);
      Shape want = x.shape();
      if (keep)
        want[w[0]] = 1;
      else
        want.erase(w[0]);
      CHECK(mv.shape() == want);
      CHECK(mi.shape() == want);
      CHECK(ni.dtype() == DType::i64);
      CHECK(diff(mv, reduce_ref(v, shape, w, r_max)) == "");
      CHECK(diff(mi, reduce_ref(v, shape, w, r_argmax)) == "");
      CHECK(diff(nv, reduce_ref(v, shape, w, r_min)) == "");
      CHECK(diff(ni, reduce_ref(v, shape, w, r_argmin)) == "");
      CHECK(diff(ag::argmax(x, d, keep), reduce_ref(v, shape, w, r_argmax)) == "");
      CHECK(diff(ag::argmin(x, d, keep), reduce_ref(v, shape, w, r_argmin)) == "");
    }
  }
  CHECK(ag::max(x).item<double>() == r_max(v));
  CHECK(ag::min(x).item<double>() == r_min(v));
  CHECK(ag::max(x).dim() == 0);
}

TEST_CASE("reduce: on a transposed (non-contiguous) input") {
  const std::vector<double> tv = transposed_values(x234_values());
  const std::vector<int64_t> shape{4, 3, 2};
  Tensor x = Tensor::from_vector(x234_values(), {2, 3, 4}).transpose(0, 2);
  REQUIRE_FALSE(x.is_contiguous());
  for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 2}, {0, 1}, {1, 2}, {0, 1, 2}}) {
    CAPTURE(str(ag::Dims(dims)));
    CHECK(diff(x.sum(dims), reduce_ref(tv, shape, dims, r_sum), 1e-12) == "");
    CHECK(diff(x.mean(dims, true), reduce_ref(tv, shape, dims, r_mean), 1e-12) == "");
    CHECK(diff(ag::var(x, dims), reduce_ref(tv, shape, dims, r_var(1)), 1e-12) == "");
    CHECK(diff(ag::logsumexp(x, dims), reduce_ref(tv, shape, dims, r_logsumexp), 1e-12) == "");
  }
  for (int64_t d : {0, 1, 2}) {
    CAPTURE(d);
    std::vector<int64_t> w{d};
    CHECK(diff(ag::max(x, d).first, reduce_ref(tv, shape, w, r_max)) == "");
    CHECK(diff(ag::max(x, d).second, reduce_ref(tv, shape, w, r_argmax)) == "");
    CHECK(diff(ag::min(x, d).first, reduce_ref(tv, shape, w, r_min)) == "");
    CHECK(diff(ag::argmin(x, d), reduce_ref(tv, shape, w, r_argmin)) == "");
  }
  // a slice with a step along the reduced dim
  Tensor s = Tensor::from_vector(x234_values(), {2, 3, 4}).slice(2, 1, 4, 2);  // k = 1, 3
  std::vector<double> sv;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k : {1, 3}) sv.push_back(x234_values()[static_cast<std::size_t>(12 * i + 4 * j + k)]);
  CHECK(diff(s.sum({-1}), reduce_ref(sv, {2, 3, 2}, {2}, r_sum), 1e-12) == "");
  CHECK(diff(ag::max(s, 0).second, reduce_ref(sv, {2, 3, 2}, {0}, r_argmax)) == "");
}

TEST_CASE("reduce: integer and bool sums give i64; ties and NaN in max") {
  Tensor i = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(i.sum().dtype() == DType::i64);
  CHECK(i.sum().item<int64_t>() == 21);
  CHECK(i.sum({0}).to_vector<int64_t>() == std::vector<int64_t>{5, 7, 9});
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, true, true});
  CHECK(b.sum().item<int64_t>() == 3);
  CHECK(ag::max(i, 1).first.to_vector<int32_t>() == std::vector<int32_t>{3, 6});
  // ties: the first index, as PyTorch
  Tensor t = Tensor::from_vector(std::vector<float>{2, 5, 5, 1, 1});
  CHECK(ag::argmax(t, 0).item<int64_t>() == 1);
  CHECK(ag::argmin(t, 0).item<int64_t>() == 3);
  // NaN propagates and its index wins
  Tensor n = Tensor::from_vector(std::vector<double>{1, NAN, 3});
  auto [nv, ni] = ag::max(n, 0);
  CHECK(std::isnan(nv.item<double>()));
  CHECK(ni.item<int64_t>() == 1);
  CHECK(std::isnan(ag::min(n).item<double>()));
}

TEST_CASE("reduce: logsumexp is stable for large and -inf inputs") {
  Tensor x = Tensor::from_vector(std::vector<double>{1000, 1000, -INFINITY, -INFINITY}, {2, 2});
  std::vector<double> l = ag::logsumexp(x, {1}).to_vector<double>();
  CHECK(l[0] == doctest::Approx(1000 + std::log(2.0)));
  CHECK(l[1] == -INFINITY);
  Tensor big = Tensor::from_vector(std::vector<float>{100, 0}, {2});  // exp(100) overflows f32
  CHECK(ag::logsumexp(big, {0}).item<float>() == doctest::Approx(100.0));
}

TEST_CASE("reduce: errors and edge cases") {
  Tensor x = ag::zeros({2, 3});
  CHECK_THROWS_MSG(ag::mean(ag::ones({2}, DType::i64)), ag::DTypeError,
                   "mean: expected a floating tensor (f32, f64), got i64 with shape [2]");
  CHECK_THROWS_MSG(ag::var(ag::ones({2}, DType::i32)), ag::DTypeError, "var: expected a floating tensor");
  CHECK_THROWS_MSG(ag::max(x, 2), ag::IndexError, "max: dim 2 is out of range");
  CHECK_THROWS_MSG(ag::max(ag::zeros({0, 3}), 0), ag::IndexError, "max: cannot reduce over dim 0 of size 0");
  CHECK_THROWS_MSG(ag::logsumexp(x, {0, -2}), ag::IndexError, "logsumexp: dim -2 appears more than once");
  CHECK(ag::zeros({0, 3}).sum().item<float>() == 0.0f);
  CHECK(std::isnan(ag::var(ag::ones({1}, DType::f64)).item<double>()));  // 0 / 0, as PyTorch
  CHECK(ag::max(ag::scalar_tensor(3.0), 0).first.item<float>() == 3.0f);
}
