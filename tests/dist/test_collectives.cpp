// Collectives on tensors: every dtype, contiguous and strided, blocking and async,
// against values each rank computes for itself from the rank numbers.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "tensor_checks.h"

#include <cmath>

using namespace ag;

namespace {

int64_t W() { return dist::world_size(); }
int64_t R() { return dist::rank(); }

// Rank r's tensor: values r * 100 + i (i the flat index), in `dtype`, shape (rows, cols).
Tensor rank_tensor(int64_t r, int64_t rows, int64_t cols, DType dtype) {
  std::vector<double> v(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(r * 100 + static_cast<int64_t>(i));
  return Tensor::from_vector(v, Shape{rows, cols}).to(dtype);
}

std::vector<double> values(const Tensor& t) { return t.contiguous().to(DType::f64).to_vector<double>(); }

}  // namespace

TEST_CASE("all_reduce: SUM, AVG, MAX, MIN, PRODUCT for f32, f64 and i64") {
  for (DType dt : {DType::f32, DType::f64, DType::i64}) {
    CAPTURE(dt);
    Tensor mine = rank_tensor(R() + 1, 2, 3, dt);
    auto expect = [&](auto combine) {
      std::vector<double> e = values(rank_tensor(1, 2, 3, DType::f64));
      for (int64_t r = 1; r < W(); ++r) {
        auto o = values(rank_tensor(r + 1, 2, 3, DType::f64));
        for (std::size_t i = 0; i < e.size(); ++i) e[i] = combine(e[i], o[i]);
      }
      return e;
    };
    Tensor s = mine.clone();
    dist::all_reduce(s);
    CHECK(values(s) == expect([](double a, double b) { return a + b; }));
    Tensor mx = mine.clone();
    dist::all_reduce(mx, dist::ReduceOp::MAX);
    CHECK(values(mx) == expect([](double a, double b) { return std::max(a, b); }));
    Tensor mn = mine.clone();
    dist::all_reduce(mn, dist::ReduceOp::MIN);
    CHECK(values(mn) == expect([](double a, double b) { return std::min(a, b); }));
    Tensor pr = mine.clone();
    dist::all_reduce(pr, dist::ReduceOp::PRODUCT);
    CHECK(values(pr) == expect([](double a, double b) { return a * b; }));
    Tensor av = mine.clone();
    dist::all_reduce(av, dist::ReduceOp::AVG);
    auto sum = expect([](double a, double b) { return a + b; });
    auto got = values(av);
    for (std::size_t i = 0; i < sum.size(); ++i) {
      const double want =
          dt == DType::i64 ? std::trunc(sum[i] / static_cast<double>(W())) : sum[i] / static_cast<double>(W());
      CHECK(got[i] == doctest::Approx(want).epsilon(1e-7));
    }
  }
}

TEST_CASE("all_reduce writes through a strided view into its base and bumps the version") {
  Tensor base = rank_tensor(R(), 4, 6, DType::f64);
  Tensor view = base.slice(1, 1, 6, 2).transpose(0, 1);  // (3, 4), not contiguous
  REQUIRE_FALSE(view.is_contiguous());
  const auto before = base.storage()->version();
  dist::all_reduce(view);
  if (W() > 1) CHECK(base.storage()->version() > before);  // one process: nothing is written
  std::vector<double> b = values(base);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double want = 0;
      for (int64_t r = 0; r < W(); ++r) want += static_cast<double>(r * 100 + i * 6 + j);
      if (j % 2 == 0) want = static_cast<double>(R() * 100 + i * 6 + j);  // untouched columns
      CHECK(b[static_cast<std::size_t>(i * 6 + j)] == want);
    }
}

TEST_CASE("broadcast from every source rank") {
  for (int src = 0; src < W(); ++src) {
    Tensor t = rank_tensor(R(), 3, 2, DType::i64);
    dist::broadcast(t, src);
    CHECK(values(t) == values(rank_tensor(src, 3, 2, DType::i64)));
  }
  Tensor t = rank_tensor(R(), 1, 1, DType::f32);
  CHECK_THROWS_AS(dist::broadcast(t, static_cast<int>(W())), ValueError);
}

