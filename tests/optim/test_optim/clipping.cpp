// test_optim, part: gradient clipping (clip_grad_norm_ over all parameters, non-finite
// norms, clip_grad_value_).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"
#include "../optim_test_util.h"

#include <cmath>
#include <limits>
#include <vector>

using ag::DType;
using ag::Shape;
using ag::Tensor;
namespace optim = ag::optim;

using namespace optim_test_util;

// ---- clipping ----------------------------------------------------------------------------

namespace {

// Three parameters with gradients (and one without), f64 and f32 mixed.
struct Grads {
  Tensor a = make_param({0, 0, 0}, Shape{3}, DType::f64);
  Tensor b = make_param({0, 0, 0, 0}, Shape{2, 2}, DType::f32);
  Tensor c = make_param({0}, Shape{1}, DType::f64);
  Tensor none = make_param({0, 0}, Shape{2}, DType::f64);  // never gets a gradient
  std::vector<double> ga{3.0, -4.0, 1.0}, gb{-2.0, 0.5, 6.0, -1.5}, gc{-7.0};
  Grads() {
    set_grad(a, ga);
    set_grad(b, gb);
    set_grad(c, gc);
  }
  std::vector<Tensor> params() const { return {a, b, c, none}; }
  std::vector<double> all() const {
    std::vector<double> v = ga;
    v.insert(v.end(), gb.begin(), gb.end());
    v.insert(v.end(), gc.begin(), gc.end());
    return v;
  }
};

double norm_of(const std::vector<double>& v, double type) {
  double acc = 0;
  for (double x : v) acc = std::isinf(type) ? std::max(acc, std::abs(x)) : acc + std::pow(std::abs(x), type);
  return std::isinf(type) ? acc : std::pow(acc, 1 / type);
}

std::vector<double> scaled(const std::vector<double>& v, double s) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * s);
  return out;
}

}  // namespace

TEST_CASE("clip_grad_norm_ clips by the norm over all parameters together") {
  SUBCASE("2-, 1-, inf- and 3-norms above max_norm") {
    for (double type : {2.0, 1.0, optim::kInfNorm, 3.0}) {
      CAPTURE(type);
      Grads g;
      const double total = norm_of(g.all(), type);
      const double max_norm = 0.9 * total;
      if (!std::isinf(type)) {  // each parameter's own norm is below max_norm; only the total is above
        REQUIRE(norm_of(g.ga, type) < max_norm);
        REQUIRE(norm_of(g.gb, type) < max_norm);
        REQUIRE(norm_of(g.gc, type) < max_norm);
      }
      double got = optim::clip_grad_norm_(g.params(), max_norm, type);
      CHECK(got == doctest::Approx(total).epsilon(1e-14));
      const double s = max_norm / (total + 1e-6);
      CHECK(diff(g.a.grad().to_vector<double>(), scaled(g.ga, s), 1e-14) == "");
      CHECK(diff(g.b.grad().to_vector<double>(), scaled(g.gb, s), 1e-7) == "");
      CHECK(diff(g.c.grad().to_vector<double>(), scaled(g.gc, s), 1e-14) == "");
      CHECK_FALSE(g.none.grad().defined());
      // The clipped total is max_norm (to within the 1e-6).
      std::vector<double> after = g.a.grad().to_vector<double>();
      for (double x : g.b.grad().to_vector<double>()) after.push_back(x);
      after.push_back(g.c.grad().item<double>());
      CHECK(norm_of(after, type) == doctest::Approx(max_norm).epsilon(1e-6));
    }
  }
  SUBCASE("below max_norm nothing changes") {
    Grads g;
    const double total = norm_of(g.all(), 2.0);
    CHECK(optim::clip_grad_norm_(g.params(), total * 1.01) == doctest::Approx(total).epsilon(1e-14));
    CHECK(g.a.grad().to_vector<double>() == g.ga);
    CHECK(g.b.grad().to_vector<double>() == g.gb);
    CHECK(g.c.grad().to_vector<double>() == g.gc);
    // Exactly at max_norm the factor max_norm / (total + 1e-6) is just below 1, and torch
    // scales by it.
    Grads h;
    optim::clip_grad_norm_(h.params(), total);
    CHECK(diff(h.a.grad().to_vector<double>(), scaled(h.ga, total / (total + 1e-6)), 1e-15) == "");
  }
  SUBCASE("no gradients at all") {
    Tensor p = make_param({1, 2}, Shape{2}, DType::f32);
    CHECK(optim::clip_grad_norm_({p}, 1.0) == 0.0);
    CHECK(optim::clip_grad_norm_({}, 1.0) == 0.0);
  }
  CHECK_THROWS_AS(optim::clip_grad_norm_({}, 1.0, 0.0), ag::ValueError);
}

TEST_CASE("clip_grad_norm_ returns a non-finite norm and leaves the gradients alone") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double bad;
    double type;
    bool want_nan;
  };
  for (Case c :
       {Case{inf, 2.0, false}, Case{inf, 1.0, false}, Case{inf, optim::kInfNorm, false}, Case{-inf, 2.0, false},
        Case{nan, 2.0, true}, Case{nan, 1.0, true}, Case{nan, optim::kInfNorm, true}}) {
    CAPTURE(c.bad);
    CAPTURE(c.type);
    for (int where = 0; where < 2; ++where) {  // the bad value first, or after large finite ones
      CAPTURE(where);
      Grads g;
      if (where == 0)
        g.ga[0] = c.bad;
      else
        g.gc[0] = c.bad;
      set_grad(g.a, g.ga);
      set_grad(g.c, g.gc);
      double total = optim::clip_grad_norm_(g.params(), 1.0, c.type);
      if (c.want_nan)
        CHECK(std::isnan(total));
      else
        CHECK(total == inf);
      auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
        for (std::size_t i = 0; i < x.size(); ++i)
          if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
        return x.size() == y.size();
      };
      CHECK(same(g.a.grad().to_vector<double>(), g.ga));
      CHECK(same(g.b.grad().to_vector<double>(), g.gb));
      CHECK(same(g.c.grad().to_vector<double>(), g.gc));
    }
  }
  // inf and NaN together: NaN, as torch.
  Grads g;
  g.ga[0] = inf;
  g.gc[0] = nan;
  set_grad(g.a, g.ga);
  set_grad(g.c, g.gc);
  CHECK(std::isnan(optim::clip_grad_norm_(g.params(), 1.0)));
  CHECK(g.b.grad().to_vector<double>() == g.gb);
}

TEST_CASE("clip_grad_value_ clamps every gradient element") {
  Grads g;
  optim::clip_grad_value_(g.params(), 2.5);
  CHECK(g.a.grad().to_vector<double>() == std::vector<double>{2.5, -2.5, 1.0});
  CHECK(g.b.grad().to_vector<double>() == std::vector<double>{-2.0, 0.5, 2.5, -1.5});
  CHECK(g.c.grad().to_vector<double>() == std::vector<double>{-2.5});
  CHECK_FALSE(g.none.grad().defined());
  CHECK(g.a.grad().dtype() == DType::f64);
  CHECK(g.b.grad().dtype() == DType::f32);
  optim::clip_grad_value_(g.params(), 0.0);
  CHECK(g.a.grad().to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK_THROWS_AS(optim::clip_grad_value_(g.params(), -1.0), ag::ValueError);
}
