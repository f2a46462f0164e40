// The reduction family against the issue 10 reference fixtures (tests/fixtures/README.md,
// "ops_ties" and "ops_scan_reduce": PyTorch 1.13 float64 values and gradients; cummax /
// cummin indices for float, integer and bool inputs).
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using test_util::Fixture;
using test_util::load_fixture;

namespace {

constexpr double kTol = 1e-12;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// out = fn(x) for a fresh leaf x; checks out, and x's gradient of sum(out * upstream)
// (of out itself when upstream is undefined: the fixtures' full reductions).
void check(const Fixture& f, const std::function<Tensor(const Tensor&)>& fn, const std::string& input,
           const std::string& out, const std::string& grad, const std::string& upstream = "") {
  INFO("fixture ", f.name, ": ", out, " / ", grad);
  Tensor x = f.at(input).clone().requires_grad_();
  Tensor y = fn(x);
  CHECK(tc::diff(y, values(f.at(out)), kTol) == "");
  if (upstream.empty())
    y.backward();
  else
    y.backward(f.at(upstream).reshape(y.shape()));
  CHECK(tc::diff(x.grad(), f.at(grad), kTol) == "");
}

}  // namespace

TEST_CASE("fixture ops_ties: maximum/minimum, max/min/amax/amin full and per dim") {
  const Fixture f = load_fixture("ops_ties");
  for (bool is_max : {true, false}) {
    const std::string op = is_max ? "maximum" : "minimum";
    Tensor a = f.at("binary.a").clone().requires_grad_(), b = f.at("binary.b").clone().requires_grad_();
    Tensor y = is_max ? maximum(a, b) : minimum(a, b);
    CHECK(tc::diff(y, f.at(op + ".out")) == "");
    y.backward(f.at("binary.upstream"));
    CHECK(tc::diff(a.grad(), f.at(op + ".grad.a")) == "");
    CHECK(tc::diff(b.grad(), f.at(op + ".grad.b")) == "");
  }
  check(
      f, [](const Tensor& x) { return max(x); }, "reduce.x", "max.all.out", "max.all.grad");
  check(
      f, [](const Tensor& x) { return min(x); }, "reduce.x", "min.all.out", "min.all.grad");
  check(
      f, [](const Tensor& x) { return amax(x); }, "reduce.x", "amax.all.out", "amax.all.grad");
  check(
      f, [](const Tensor& x) { return amin(x); }, "reduce.x", "amin.all.out", "amin.all.grad");
  for (int64_t d : {0, 1}) {
    const std::string dim = "dim" + std::to_string(d), up = "reduce." + dim + ".upstream";
    for (bool is_max : {true, false}) {
      const std::string op = is_max ? "max" : "min";
      INFO(op, " along ", dim);
      Tensor x = f.at("reduce.x");
      auto [v, i] = is_max ? max(x, d) : min(x, d);
      CHECK(tc::diff(v, f.at(op + "." + dim + ".values")) == "");
      CHECK(i.to_vector<int64_t>() == f.at(op + "." + dim + ".indices").to_vector<int64_t>());
      CHECK((is_max ? argmax(x, d) : argmin(x, d)).to_vector<int64_t>() == i.to_vector<int64_t>());
      check(
          f, [d, is_max](const Tensor& t) { return (is_max ? max(t, d) : min(t, d)).first; }, "reduce.x",
          op + "." + dim + ".values", op + "." + dim + ".grad", up);
      const std::string aop = is_max ? "amax" : "amin";
      check(
          f, [d, is_max](const Tensor& t) { return is_max ? amax(t, {d}) : amin(t, {d}); }, "reduce.x",
          aop + "." + dim + ".out", aop + "." + dim + ".grad", up);
    }
  }
}

TEST_CASE("fixture ops_ties: stable sort / argsort with ties and NaN, topk with ties") {
  const Fixture f = load_fixture("ops_ties");
  for (bool desc : {false, true}) {
    const std::string k = desc ? "sort.desc" : "sort.asc";
    INFO(k);
    Tensor x = f.at("sort.input").clone().requires_grad_();
    auto [v, i] = sort(x, 0, desc, true);
    CHECK(tc::diff(v, f.at(k + ".values")) == "");
    CHECK(i.to_vector<int64_t>() == f.at(k + ".indices").to_vector<int64_t>());
    CHECK(argsort(x, -1, desc, true).to_vector<int64_t>() ==
          f.at(desc ? "argsort.desc" : "argsort.asc").to_vector<int64_t>());
    v.backward(f.at("sort.upstream"));
    CHECK(tc::diff(x.grad(), f.at(k + ".grad")) == "");
  }
  auto [v1, i1] = sort(f.at("sort2d.input"), 1);
  CHECK(tc::diff(v1, f.at("sort2d.asc.values")) == "");
  CHECK(i1.to_vector<int64_t>() == f.at("sort2d.asc.indices").to_vector<int64_t>());
  auto [v0, i0] = sort(f.at("sort2d.input"), 0);
  CHECK(tc::diff(v0, f.at("sort2d.dim0.values")) == "");
  CHECK(i0.to_vector<int64_t>() == f.at("sort2d.dim0.indices").to_vector<int64_t>());

  for (bool largest : {true, false}) {
    const std::string k = largest ? "topk.largest" : "topk.smallest";
    INFO(k);
    Tensor x = f.at("topk.input").clone().requires_grad_();
    auto [v, i] = topk(x, 3, 0, largest, true);
    CHECK(tc::diff(v, f.at(k + ".values")) == "");
    CHECK(i.to_vector<int64_t>() == f.at(k + ".indices").to_vector<int64_t>());  // 1.13's exact tie order
    v.backward(f.at("topk.upstream"));
    CHECK(tc::diff(x.grad(), f.at(k + ".grad")) == "");
  }
}

