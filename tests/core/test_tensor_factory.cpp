// dtypes and conversions, factories, random factories and the Generator.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <set>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double std_of(const std::vector<double>& v) {  // unbiased
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

// ---- dtypes -------------------------------------------------------------------------

TEST_CASE("dtype: from_vector takes the element type's dtype; names and item sizes") {
  CHECK(Tensor::from_vector(std::vector<float>{1}).dtype() == DType::f32);
  CHECK(Tensor::from_vector(std::vector<double>{1}).dtype() == DType::f64);
  CHECK(Tensor::from_vector(std::vector<int32_t>{1}).dtype() == DType::i32);
  CHECK(Tensor::from_vector(std::vector<int64_t>{1}).dtype() == DType::i64);
  CHECK(Tensor::from_vector(std::vector<bool>{true}).dtype() == DType::b8);
  CHECK(ag::name(DType::f32) == "f32");
  CHECK(ag::name(DType::b8) == "bool");
  CHECK(ag::itemsize(DType::f64) == 8);
  CHECK(ag::itemsize(DType::i32) == 4);
  CHECK(ag::itemsize(DType::b8) == 1);
  CHECK(ag::is_floating(DType::f64));
  CHECK_FALSE(ag::is_floating(DType::i64));
}

TEST_CASE("dtype: floating factories default to f32, integer ones to i64") {
  CHECK(ag::zeros({2}).dtype() == DType::f32);
  CHECK(ag::ones({2}).dtype() == DType::f32);
  CHECK(ag::full({2}, 1.5).dtype() == DType::f32);
  CHECK(ag::empty({2}).dtype() == DType::f32);
  CHECK(ag::eye(2).dtype() == DType::f32);
  CHECK(ag::rand({2}).dtype() == DType::f32);
  CHECK(ag::randn({2}).dtype() == DType::f32);
  CHECK(ag::arange(3).dtype() == DType::i64);
  CHECK(ag::randint(0, 3, {2}).dtype() == DType::i64);
  CHECK(ag::randint(0, 3, {2}, nullptr, DType::i32).dtype() == DType::i32);
}

TEST_CASE("to: float to int truncates toward zero") {
  Tensor x = Tensor::from_vector(std::vector<float>{1.7f, -1.7f, 2.5f, -0.5f, 100.99f});
  Tensor i = x.to(DType::i32);
  CHECK(i.dtype() == DType::i32);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{1, -1, 2, 0, 100});
  CHECK(x.to(DType::i64).to_vector<int64_t>() == std::vector<int64_t>{1, -1, 2, 0, 100});
}

TEST_CASE("to: bool is nonzero, and converts back as 0 / 1") {
  Tensor x = Tensor::from_vector(std::vector<double>{0.0, 0.5, -2.0, 0.0});
  Tensor b = x.to(DType::b8);
  CHECK(b.dtype() == DType::b8);
  CHECK(b.to_vector<bool>() == std::vector<bool>{false, true, true, false});
  CHECK(diff(b.to(DType::f32), {0, 1, 1, 0}) == "");
  CHECK(b.to(DType::i64).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, 0});
  Tensor ib = Tensor::from_vector(std::vector<int64_t>{0, 3, -1}).to(DType::b8);
  CHECK(ib.to_vector<bool>() == std::vector<bool>{false, true, true});
}

TEST_CASE("to: between floating widths and from integers") {
  Tensor f = Tensor::from_vector(std::vector<float>{0.1f, -3.25f});
  Tensor d = f.to(DType::f64);
  CHECK(d.dtype() == DType::f64);
  CHECK(d.to_vector<double>() == std::vector<double>{double(0.1f), -3.25});
  Tensor third = Tensor::from_vector(std::vector<double>{1.0 / 3.0}).to(DType::f32);
  CHECK(third.to_vector<float>()[0] == static_cast<float>(1.0 / 3.0));
  int64_t big = int64_t{1} << 40;
  Tensor i = Tensor::from_vector(std::vector<int64_t>{big, -7});
  CHECK(i.to(DType::f64).to_vector<double>() == std::vector<double>{double(big), -7.0});
  CHECK(i.to(DType::i32).to_vector<int32_t>()[1] == -7);
}