TEST_CASE("all_gather and all_gather_into_tensor") {
  Tensor mine = rank_tensor(R(), 2, 3, DType::f32);
  std::vector<Tensor> list;
  dist::all_gather(list, mine);
  REQUIRE(static_cast<int64_t>(list.size()) == W());
  for (int64_t r = 0; r < W(); ++r) CHECK(values(list[size_t(r)]) == values(rank_tensor(r, 2, 3, DType::f32)));

  Tensor out = zeros({2 * W(), 3}, DType::f32);
  dist::all_gather_into_tensor(out, mine);
  for (int64_t r = 0; r < W(); ++r) CHECK(values(out.narrow(0, 2 * r, 2)) == values(rank_tensor(r, 2, 3, DType::f32)));

  // A strided output (a transposed view) is filled through a contiguous copy.
  Tensor base = zeros({3, 2 * W()}, DType::f32);
  Tensor strided = base.transpose(0, 1);
  dist::all_gather_into_tensor(strided, mine);
  for (int64_t r = 0; r < W(); ++r)
    CHECK(values(base.t().narrow(0, 2 * r, 2)) == values(rank_tensor(r, 2, 3, DType::f32)));

  Tensor wrong = zeros({2 * W() + 1, 3}, DType::f32);
  CHECK_THROWS_AS(dist::all_gather_into_tensor(wrong, mine), ShapeError);
}

TEST_CASE("reduce_scatter and reduce_scatter_tensor") {
  // Rank r's input block b holds r * 100 + b * 10 + i.
  std::vector<Tensor> blocks;
  for (int64_t b = 0; b < W(); ++b) blocks.push_back(add(rank_tensor(R(), 1, 4, DType::f64), Scalar(double(b * 10))));
  Tensor out = zeros({1, 4}, DType::f64);
  dist::reduce_scatter(out, blocks);
  std::vector<double> want(4, 0.0);
  for (int64_t r = 0; r < W(); ++r)
    for (int64_t i = 0; i < 4; ++i) want[size_t(i)] += static_cast<double>(r * 100 + R() * 10 + i);
  CHECK(values(out) == want);

  Tensor flat = cat(blocks, 0);  // (W, 4)
  Tensor out2 = zeros({1, 4}, DType::f64);
  dist::reduce_scatter_tensor(out2, flat, dist::ReduceOp::AVG);
  for (auto& w : want) w /= static_cast<double>(W());
  auto got = values(out2);
  for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-15));
}

TEST_CASE("bf16 and f16: reductions in f32 rounded once, gathers and broadcasts bit for bit") {
  for (DType dt : {DType::bf16, DType::f16}) {
    CAPTURE(dt);
    // Rank r holds 1 + r / 3 + i / 7 (not exact in 8 or 11 bits: each rounds in `dt`).
    auto mine_of = [&](int64_t r) {
      return add(div(arange(0.0, 6.0, 1.0, DType::f64), Scalar(7.0)), Scalar(1.0 + double(r) / 3.0))
          .reshape({2, 3})
          .to(dt);
    };
    std::vector<double> sum(6, 0.0), mx(6, -1e9);
    for (int64_t r = 0; r < W(); ++r) {
      const std::vector<double> v = values(mine_of(r));
      for (std::size_t i = 0; i < 6; ++i) sum[i] += v[i], mx[i] = std::max(mx[i], v[i]);
    }
    // The exact sum of the 16-bit inputs, rounded once to the dtype.
    const std::vector<double> want_sum = values(Tensor::from_vector(sum, Shape{2, 3}).to(dt));
    Tensor s = mine_of(R());
    dist::all_reduce(s);
    CHECK(s.dtype() == dt);
    CHECK(values(s) == want_sum);
    Tensor m = mine_of(R());
    dist::all_reduce(m, dist::ReduceOp::MAX);
    CHECK(values(m) == mx);
    // AVG through a strided view: f32 sum / world, rounded once, written into the base.
    Tensor base = mine_of(R()).t().contiguous().t();  // (2, 3), column-major
    REQUIRE_FALSE(base.is_contiguous());
    dist::all_reduce(base, dist::ReduceOp::AVG);
    std::vector<double> avg = sum;
    for (double& a : avg) a = double(float(a) / float(W()));
    CHECK(values(base) == values(Tensor::from_vector(avg, Shape{2, 3}).to(dt)));

    Tensor b = mine_of(R());
    dist::broadcast(b, 0);
    CHECK(values(b) == values(mine_of(0)));
    std::vector<Tensor> list;
    dist::all_gather(list, mine_of(R()));
    for (int64_t r = 0; r < W(); ++r) CHECK(values(list[size_t(r)]) == values(mine_of(r)));
    Tensor out = zeros({2 * W(), 3}, dt);
    dist::all_gather_into_tensor(out, mine_of(R()));
    for (int64_t r = 0; r < W(); ++r) CHECK(values(out.narrow(0, 2 * r, 2)) == values(mine_of(r)));

    // reduce_scatter: block b of rank r is mine_of(r) row b % 2; this rank gets block R().
    std::vector<Tensor> blocks;
    for (int64_t blk = 0; blk < W(); ++blk) blocks.push_back(mine_of(R()).narrow(0, blk % 2, 1));
    Tensor rs = zeros({1, 3}, dt);
    dist::reduce_scatter(rs, blocks);
    CHECK(rs.dtype() == dt);
    CHECK(values(rs) == values(Tensor::from_vector(sum, Shape{2, 3}).to(dt).narrow(0, R() % 2, 1)));
  }
}

