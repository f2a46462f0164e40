// matmul against a naive triple loop over the operands' base data: 2-D, transposed,
// sliced and expanded operands, batched with broadcasting, 1-D cases; f32 and f64.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

namespace {

using Elem = std::function<double(int64_t batch, int64_t row, int64_t col)>;

// out[b][i][j] = sum_k a(b, i, k) b(b, k, j) for nb batches, row-major.
std::vector<double> naive_bmm(int64_t nb, int64_t M, int64_t N, int64_t K, const Elem& a, const Elem& b) {
  std::vector<double> out;
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a(n, i, k) * b(n, k, j);
        out.push_back(s);
      }
  return out;
}

// Random base data: a contiguous tensor and its values, row-major.
struct Base {
  Tensor t;
  std::vector<double> v;
  double at(int64_t i) const { return v[static_cast<std::size_t>(i)]; }
};

Base base(const Shape& s, DType dt, uint64_t seed) {
  ag::Generator g(seed);
  Tensor t = ag::randn(s, dt, &g);
  return {t, t.to_vector<double>()};
}

double tol_for(DType dt) { return dt == DType::f32 ? 1e-4 : 1e-12; }

}  // namespace

TEST_CASE("matmul: 2-D against a triple loop, f32 and f64") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t M = 5, K = 7, N = 3;
    Base a = base({M, K}, dt, 1), b = base({K, N}, dt, 2);
    Tensor c = ag::matmul(a.t, b.t);
    CHECK(c.dtype() == dt);
    CHECK(str(c.shape()) == "[5, 3]");
    auto want = naive_bmm(
        1, M, N, K, [&](int64_t, int64_t i, int64_t k) { return a.at(i * K + k); },
        [&](int64_t, int64_t k, int64_t j) { return b.at(k * N + j); });
    CHECK(diff(c, want, tol_for(dt)) == "");
    // the identity leaves a matrix unchanged
    CHECK(diff(ag::matmul(a.t, ag::eye(K, K, dt)), a.t, tol_for(dt)) == "");
  }
}

TEST_CASE("matmul: transposed operands are views and give the right product") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t M = 4, K = 6, N = 5;
    Base at = base({K, M}, dt, 3), bt = base({N, K}, dt, 4);  // stored transposed
    Base a = base({M, K}, dt, 5), b = base({K, N}, dt, 6);
    Tensor a_t = at.t.t(), b_t = bt.t.t();  // [M, K], [K, N]
    CHECK(a_t.shares_storage(at.t));
    CHECK(b_t.shares_storage(bt.t));
    CHECK_FALSE(a_t.is_contiguous());
    Elem fa = [&](int64_t, int64_t i, int64_t k) { return a.at(i * K + k); };
    Elem fb = [&](int64_t, int64_t k, int64_t j) { return b.at(k * N + j); };
    Elem fat = [&](int64_t, int64_t i, int64_t k) { return at.at(k * M + i); };
    Elem fbt = [&](int64_t, int64_t k, int64_t j) { return bt.at(j * K + k); };
    CHECK(diff(ag::matmul(a_t, b.t), naive_bmm(1, M, N, K, fat, fb), tol_for(dt)) == "");
    CHECK(diff(ag::matmul(a.t, b_t), naive_bmm(1, M, N, K, fa, fbt), tol_for(dt)) == "");
    CHECK(diff(ag::matmul(a_t, b_t), naive_bmm(1, M, N, K, fat, fbt), tol_for(dt)) == "");
    // (B^T A^T) = (A B)^T
    Tensor ab = ag::matmul(a.t, b.t);
    CHECK(diff(ag::matmul(b.t.t(), a.t.t()), ab.t().contiguous(), tol_for(dt)) == "");
  }
}