TEST_CASE("to: the same dtype returns the tensor itself; a view converts in logical order") {
  Tensor x = tc::iota(6).view({2, 3});
  CHECK(x.to(DType::f32).impl() == x.impl());
  Tensor it = x.t().to(DType::i32);  // [3, 2]
  CHECK(str(it.shape()) == "[3, 2]");
  CHECK(it.is_contiguous());
  CHECK(it.to_vector<int32_t>() == std::vector<int32_t>{0, 3, 1, 4, 2, 5});
}

// ---- deterministic factories ----------------------------------------------------------

TEST_CASE("factory: zeros, ones, full, empty, scalar_tensor") {
  Tensor z = ag::zeros({2, 3}, DType::f64);
  CHECK(str(z.shape()) == "[2, 3]");
  CHECK(z.dtype() == DType::f64);
  CHECK(diff(z, std::vector<double>(6, 0.0)) == "");
  CHECK(diff(ag::ones({4}, DType::i32), {1, 1, 1, 1}) == "");
  CHECK(diff(ag::full({2, 2}, 3.5), {3.5, 3.5, 3.5, 3.5}) == "");
  CHECK(diff(ag::full({2}, 3.9, DType::i64), {3, 3}) == "");  // converted like a cast
  CHECK(ag::full({3}, 2.0, DType::b8).to_vector<bool>() == std::vector<bool>{true, true, true});
  Tensor e = ag::empty({3, 0, 2}, DType::i64);
  CHECK(str(e.shape()) == "[3, 0, 2]");
  CHECK(e.numel() == 0);
  Tensor s = ag::scalar_tensor(2.5, DType::f64);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item<double>() == 2.5);
  CHECK_THROWS_MSG(ag::zeros({2, -1}), ag::ShapeError, "negative dimension in shape [2, -1]");
  CHECK_THROWS_MSG(ag::empty({-3}), ag::ShapeError, "empty: negative dimension in shape [-3]");
}