TEST_CASE("async collectives overlap the caller's work and complete on wait") {
  Tensor a = rank_tensor(R(), 64, 64, DType::f32);
  Tensor b = rank_tensor(R(), 8, 8, DType::i64);
  dist::Work wa = dist::all_reduce_async(a);
  dist::Work wb = dist::broadcast_async(b, 0);
  Tensor local = matmul(ones({32, 32}), ones({32, 32}));  // work while the collectives run
  wb.wait();
  wa.wait();
  CHECK(wa.is_completed());
  CHECK(local.sum().item<double>() == 32.0 * 32 * 32);
  std::vector<double> want = values(rank_tensor(0, 64, 64, DType::f64));
  for (int64_t r = 1; r < W(); ++r) {
    auto o = values(rank_tensor(r, 64, 64, DType::f64));
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += o[i];
  }
  CHECK(values(a) == want);
  CHECK(values(b) == values(rank_tensor(0, 8, 8, DType::i64)));
  dist::barrier();
}

TEST_CASE("collectives reject what MPI cannot carry safely") {
  Tensor b8 = zeros({3}, DType::b8);
  CHECK_THROWS_AS(dist::all_reduce(b8), DTypeError);
  Tensor undefined;
  CHECK_THROWS_AS(dist::all_reduce(undefined), ValueError);
  if (W() > 1) {
    // Ranks that disagree on the shape get a DistError on every rank, not a corrupt buffer.
    Tensor t = zeros({R() + 2}, DType::f32);
    try {
      dist::all_reduce(t);
      FAIL("expected DistError");
    } catch (const DistError& e) {
      CHECK(std::string(e.what()).find("disagree") != std::string::npos);
      CHECK(std::string(e.what()).find("rank " + std::to_string(R())) != std::string::npos);
    }
  }
}

TEST_CASE("differentiable collectives: values, and gradients under the two semantics") {
  Tensor x = rank_tensor(R(), 2, 3, DType::f64).requires_grad_();
  // f: identity forward, all-reduced gradient.
  Tensor y = dist::copy_to_parallel_region(x);
  CHECK(values(y) == values(x));
  y.backward(full({2, 3}, Scalar(double(R() + 1)), DType::f64));
  CHECK(values(x.grad()) == std::vector<double>(6, static_cast<double>(W() * (W() + 1) / 2)));
  x.zero_grad();
  // g: all-reduced forward, identity gradient.
  Tensor z = dist::reduce_from_parallel_region(x);
  z.backward(full({2, 3}, Scalar(2.0), DType::f64));
  CHECK(values(x.grad()) == std::vector<double>(6, 2.0));
  x.zero_grad();
  // all_gather along dim 1 with its reduce-scatter backward: rank r's gradient is the
  // sum over ranks of their upstream block r.
  Tensor gathered = dist::functional::all_gather(x, 1);
  CHECK(gathered.shape() == Shape{2, 3 * W()});
  Tensor up = full({2, 3 * W()}, Scalar(double(R() + 1)), DType::f64);
  gathered.backward(up);
  CHECK(values(x.grad()) == std::vector<double>(6, static_cast<double>(W() * (W() + 1) / 2)));
  x.zero_grad();
  // gather_from / scatter_to the last dim round-trip.
  Tensor back = dist::scatter_to_parallel_region(dist::gather_from_parallel_region(x));
  CHECK(values(back) == values(x));
}