TEST_CASE("matmul: sliced operands (steps and narrows along rows and columns)") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t M = 3, K = 4, N = 5;
    Base abig = base({2 * M, K + 3}, dt, 7), bbig = base({K + 1, 2 * N}, dt, 8);
    const int64_t ac = K + 3, bc = 2 * N;
    // a(i, k) = abig(2 i, 1 + k): rows with step 2, a column window
    Tensor a = abig.t.slice(0, 0, 2 * M, 2).narrow(1, 1, K);
    // b(k, j) = bbig(1 + k, 2 j): a row window, columns with step 2
    Tensor b = bbig.t.narrow(0, 1, K).slice(1, 0, 2 * N, 2);
    CHECK(a.shares_storage(abig.t));
    CHECK(b.shares_storage(bbig.t));
    Elem fa = [&](int64_t, int64_t i, int64_t k) { return abig.at(2 * i * ac + 1 + k); };
    Elem fb = [&](int64_t, int64_t k, int64_t j) { return bbig.at((1 + k) * bc + 2 * j); };
    CHECK(diff(ag::matmul(a, b), naive_bmm(1, M, N, K, fa, fb), tol_for(dt)) == "");
    // a window of a transposed matrix: b2(k, j) = bb(j + 1, k + 1)
    Base bb = base({N + 1, K + 3}, dt, 28);
    Tensor b2 = bb.t.t().narrow(0, 1, K).narrow(1, 1, N);  // [K, N], strides [1, K + 3]
    Elem fb2 = [&](int64_t, int64_t k, int64_t j) { return bb.at((j + 1) * (K + 3) + k + 1); };
    CHECK(diff(ag::matmul(a, b2), naive_bmm(1, M, N, K, fa, fb2), tol_for(dt)) == "");
    CHECK_FALSE(ag::matmul(a, b).shares_storage(abig.t));
  }
}

TEST_CASE("matmul: expanded operands (stride 0 batch dims)") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t B = 3, M = 2, K = 4, N = 5;
    Base a = base({B, M, K}, dt, 9), b1 = base({1, K, N}, dt, 10);
    Tensor be = b1.t.expand({B, K, N});
    CHECK(be.strides()[0] == 0);
    Elem fa = [&](int64_t n, int64_t i, int64_t k) { return a.at((n * M + i) * K + k); };
    Elem fb = [&](int64_t, int64_t k, int64_t j) { return b1.at(k * N + j); };
    Tensor c = ag::matmul(a.t, be);
    CHECK(str(c.shape()) == "[3, 2, 5]");
    CHECK(diff(c, naive_bmm(B, M, N, K, fa, fb), tol_for(dt)) == "");
    // expanded a against a batched b
    Base a1 = base({1, M, K}, dt, 11), b = base({B, K, N}, dt, 12);
    Elem fa1 = [&](int64_t, int64_t i, int64_t k) { return a1.at(i * K + k); };
    Elem fbb = [&](int64_t n, int64_t k, int64_t j) { return b.at((n * K + k) * N + j); };
    CHECK(diff(ag::matmul(a1.t.expand({B, M, K}), b.t), naive_bmm(B, M, N, K, fa1, fbb), tol_for(dt)) == "");
    // a matrix expanded inside its last two dims: every row of a is the same
    Base row = base({1, K}, dt, 13);
    Tensor ar = row.t.expand({M, K});
    Elem far = [&](int64_t, int64_t, int64_t k) { return row.at(k); };
    CHECK(diff(ag::matmul(ar, b1.t.select(0, 0)), naive_bmm(1, M, N, K, far, fb), tol_for(dt)) == "");
  }
}

TEST_CASE("matmul: batched with broadcast batch dims") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t B = 2, H = 3, M = 4, K = 5, N = 2;
    // [B, M, K] @ [K, N] -> [B, M, N]: the shared matrix
    Base a = base({B, M, K}, dt, 14), w = base({K, N}, dt, 15);
    Elem fa = [&](int64_t n, int64_t i, int64_t k) { return a.at((n * M + i) * K + k); };
    Elem fw = [&](int64_t, int64_t k, int64_t j) { return w.at(k * N + j); };
    Tensor c = ag::matmul(a.t, w.t);
    CHECK(str(c.shape()) == "[2, 4, 2]");
    CHECK(diff(c, naive_bmm(B, M, N, K, fa, fw), tol_for(dt)) == "");
    // the same with a batch-permuted a (batch rows not evenly spaced)
    Base ap = base({M, B, K}, dt, 16);
    Tensor a_perm = ap.t.permute({1, 0, 2});  // [B, M, K]
    Elem fap = [&](int64_t n, int64_t i, int64_t k) { return ap.at((i * B + n) * K + k); };
    CHECK(diff(ag::matmul(a_perm, w.t), naive_bmm(B, M, N, K, fap, fw), tol_for(dt)) == "");
    // [B, 1, M, K] @ [H, K, N] -> [B, H, M, N]
    Base a4 = base({B, 1, M, K}, dt, 17), b3 = base({H, K, N}, dt, 18);
    Tensor c4 = ag::matmul(a4.t, b3.t);
    CHECK(str(c4.shape()) == "[2, 3, 4, 2]");
    // flattened out batch n = b * H + h
    Elem fa4 = [&](int64_t n, int64_t i, int64_t k) { return a4.at(((n / H) * M + i) * K + k); };
    Elem fb3 = [&](int64_t n, int64_t k, int64_t j) { return b3.at(((n % H) * K + k) * N + j); };
    CHECK(diff(c4, naive_bmm(B * H, M, N, K, fa4, fb3), tol_for(dt)) == "");
    // batched transposed operands: [B, K, M]^T @ [B, N, K]^T
    Base atb = base({B, K, M}, dt, 19), btb = base({B, N, K}, dt, 20);
    Elem fatb = [&](int64_t n, int64_t i, int64_t k) { return atb.at((n * K + k) * M + i); };
    Elem fbtb = [&](int64_t n, int64_t k, int64_t j) { return btb.at((n * N + j) * K + k); };
    CHECK(diff(ag::matmul(atb.t.transpose(1, 2), btb.t.transpose(-1, -2)), naive_bmm(B, M, N, K, fatb, fbtb),
               tol_for(dt)) == "");
  }
}