TEST_CASE("factory: arange, integer and floating forms") {
  CHECK(ag::arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(ag::arange(2, 11, 3).to_vector<int64_t>() == std::vector<int64_t>{2, 5, 8});
  CHECK(ag::arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
  CHECK(ag::arange(3, 3).numel() == 0);
  Tensor f = ag::arange(0, 1, 0.25, DType::f32);
  CHECK(f.dtype() == DType::f32);
  CHECK(diff(f, {0, 0.25, 0.5, 0.75}) == "");
  Tensor d = ag::arange(0, 1, 0.3, DType::f64);  // ceil(1 / 0.3) = 4 values, 0.9 < 1
  CHECK(diff(d, {0, 0.3, 0.6, 0.9}, 1e-15) == "");
  CHECK(diff(ag::arange(-1.5, 1.0, 1.0, DType::f64), {-1.5, -0.5, 0.5}) == "");
  CHECK_THROWS_MSG(ag::arange(0, 3, 0), ag::ValueError, "arange: step must be non-zero (start 0, end 3, step 0");
  CHECK_THROWS_MSG(ag::arange(0, INFINITY), ag::ValueError, "arange: start and end must be finite");
  // PyTorch refuses a step that leads away from end (torch.arange(3, 1) raises)
  CHECK_THROWS_MSG(ag::arange(3, 1), ag::ValueError,
                   "arange: upper bound and lower bound inconsistent with step sign (start 3, end 1, step 1)");
  CHECK_THROWS_MSG(ag::arange(0, 2, -0.5), ag::ValueError, "inconsistent with step sign (start 0, end 2, step -0.5)");
}

// torch.arange / torch.full infer the dtype from their arguments' kinds (PyTorch 1.13):
//   arange(5) i64, arange(0., 1., 0.25) f32 [0, .25, .5, .75], arange(0, 10, 3.5) f32
//   [0, 3.5, 7], arange(0, 2.5, 1, dtype=i64) [0, 1] (i64 counts in int64),
//   arange(0.5, 3, 1, dtype=i32) [0, 1, 2], arange(0, 1, 0.25, dtype=i64) raises (step 0);
//   full((2,), True) bool, full((2,), 3) i64, full((2,), 3.) f32.
TEST_CASE("factory: arange and full infer the dtype from the scalar kinds") {
  CHECK(ag::arange(5).dtype() == DType::i64);
  CHECK(ag::arange(2, 11, 3).dtype() == DType::i64);
  Tensor q = ag::arange(0., 1., 0.25);
  CHECK(q.dtype() == DType::f32);
  CHECK(diff(q, {0, 0.25, 0.5, 0.75}) == "");
  CHECK(ag::arange(4.0).dtype() == DType::f32);
  CHECK(diff(ag::arange(0, 10, 3.5), {0, 3.5, 7}) == "");
  CHECK(ag::arange(0, 10, 3.5).dtype() == DType::f32);
  CHECK(ag::arange(0, 2.5, 1, DType::i64).to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  CHECK(ag::arange(0.5, 3, 1, DType::i32).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2});
  CHECK_THROWS_MSG(ag::arange(0, 1, 0.25, DType::i64), ag::ValueError, "arange: step must be non-zero");
  CHECK(ag::arange(5, DType::f64).dtype() == DType::f64);
  CHECK(ag::full({2}, true).dtype() == DType::b8);
  CHECK(ag::full({2}, 3).dtype() == DType::i64);
  CHECK(ag::full({1}, (int64_t{1} << 60) + 1).item<int64_t>() == (int64_t{1} << 60) + 1);  // not via double
  CHECK(ag::full({2}, 3.0).dtype() == DType::f32);
  CHECK(ag::full({2}, 3, DType::f64).dtype() == DType::f64);
  CHECK(ag::scalar_tensor(2).dtype() == DType::i64);
}

TEST_CASE("factory: set_default_dtype changes float factories, inference and promotion") {
  CHECK(ag::get_default_dtype() == DType::f32);
  ag::set_default_dtype(DType::f64);
  CHECK(ag::zeros({2}).dtype() == DType::f64);
  CHECK(ag::randn({2}).dtype() == DType::f64);
  CHECK(ag::eye(2).dtype() == DType::f64);
  CHECK(ag::full({2}, 0.5).dtype() == DType::f64);
  CHECK(ag::arange(0., 1., 0.5).dtype() == DType::f64);
  CHECK((ag::arange(3) * 0.5).dtype() == DType::f64);
  CHECK((ag::arange(3) / 2).dtype() == DType::f64);
  CHECK(ag::full({2}, 3).dtype() == DType::i64);
  CHECK((ag::ones({2}, DType::f32) * 0.5).dtype() == DType::f32);  // the tensor's dtype wins
  ag::set_default_dtype(DType::f32);
  CHECK(ag::zeros({2}).dtype() == DType::f32);
  CHECK_THROWS_MSG(ag::set_default_dtype(DType::i64), ag::DTypeError,
                   "set_default_dtype: only f32 or f64 can be the default, got i64");
}

TEST_CASE("factory: eye, square and rectangular") {
  CHECK(diff(ag::eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1}) == "");
  Tensor r = ag::eye(2, 3, DType::f64);
  CHECK(str(r.shape()) == "[2, 3]");
  CHECK(r.dtype() == DType::f64);
  CHECK(diff(r, {1, 0, 0, 0, 1, 0}) == "");
  CHECK(diff(ag::eye(3, 2), {1, 0, 0, 1, 0, 0}) == "");
  CHECK(ag::eye(0).numel() == 0);
  CHECK_THROWS_MSG(ag::eye(-1), ag::ShapeError, "eye: negative size -1");
}

TEST_CASE("an empty tensor is contiguous whatever its strides, as PyTorch's") {
  // The safetensors fuzzer's find: a [0, 0] tensor read from a file was "non-contiguous".
  CHECK(ag::zeros({0, 0}).is_contiguous());
  CHECK(ag::zeros({0, 3}).t().is_contiguous());  // torch.zeros(0, 3).t().is_contiguous() is True
  CHECK(Tensor(ag::zeros({1}).storage(), {0, 2}, {5, 7}, 0, DType::f32).is_contiguous());
  CHECK_FALSE(ag::zeros({2, 3}).t().is_contiguous());
}

TEST_CASE("factory: *_like copy shape and dtype") {
  Tensor x = ag::zeros({2, 3}, DType::i32).t();  // a view: the result is fresh and contiguous
  Tensor z = ag::zeros_like(x), o = ag::ones_like(x), f = ag::full_like(x, 7), e = ag::empty_like(x);
  for (const Tensor& t : {z, o, f, e}) {
    CHECK(str(t.shape()) == "[3, 2]");
    CHECK(t.dtype() == DType::i32);
    CHECK(t.is_contiguous());
    CHECK_FALSE(t.shares_storage(x));
  }
  CHECK(diff(z, std::vector<double>(6, 0)) == "");
  CHECK(diff(o, std::vector<double>(6, 1)) == "");
  CHECK(diff(f, std::vector<double>(6, 7)) == "");
  Tensor d = ag::zeros({4, 5}, DType::f64);
  Tensor r = ag::rand_like(d), n = ag::randn_like(d);
  CHECK(r.dtype() == DType::f64);
  CHECK(str(n.shape()) == "[4, 5]");
  CHECK(n.dtype() == DType::f64);
}

TEST_CASE("from_vector checks the element count") {
  CHECK_THROWS_MSG(Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}), ag::ShapeError,
                   "from_vector: 3 values cannot fill shape [2, 2] (4 elements)");
  Tensor x = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(str(x.shape()) == "[3, 2]");
  CHECK(str(x.strides()) == "[2, 1]");
  CHECK(x.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  Tensor s = Tensor::from_vector(std::vector<double>{4.5}, Shape{});
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 4.5);
}

