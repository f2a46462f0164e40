// Anomaly mode (ag::DetectAnomalyGuard, PyTorch's detect_anomaly): a backward closure
// that returns nan or inf throws AutogradError naming the op, its inputs' shapes and
// the forward call chain that created it; nothing changes while it is off.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "tensor_checks.h"
#include "test_util.h"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

using ag::Tensor;
using test_util::contains;
using test_util::error_of;

// The forward functions whose names the creation trace must show: external linkage,
// neither inlined nor cloned (GCC's noipa), and exported (test_anomaly links with
// ENABLE_EXPORTS).
#if defined(__clang__)
#define AG_KEEP_FRAME [[gnu::noinline]]
#else
#define AG_KEEP_FRAME [[gnu::noipa]]
#endif
namespace anomaly_fwd {
AG_KEEP_FRAME Tensor root_of(const Tensor& x) { return ag::sqrt(x); }
AG_KEEP_FRAME Tensor norm_of(const Tensor& x) { return ag::sqrt((x * x).sum()); }
AG_KEEP_FRAME Tensor power(const Tensor& x, double e) { return ag::pow(x, e); }
}  // namespace anomaly_fwd

namespace {

Tensor leaf(const std::vector<double>& v) { return Tensor::from_vector(v).requires_grad_(); }

// The AutogradError message of loss.backward(), or "<no error>".
std::string backward_error(const Tensor& loss) {
  return error_of<ag::AutogradError>([&] { loss.backward(); });
}

}  // namespace

TEST_CASE("anomaly: sqrt(0) names sqrt, its input shape and where it was created") {
  ag::DetectAnomalyGuard guard;
  Tensor x = leaf({0.0, 4.0});
  // d sqrt(x) / dx = 1 / (2 sqrt(x)): inf at 0, 0.25 at 4.
  std::string msg = backward_error(anomaly_fwd::root_of(x).sum());
  INFO(msg);
  CHECK(contains(msg,
                 "anomaly: the backward of 'sqrt' returned inf values in its gradient for input 0 "
                 "(0 nan and 1 inf of 2 elements, shape [2]); the op's inputs have shapes [2]"));
  CHECK(contains(msg, "'sqrt' was created at:\n  #0 ag::sqrt(ag::Tensor const&)"));
  CHECK(contains(msg, "anomaly_fwd::root_of(ag::Tensor const&) (test_anomaly)"));
  CHECK(contains(msg, "main (test_anomaly)"));
  CHECK_FALSE(contains(msg, "ag::record("));  // the trace starts at the op
  CHECK_THROWS_MSG(anomaly_fwd::root_of(x).sum().backward(), ag::AutogradError, "backward of 'sqrt'");
}

TEST_CASE("anomaly: log(0) and a division by zero, with every input's shape") {
  ag::DetectAnomalyGuard guard;
  Tensor x = leaf({1.0, 0.0, 2.0});
  // d log(x) / dx = 1 / x: inf at 0.
  std::string msg = backward_error(ag::log(x).sum());
  CHECK(contains(msg,
                 "the backward of 'log' returned inf values in its gradient for input 0 "
                 "(0 nan and 1 inf of 3 elements, shape [3]); the op's inputs have shapes [3]"));

  // a / b with a (3, 2) not requiring grad and b (2) broadcast over rows:
  // d/db = -sum_rows(a / b^2) = -(1/4 + 1/4 + 0/4, 1/0 + 1/0 + 0/0) = (-0.5, nan).
  Tensor a = Tensor::from_vector(std::vector<double>{1, 1, 1, 1, 0, 0}, ag::Shape{3, 2});
  Tensor b = leaf({2.0, 0.0});
  msg = backward_error((a / b).sum());
  INFO(msg);
  CHECK(contains(msg,
                 "the backward of 'div' returned nan values in its gradient for input 1 "
                 "(1 nan and 0 inf of 2 elements, shape [2]); the op's inputs have shapes [3, 2], [2]"));
  CHECK(contains(msg, "'div' was created at:"));
}

TEST_CASE("anomaly: a nan two ops from the loss is blamed on the op whose backward made it") {
  // ||x|| at x = 0 (PyTorch's classic): loss = 2 sqrt(sum(x * x)). sqrt's backward gives
  // inf; mul's backward then makes 2x * inf = 0 * inf = nan, which is what .grad gets
  // without anomaly mode.
  Tensor x = leaf({0.0, 0.0, 0.0});
  (anomaly_fwd::norm_of(x) * 2.0).backward();
  for (double g : x.grad().to_vector<double>()) CHECK(std::isnan(g));

  ag::DetectAnomalyGuard guard;
  x.zero_grad();
  std::string msg = backward_error((anomaly_fwd::norm_of(x) * 2.0));
  INFO(msg);
  CHECK(contains(msg,
                 "the backward of 'sqrt' returned inf values in its gradient for input 0 "
                 "(0 nan and 1 inf of 1 elements, shape []); the op's inputs have shapes []"));
  CHECK(contains(msg, "anomaly_fwd::norm_of(ag::Tensor const&) (test_anomaly)"));
  CHECK_FALSE(contains(msg, "'mul'"));
}