TEST_CASE("matmul: 1-D operands") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dt);
    const int64_t B = 2, M = 3, K = 4, N = 5;
    Base v = base({K}, dt, 21), u = base({K}, dt, 22), m = base({M, K}, dt, 23), w = base({K, N}, dt, 24);
    Base bw = base({B, K, N}, dt, 25), bm = base({B, M, K}, dt, 26);
    double dot = 0;
    for (int64_t k = 0; k < K; ++k) dot += v.at(k) * u.at(k);
    Tensor d = ag::matmul(v.t, u.t);
    CHECK(d.dim() == 0);
    CHECK(diff(d, {dot}, tol_for(dt)) == "");
    Elem fv = [&](int64_t, int64_t, int64_t k) { return v.at(k); };
    Elem fvcol = [&](int64_t, int64_t k, int64_t) { return v.at(k); };
    Elem fm = [&](int64_t, int64_t i, int64_t k) { return m.at(i * K + k); };
    Elem fw = [&](int64_t, int64_t k, int64_t j) { return w.at(k * N + j); };
    Tensor vw = ag::matmul(v.t, w.t);  // [K] @ [K, N] -> [N]
    CHECK(str(vw.shape()) == "[5]");
    CHECK(diff(vw, naive_bmm(1, 1, N, K, fv, fw), tol_for(dt)) == "");
    Tensor mv = ag::matmul(m.t, v.t);  // [M, K] @ [K] -> [M]
    CHECK(str(mv.shape()) == "[3]");
    CHECK(diff(mv, naive_bmm(1, M, 1, K, fm, fvcol), tol_for(dt)) == "");
    Tensor bmv = ag::matmul(bm.t, v.t);  // [B, M, K] @ [K] -> [B, M]
    CHECK(str(bmv.shape()) == "[2, 3]");
    Elem fbm = [&](int64_t n, int64_t i, int64_t k) { return bm.at((n * M + i) * K + k); };
    CHECK(diff(bmv, naive_bmm(B, M, 1, K, fbm, fvcol), tol_for(dt)) == "");
    Tensor vbw = ag::matmul(v.t, bw.t);  // [K] @ [B, K, N] -> [B, N]
    CHECK(str(vbw.shape()) == "[2, 5]");
    Elem fbw = [&](int64_t n, int64_t k, int64_t j) { return bw.at((n * K + k) * N + j); };
    CHECK(diff(vbw, naive_bmm(B, 1, N, K, fv, fbw), tol_for(dt)) == "");
    // a strided 1-D operand: every other element of a [2K] vector
    Base v2 = base({2 * K}, dt, 27);
    Elem fv2 = [&](int64_t, int64_t, int64_t k) { return v2.at(2 * k); };
    CHECK(diff(ag::matmul(v2.t.slice(0, 0, 2 * K, 2), w.t), naive_bmm(1, 1, N, K, fv2, fw), tol_for(dt)) == "");
  }
}