// ---- random factories -----------------------------------------------------------------

TEST_CASE("random: rand and uniform stay in range with the right mean") {
  ag::Generator g(11);
  std::vector<double> r = ag::rand({10000}, DType::f64, &g).to_vector<double>();
  CHECK(*std::min_element(r.begin(), r.end()) >= 0.0);
  CHECK(*std::max_element(r.begin(), r.end()) < 1.0);
  CHECK(std::abs(mean_of(r) - 0.5) < 0.015);  // std error 0.003
  std::vector<double> u = ag::uniform({10000}, -2.0, 3.0, DType::f32, &g).to_vector<double>();
  CHECK(*std::min_element(u.begin(), u.end()) >= -2.0);
  CHECK(*std::max_element(u.begin(), u.end()) <= 3.0);
  CHECK(std::abs(mean_of(u) - 0.5) < 0.08);  // std error 0.014
  CHECK_THROWS_MSG(ag::uniform({2}, 0, 1, DType::i64), ag::DTypeError, "uniform: needs a floating dtype, got i64");
}

TEST_CASE("random: randn over 10000 samples has mean ~0 and std ~1") {
  ag::Generator g(2024);
  std::vector<double> v = ag::randn({10000}, DType::f64, &g).to_vector<double>();
  CHECK(std::abs(mean_of(v)) < 0.04);  // std error 0.01
  CHECK(std::abs(std_of(v) - 1.0) < 0.04);
  int beyond3 = 0;
  for (double x : v) beyond3 += std::abs(x) > 3.0;
  CHECK(beyond3 < 60);  // expected 27
  CHECK_THROWS_MSG(ag::randn({2}, DType::i32), ag::DTypeError, "randn: needs a floating dtype, got i32");
}

