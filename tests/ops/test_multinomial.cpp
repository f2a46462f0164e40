// multinomial: draw frequencies converge to the normalized weights, classes of weight 0
// are never drawn, draws without replacement are distinct, a seeded generator repeats
// its draws, and bad arguments raise typed errors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

using namespace ag;

namespace {

std::vector<double> frequencies(const std::vector<int64_t>& draws, int64_t C) {
  std::vector<double> f(static_cast<std::size_t>(C), 0.0);
  for (int64_t d : draws) f[static_cast<std::size_t>(d)] += 1.0;
  for (double& v : f) v /= static_cast<double>(draws.size());
  return f;
}

}  // namespace

TEST_CASE("multinomial with replacement: frequencies converge to the weights") {
  Generator g(1);
  // Unnormalized weights (sum 2): 0.1, 0.2, 0.3, 0.4 after normalizing.
  Tensor w = Tensor::from_vector(std::vector<float>{0.2f, 0.4f, 0.6f, 0.8f});
  const int64_t n = 40000;
  Tensor s = multinomial(w, n, true, &g);
  CHECK(s.dtype() == DType::i64);
  CHECK(s.shape() == Shape{n});
  auto f = frequencies(s.to_vector<int64_t>(), 4);
  // Binomial standard error sqrt(p(1-p)/n) <= 0.0025: 4 sigma is 0.01.
  const double want[] = {0.1, 0.2, 0.3, 0.4};
  for (int c = 0; c < 4; ++c) CHECK(std::abs(f[static_cast<std::size_t>(c)] - want[c]) < 0.01);
}

TEST_CASE("multinomial on rows (N, C): each row follows its own weights") {
  Generator g(2);
  Tensor w = Tensor::from_vector(std::vector<double>{1, 0, 0, 0, 0, 1, 0.5, 0.5, 0}, {3, 3});
  Tensor s = multinomial(w, 20000, true, &g);
  REQUIRE(s.shape() == Shape{3, 20000});
  auto v = s.to_vector<int64_t>();
  std::vector<int64_t> r0(v.begin(), v.begin() + 20000), r1(v.begin() + 20000, v.begin() + 40000),
      r2(v.begin() + 40000, v.end());
  CHECK(std::all_of(r0.begin(), r0.end(), [](int64_t c) { return c == 0; }));
  CHECK(std::all_of(r1.begin(), r1.end(), [](int64_t c) { return c == 2; }));
  auto f2 = frequencies(r2, 3);
  CHECK(f2[2] == 0.0);
  CHECK(std::abs(f2[0] - 0.5) < 0.015);
}

TEST_CASE("multinomial never draws a class of weight 0") {
  Generator g(3);
  Tensor w = Tensor::from_vector(std::vector<double>{0, 0.5, 0, 1e-3, 0, 0.5, 0});
  auto draws = multinomial(w, 50000, true, &g).to_vector<int64_t>();
  CHECK(std::all_of(draws.begin(), draws.end(), [](int64_t c) { return c == 1 || c == 3 || c == 5; }));
  CHECK(std::count(draws.begin(), draws.end(), 3) > 0);  // weight 1e-3: ~50 draws
  // Without replacement, three draws from three non-zero classes: exactly those three.
  for (int rep = 0; rep < 200; ++rep) {
    auto v = multinomial(w, 3, false, &g).to_vector<int64_t>();
    CHECK(std::set<int64_t>(v.begin(), v.end()) == std::set<int64_t>{1, 3, 5});
  }
}

TEST_CASE("multinomial without replacement: distinct classes, first draw follows the weights") {
  Generator g(4);
  Tensor w = Tensor::from_vector(std::vector<double>{0.1, 0.2, 0.3, 0.4});
  std::vector<int64_t> first;
  for (int rep = 0; rep < 20000; ++rep) {
    auto v = multinomial(w, 4, false, &g).to_vector<int64_t>();
    REQUIRE(std::set<int64_t>(v.begin(), v.end()).size() == 4);  // a permutation
    first.push_back(v[0]);
  }
  auto f = frequencies(first, 4);
  const double want[] = {0.1, 0.2, 0.3, 0.4};
  for (int c = 0; c < 4; ++c) CHECK(std::abs(f[static_cast<std::size_t>(c)] - want[c]) < 0.015);
}

TEST_CASE("multinomial: a seeded generator repeats its draws") {
  Tensor w = softmax(randn({4, 10}, DType::f32), -1);
  Generator a(42), b(42), c(43);
  Tensor sa = multinomial(w, 6, false, &a), sb = multinomial(w, 6, false, &b), sc = multinomial(w, 6, false, &c);
  CHECK(sa.to_vector<int64_t>() == sb.to_vector<int64_t>());
  CHECK(sa.to_vector<int64_t>() != sc.to_vector<int64_t>());
  // The default generator, through manual_seed.
  manual_seed(7);
  auto d1 = multinomial(w, 30, true).to_vector<int64_t>();
  manual_seed(7);
  CHECK(multinomial(w, 30, true).to_vector<int64_t>() == d1);
}

TEST_CASE("multinomial: typed errors") {
  Tensor ok = Tensor::from_vector(std::vector<double>{0.5, 0.5});
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<double>{0.5, -0.1}), 1), ValueError);
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<double>{NAN, 1.0}), 1), ValueError);
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<double>{INFINITY, 1.0}), 1), ValueError);
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<double>{0, 0}), 1, true), ValueError);
  CHECK_THROWS_AS(multinomial(ok, 3, false), ValueError);  // 3 > 2 classes
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<double>{0, 1, 0}), 2, false), ValueError);
  CHECK_THROWS_AS(multinomial(ok, 0), ValueError);
  // N * num_samples sized a std::vector: overflow was undefined, then std::length_error.
  CHECK_THROWS_WITH_AS(multinomial(ag::ones({4, 2}, DType::f64), int64_t{1} << 62, true),
                       doctest::Contains("overflows int64"), ValueError);
  CHECK_THROWS_AS(multinomial(ok, int64_t{1} << 56, true), MemoryError);  // 512 PiB of samples
  CHECK_THROWS_AS(multinomial(zeros({2, 2, 2}), 1), ShapeError);
  CHECK_THROWS_AS(multinomial(Tensor::from_vector(std::vector<int64_t>{1, 2}), 1), DTypeError);
  CHECK(multinomial(ok, 3, true).shape() == Shape{3});  // with replacement, any count
  try {
    multinomial(ok, 3, false);
  } catch (const ValueError& e) { CHECK(std::string(e.what()).find("multinomial") != std::string::npos); }
}