TEST_CASE("matmul: degenerate sizes") {
  Tensor z = ag::matmul(ag::ones({2, 0}), ag::ones({0, 3}));  // K = 0: zeros
  CHECK(str(z.shape()) == "[2, 3]");
  CHECK(diff(z, std::vector<double>(6, 0.0)) == "");
  CHECK(ag::matmul(ag::ones({0, 4}), ag::ones({4, 3})).numel() == 0);
  // a [1, K] row stored as a column's transpose, and an [K, 1] column
  Tensor row = Tensor::from_vector(std::vector<double>{1, 2, 3}, {3, 1}).t();  // strides [1, 1]
  Tensor col = Tensor::from_vector(std::vector<double>{4, 5, 6}, {1, 3}).t();
  CHECK(diff(ag::matmul(row, col), {32}) == "");
  CHECK(diff(ag::matmul(col, row), {4, 8, 12, 5, 10, 15, 6, 12, 18}) == "");
}

TEST_CASE("matmul: errors name the shapes") {
  CHECK_THROWS_WITH_AS(ag::matmul(ag::zeros({2, 3}), ag::zeros({4, 5})),
                       "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)", ag::ShapeError);
  CHECK_THROWS_MSG(ag::matmul(ag::zeros({3}), ag::zeros({4})), ag::ShapeError,
                   "matmul: shapes [3] and [4] cannot be multiplied (3 != 4)");
  CHECK_THROWS_MSG(ag::matmul(ag::zeros({2, 3}), ag::zeros({2})), ag::ShapeError, "(3 != 2)");
  CHECK_THROWS_MSG(ag::matmul(ag::scalar_tensor(1.0), ag::zeros({2})), ag::ShapeError,
                   "matmul: shapes [] and [2] cannot be multiplied (0-d operand)");
  CHECK_THROWS_MSG(ag::matmul(ag::zeros({2, 3, 4}), ag::zeros({5, 4, 2})), ag::ShapeError,
                   "matmul: batch dims of shapes [2, 3, 4] and [5, 4, 2] cannot be broadcast ([2] vs [5])");
  CHECK_THROWS_MSG(ag::matmul(ag::zeros({2, 2}, DType::i64), ag::zeros({2, 2}, DType::i64)), ag::DTypeError,
                   "matmul: expected a floating tensor (f32, f64), got i64");
}

// At 2 threads f32 products of 2^21 multiply-adds and more split their rows (or columns)
// over the thread pool, one OpenBLAS call per part (ops/kernels/gemm.h), for row and
// column splits, transposed operands (x @ W^T, g^T @ x), a cut that is not a multiple of
// 16, and a batched product. A run repeats its bits; across thread counts the bits agree
// on OpenBLAS's older kernels and differ by an ulp or two in some outputs on its Haswell
// and Zen kernels (gemm.h), so the two counts must agree to f32 rounding of the sums.
TEST_CASE("f32 matmul: 1 and 2 threads agree, each run repeats its bits") {
  const int saved = ag::get_num_threads();
  ag::manual_seed(21);
  struct Case {
    const char* name;
    Tensor a, b;
  };
  const Case cases[] = {
      {"rows", ag::randn({2048, 128}), ag::randn({128, 384})},
      {"columns", ag::randn({64, 1024}), ag::randn({1024, 512})},
      {"x @ W^T", ag::randn({1000, 333}), ag::randn({517, 333}).t()},
      {"g^T @ x", ag::randn({2048, 128}).t(), ag::randn({2048, 384})},
      {"batched", ag::randn({3, 300, 200}), ag::randn({3, 200, 100})},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    ag::set_num_threads(1);
    const Tensor one = ag::matmul(c.a, c.b);
    ag::set_num_threads(2);
    const Tensor two = ag::matmul(c.a, c.b);
    CHECK(ag::max(ag::abs(two - ag::matmul(c.a, c.b))).item<double>() == 0);  // no NaN here: exact
    // sums of K products of N(0, 1) values: magnitude about sqrt(K), f32 spacing 2^-23 of it
    const double K = static_cast<double>(c.a.size(-1));
    CHECK(ag::max(ag::abs(one - two)).item<double>() <= 16 * std::sqrt(K) * 0x1p-23 * 4);
    const Tensor ref = ag::matmul(c.a.to(DType::f64), c.b.to(DType::f64));
    CHECK(ag::max(ag::abs(two.to(DType::f64) - ref)).item<double>() < 1e-3);
    CHECK(ag::max(ag::abs(one.to(DType::f64) - ref)).item<double>() < 1e-3);
  }
  ag::set_num_threads(saved);
}