TEST_CASE("random: randint covers [low, high) and nothing else") {
  ag::Generator g(3);
  std::vector<int64_t> v = ag::randint(-3, 4, {7000}, &g).to_vector<int64_t>();
  std::vector<int> count(7, 0);
  REQUIRE(*std::min_element(v.begin(), v.end()) == -3);
  REQUIRE(*std::max_element(v.begin(), v.end()) == 3);
  for (int64_t x : v) ++count[static_cast<std::size_t>(x + 3)];
  for (int c : count) CHECK((c > 850 && c < 1150));  // expected 1000, std 31
  std::vector<int32_t> one = ag::randint(5, 6, {10}, &g, DType::i32).to_vector<int32_t>();
  CHECK(one == std::vector<int32_t>(10, 5));
  CHECK_THROWS_MSG(ag::randint(5, 5, {2}), ag::ValueError, "randint: empty range [5, 5)");
}

TEST_CASE("random: bernoulli draws 0/1 with probability p") {
  ag::Generator g(8);
  std::vector<double> v = ag::bernoulli({10000}, 0.3, DType::f64, &g).to_vector<double>();
  CHECK(std::count(v.begin(), v.end(), 0.0) + std::count(v.begin(), v.end(), 1.0) == 10000);
  CHECK(std::abs(mean_of(v) - 0.3) < 0.02);  // std error 0.0046
  CHECK(ag::bernoulli({50}, 0.0, DType::f32, &g).sum().item<float>() == 0.0f);
  CHECK(ag::bernoulli({50}, 1.0, DType::f32, &g).sum().item<float>() == 50.0f);
  CHECK(ag::bernoulli({4}, 0.5, DType::b8, &g).dtype() == DType::b8);
  CHECK_THROWS_MSG(ag::bernoulli({2}, 1.5), ag::ValueError, "bernoulli: p must be in [0, 1], got 1.5");
}

TEST_CASE("random: manual_seed makes the default generator repeat exactly") {
  ag::manual_seed(123);
  std::vector<float> a = ag::randn({100}).to_vector<float>();
  std::vector<float> b = ag::rand({10}).to_vector<float>();
  std::vector<int64_t> c = ag::randint(0, 1000, {10}).to_vector<int64_t>();
  ag::manual_seed(123);
  CHECK(ag::randn({100}).to_vector<float>() == a);
  CHECK(ag::rand({10}).to_vector<float>() == b);
  CHECK(ag::randint(0, 1000, {10}).to_vector<int64_t>() == c);
  ag::manual_seed(124);
  CHECK(ag::randn({100}).to_vector<float>() != a);
  CHECK(ag::default_generator().initial_seed() == 124);
}

TEST_CASE("random: a seed gives the same values in f32 and f64") {
  ag::manual_seed(5);
  std::vector<double> d = ag::randn({50}, DType::f64).to_vector<double>();
  ag::manual_seed(5);
  std::vector<float> f = ag::randn({50}, DType::f32).to_vector<float>();
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(f[i] == static_cast<float>(d[i]));
}

TEST_CASE("random: an explicit Generator is independent of the default one") {
  ag::Generator g1(77), g2(77);
  Tensor a = ag::randn({20}, DType::f32, &g1);
  ag::manual_seed(1);
  (void)ag::randn({33});  // draws from the default generator do not touch g2
  Tensor b = ag::randn({20}, DType::f32, &g2);
  CHECK(diff(a, b) == "");
  // the default generator seeded alike gives the same stream
  ag::manual_seed(77);
  CHECK(diff(ag::randn({20}), a) == "");
}