TEST_CASE("collective errors name the collective, the shapes and the world") {
  const std::string w = std::to_string(W());
  Tensor b8 = zeros({3}, DType::b8);
  CHECK_THROWS_MSG(dist::all_reduce(b8), DTypeError, "dist::all_reduce: tensor of shape [3]");
  CHECK_THROWS_MSG(dist::all_reduce(b8), DTypeError, "collectives take f32, f64, bf16, f16 or i64");
  Tensor undefined;
  CHECK_THROWS_MSG(dist::broadcast(undefined), ValueError, "dist::broadcast: the tensor is undefined");
  Tensor t = zeros({2}, DType::f32);
  CHECK_THROWS_MSG(dist::broadcast(t, static_cast<int>(W())), ValueError,
                   ("dist::broadcast: src " + w + " is not a rank of a world of " + w).c_str());
  Tensor big = zeros({2 * W() + 1, 3}, DType::f32), small = zeros({2, 3}, DType::f32);
  CHECK_THROWS_MSG(
      dist::all_gather_into_tensor(big, small), ShapeError,
      ("dist::all_gather_into_tensor: the larger tensor f32 [" + std::to_string(2 * W() + 1) + ", 3]").c_str());
  CHECK_THROWS_MSG(dist::reduce_scatter_tensor(small, big), ShapeError, ("dim 0 times the world size " + w).c_str());
  std::vector<Tensor> too_many(static_cast<std::size_t>(W() + 1), small);
  CHECK_THROWS_MSG(dist::reduce_scatter(small, too_many), ValueError,
                   ("dist::reduce_scatter: " + std::to_string(W() + 1) + " input tensors for a world of " + w).c_str());
  std::vector<Tensor> wrong(static_cast<std::size_t>(W()), zeros({3, 2}, DType::f32));
  CHECK_THROWS_MSG(dist::reduce_scatter(small, wrong), ShapeError,
                   "dist::reduce_scatter: input 0 is f32 [3, 2], output is f32 [2, 3]");
}

TEST_CASE("differentiable collective errors") {
  Tensor x = rank_tensor(R(), 2, 3, DType::f64).requires_grad_();
  CHECK_THROWS_MSG(dist::functional::all_reduce(x, dist::ReduceOp::MAX), ValueError,
                   "only SUM and AVG are differentiable (tensor of shape [2, 3])");
  Tensor scalar = Tensor::from_vector(std::vector<double>{1.0}).reshape({});
  CHECK_THROWS_MSG(dist::scatter_to_parallel_region(scalar), ShapeError,
                   "scatter_to_parallel_region: needs at least one dim, got []");
  CHECK_THROWS_MSG(dist::gather_from_parallel_region(scalar), ShapeError,
                   "gather_from_parallel_region: needs at least one dim, got []");
  CHECK_THROWS_MSG(dist::copy_to_parallel_region(zeros({2}, DType::b8)), DTypeError,
                   "copy_to_parallel_region: tensor of shape [2] has dtype");
  CHECK_THROWS_MSG(dist::functional::all_gather(x, 2), IndexError,
                   "dist::functional::all_gather: dim 2 is out of range");
  if (W() > 1) {
    Tensor odd = zeros({2 * W() + 1, 2}, DType::f64);
    CHECK_THROWS_MSG(dist::functional::reduce_scatter(odd, 0), ShapeError,
                     ("must divide by the world size " + std::to_string(W())).c_str());
    CHECK_THROWS_MSG(dist::scatter_to_parallel_region(odd.t()), ShapeError,
                     ("scatter_to_parallel_region: the last dim of [2, " + std::to_string(2 * W() + 1) + "]").c_str());
  }
}