TEST_CASE("fixture ops_ties: cummax / cummin with ties, NaN, +-inf, integer and bool inputs") {
  // PyTorch 1.13: a tie takes the later index, a NaN propagates with its own index (a
  // later NaN takes the index); the gradient goes to the index.
  const Fixture f = load_fixture("ops_ties");
  for (bool max : {true, false})
    for (int64_t dim : {0, 1}) {
      const std::string k = std::string(max ? "cummax" : "cummin") + ".dim" + std::to_string(dim);
      INFO(k);
      Tensor x = f.at("cum.input").clone().requires_grad_();
      auto [v, i] = max ? cummax(x, dim - 2) : cummin(x, dim - 2);  // negative dims
      CHECK(tc::diff(v, f.at(k + ".values")) == "");
      CHECK(i.dtype() == DType::i64);
      CHECK(i.to_vector<int64_t>() == f.at(k + ".indices").to_vector<int64_t>());
      v.backward(f.at("cum.upstream"));
      CHECK(tc::diff(x.grad(), f.at(k + ".grad")) == "");
    }
  for (const char* name : {"cummax", "cummin"})
    for (const char* in : {"int", "bool"}) {
      const std::string k = std::string(name) + "." + in;
      INFO(k);
      const Tensor x = f.at(std::string("cum.") + in);
      auto [v, i] = std::string(name) == "cummax" ? cummax(x, 1) : cummin(x, 1);
      CHECK(v.dtype() == x.dtype());
      CHECK(v.to_vector<int64_t>() == f.at(k + ".values").to_vector<int64_t>());
      CHECK(i.to_vector<int64_t>() == f.at(k + ".indices").to_vector<int64_t>());
    }
  // 0-d and empty tensors, as torch: 0-d gives (x, 0); an empty one gives empty results.
  auto [v0, i0] = cummax(full(Shape{}, 2.5, DType::f64), -1);
  CHECK(v0.shape() == Shape{});
  CHECK(v0.item<double>() == 2.5);
  CHECK(i0.item<int64_t>() == 0);
  auto [ve, ie] = cummin(zeros({0, 3}), 1);
  CHECK(ve.shape() == Shape({0, 3}));
  CHECK(ie.shape() == Shape({0, 3}));
  CHECK(ie.dtype() == DType::i64);
  CHECK_THROWS_AS(cummax(zeros({2, 3}), 2), IndexError);
}

TEST_CASE("fixture ops_scan_reduce: cumsum, cumprod with zeros, logcumsumexp with -inf") {
  const Fixture f = load_fixture("ops_scan_reduce");
  for (int64_t d : {0, 1}) {
    const std::string k = "cumsum.dim" + std::to_string(d);
    check(
        f, [d](const Tensor& x) { return cumsum(x, d); }, "scan.x", k + ".out", k + ".grad", k + ".upstream");
  }
  check(
      f, [](const Tensor& x) { return cumprod(x, 1); }, "cumprod.input", "cumprod.out", "cumprod.grad",
      "cumprod.upstream");
  check(
      f, [](const Tensor& x) { return logcumsumexp(x, 1); }, "logcumsumexp.input", "logcumsumexp.out",
      "logcumsumexp.grad", "logcumsumexp.upstream");
}

TEST_CASE("fixture ops_scan_reduce: prod with zeros, std/var with correction 0, 1, 2, any/all") {
  const Fixture f = load_fixture("ops_scan_reduce");
  for (const char* c : {"nozero", "one_zero", "two_zeros"}) {
    const std::string k = std::string("prod.") + c;
    check(
        f, [](const Tensor& x) { return prod(x); }, k + ".input", k + ".out", k + ".grad");
  }
  check(
      f, [](const Tensor& x) { return prod(x, 1); }, "prod.dim1.input", "prod.dim1.out", "prod.dim1.grad",
      "prod.dim1.upstream");
  for (int64_t c : {0, 1, 2}) {
    const std::string cs = ".c" + std::to_string(c);
    check(
        f, [c](const Tensor& x) { return ag::std(x, {}, c); }, "stdvar.input", "std" + cs + ".all.out",
        "std" + cs + ".all.grad");
    check(
        f, [c](const Tensor& x) { return ag::std(x, {1}, c); }, "stdvar.input", "std" + cs + ".dim1.out",
        "std" + cs + ".dim1.grad", "stdvar.dim1.upstream");
    check(
        f, [c](const Tensor& x) { return var(x, {}, c); }, "stdvar.input", "var" + cs + ".all.out",
        "var" + cs + ".all.grad");
    check(
        f, [c](const Tensor& x) { return var(x, {1}, c); }, "stdvar.input", "var" + cs + ".dim1.out",
        "var" + cs + ".dim1.grad", "stdvar.dim1.upstream");
  }
  const Tensor b = f.at("anyall.input");
  auto bits = [](const Tensor& t) { return t.to_vector<bool>(); };
  CHECK(bits(any(b)) == bits(f.at("any.all")));
  CHECK(bits(all(b)) == bits(f.at("all.all")));
  CHECK(bits(any(b, 0)) == bits(f.at("any.dim0")));
  CHECK(bits(all(b, 0)) == bits(f.at("all.dim0")));
  CHECK(bits(any(b, 1)) == bits(f.at("any.dim1")));
  CHECK(bits(all(b, 1)) == bits(f.at("all.dim1")));
}