TEST_CASE("random: uniform, normal and integer are the documented transforms of next_u64") {
  // Engine-agnostic: a twin generator with the same seed supplies the raw 64-bit draws.
  ag::Generator g(42), raw(42);
  for (int i = 0; i < 5; ++i)  // the top 53 bits, scaled to [0, 1)
    CHECK(g.uniform() == static_cast<double>(raw.next_u64() >> 11) * 0x1.0p-53);
  // Box-Muller: two uniforms give a cosine draw, then the sine draw kept as the spare
  auto u = [&raw] { return static_cast<double>(raw.next_u64() >> 11) * 0x1.0p-53; };
  double u1 = 1.0 - u(), u2 = u();
  double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * std::numbers::pi * u2;
  CHECK(g.normal() == doctest::Approx(r * std::cos(th)).epsilon(1e-15));
  CHECK(g.normal() == doctest::Approx(r * std::sin(th)).epsilon(1e-15));
  // integer: low + draw mod range (the rejection of the top sliver almost never fires)
  CHECK(g.integer(10, 17) == 10 + static_cast<int64_t>(raw.next_u64() % 7));
  ag::Generator a(1), b(1), c(2);
  CHECK(a.next_u64() == b.next_u64());
  CHECK(a.next_u64() != c.next_u64());
}

TEST_CASE("random: Generator state()/set_state() continues the same stream") {
  ag::Generator g(99);
  (void)g.normal();  // Box-Muller leaves a spare value pending: the state must keep it
  (void)g.uniform();
  (void)g.normal();
  std::string s = g.state();
  std::vector<double> first;
  for (int i = 0; i < 5; ++i) first.push_back(g.normal());
  first.push_back(g.uniform());
  first.push_back(static_cast<double>(g.integer(0, 1000)));
  std::vector<float> first_t = ag::randn({7}, DType::f32, &g).to_vector<float>();

  ag::Generator other(1);  // a different generator takes over the stream
  other.set_state(s);
  CHECK(other.initial_seed() == 99);
  std::vector<double> second;
  for (int i = 0; i < 5; ++i) second.push_back(other.normal());
  second.push_back(other.uniform());
  second.push_back(static_cast<double>(other.integer(0, 1000)));
  CHECK(second == first);
  CHECK(ag::randn({7}, DType::f32, &other).to_vector<float>() == first_t);

  g.set_state(s);  // and the same generator rewinds
  CHECK(g.normal() == first[0]);
  CHECK_THROWS_MSG(g.set_state("not a state"), ag::ValueError, "Generator::set_state: malformed state text");
  CHECK_THROWS_MSG(g.integer(3, 3), ag::ValueError, "randint: empty range [3, 3)");
}

TEST_CASE("fill writes exactly the view's elements, in every dtype, keeping -0.0's sign") {
  // zeros/full/fill_ take a memset or fill_n on contiguous rows, a strided loop otherwise.
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64, DType::b8}) {
    CAPTURE(dt);
    Tensor z = ag::full({3, 5}, 1, dt);
    z.zero_();
    CHECK(diff(z, std::vector<double>(15, 0.0)) == "");
    Tensor o = ag::zeros({4, 3}, dt);
    o.fill_(1);
    CHECK(diff(o, std::vector<double>(12, 1.0)) == "");
  }
  // Rows 1..2 of a (4, 3) tensor (contiguous rows inside a bigger buffer): rows 0 and 3 stay 5.
  Tensor m = ag::full({4, 3}, 5.0);
  m.slice(0, 1, 3).zero_();
  CHECK(diff(m, {5, 5, 5, 0, 0, 0, 0, 0, 0, 5, 5, 5}) == "");
  m.slice(0, 1, 3).fill_(2.5);
  CHECK(diff(m, {5, 5, 5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 5, 5, 5}) == "");
  // Column 1 (stride 3) zeroed: the strided loop, neighbours untouched.
  m.select(1, 1).zero_();
  CHECK(diff(m, {5, 0, 5, 2.5, 0, 2.5, 2.5, 0, 2.5, 5, 0, 5}) == "");
  // -0.0 is not all-zero bits: the sign must survive (1 / -0.0 = -inf).
  Tensor n = ag::full({70}, -0.0);
  for (float v : n.to_vector<float>()) CHECK(std::signbit(v));
}