TEST_CASE("anomaly: off by default, nothing is thrown and nothing is recorded") {
  CHECK_FALSE(ag::is_anomaly_enabled());
  Tensor x = leaf({0.0, 4.0});
  Tensor y = anomaly_fwd::root_of(x);
  CHECK(y.grad_fn()->anomaly == nullptr);
  y.sum().backward();
  std::vector<double> g = x.grad().to_vector<double>();
  CHECK(std::isinf(g[0]));
  CHECK(g[1] == doctest::Approx(0.25));

  ag::DetectAnomalyGuard guard;
  CHECK(anomaly_fwd::root_of(x).grad_fn()->anomaly != nullptr);
}

TEST_CASE("anomaly: a node recorded before the mode was on still fails the check, without a trace") {
  Tensor x = leaf({0.0});
  Tensor loss = anomaly_fwd::root_of(x).sum();
  ag::DetectAnomalyGuard guard;
  std::string msg = backward_error(loss);
  CHECK(contains(msg, "the backward of 'sqrt' returned inf values"));
  CHECK_FALSE(contains(msg, "was created at"));
}

TEST_CASE("anomaly: guards nest and restore the previous setting") {
  CHECK_FALSE(ag::is_anomaly_enabled());
  {
    ag::DetectAnomalyGuard outer;
    CHECK(ag::is_anomaly_enabled());
    ag::set_detect_anomaly(false);
    CHECK_FALSE(ag::is_anomaly_enabled());
    {
      ag::DetectAnomalyGuard inner;
      CHECK(ag::is_anomaly_enabled());
    }
    CHECK_FALSE(ag::is_anomaly_enabled());  // inner restored the value it found
    ag::set_detect_anomaly(true);
    {
      ag::DetectAnomalyGuard inner;
      CHECK(ag::is_anomaly_enabled());
    }
    CHECK(ag::is_anomaly_enabled());
  }
  CHECK_FALSE(ag::is_anomaly_enabled());
}

TEST_CASE("anomaly: the flag is global, as PyTorch's: another thread sees it") {
  bool seen = false;
  {
    ag::DetectAnomalyGuard guard;
    std::thread([&] { seen = ag::is_anomaly_enabled(); }).join();
  }
  CHECK(seen);
  std::thread([&] { seen = ag::is_anomaly_enabled(); }).join();
  CHECK_FALSE(seen);
}

TEST_CASE("anomaly: double backward under the guard") {
  ag::DetectAnomalyGuard guard;
  SUBCASE("finite: d/dx sum(d/dx x^3) = 6x, nothing thrown") {
    Tensor x = leaf({0.0, 1.0, -2.0});
    Tensor g = ag::grad({anomaly_fwd::power(x, 3.0).sum()}, {x}, {}, {}, true)[0];  // 3 x^2
    CHECK(tc::diff(g, {0.0, 3.0, 12.0}) == "");
    g.sum().backward();
    CHECK(tc::diff(x.grad(), {0.0, 6.0, -12.0}) == "");
  }
  SUBCASE("inf in the second backward names the node the first backward recorded") {
    // y = x^1.5: dy/dx = 1.5 x^0.5 is finite at 0 (first backward records pow(x, 0.5));
    // its derivative 0.75 x^-0.5 is inf at 0, from the backward of that inner pow.
    Tensor x = leaf({0.0, 1.0});
    Tensor g = ag::grad({anomaly_fwd::power(x, 1.5).sum()}, {x}, {}, {}, true)[0];
    CHECK(tc::diff(g, {0.0, 1.5}) == "");
    std::string msg = backward_error(g.sum());
    INFO(msg);
    CHECK(contains(msg,
                   "the backward of 'pow' returned inf values in its gradient for input 0 "
                   "(0 nan and 1 inf of 2 elements, shape [2]); the op's inputs have shapes [2]"));
    // Its own creation (inside the closure, under ag::grad) and the forward pow's.
    CHECK(contains(msg, "'pow' was created at:\n  #0 ag::pow(ag::Tensor const&, ag::Scalar)"));
    CHECK(contains(msg, "\nwhile running the backward of 'pow', which was created at:"));
    CHECK(contains(msg, "ag::grad("));
    CHECK(contains(msg.substr(msg.find("while running")), "anomaly_fwd::power(ag::Tensor const&, double)"));
  }
}
