// The Tensor handle: layout and element access, allclose, printing, in-place writes,
// and the runtime (threads, logger). Views, factories, math, reductions, matmul and
// indexing have their own test_tensor_*.cpp files.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/log.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
using tc::diff;
using tc::str;

// ---- layout and element access ----------------------------------------------------------

TEST_CASE("access: shape, strides, dim, numel, size, dtype, offset") {
  Tensor x = ag::zeros({2, 3, 4}, DType::f64);
  CHECK(str(x.shape()) == "[2, 3, 4]");
  CHECK(str(x.strides()) == "[12, 4, 1]");
  CHECK(x.dim() == 3);
  CHECK(x.numel() == 24);
  CHECK(x.size(1) == 3);
  CHECK(x.size(-1) == 4);
  CHECK(x.dtype() == DType::f64);
  CHECK(x.is_floating_point());
  CHECK(x.offset() == 0);
  CHECK(x.defined());
  Tensor s = ag::scalar_tensor(1.0);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(str(s.shape()) == "[]");
  CHECK(ag::zeros({3, 0}).numel() == 0);
  CHECK_FALSE(ag::zeros({1}, DType::i32).is_floating_point());
}

TEST_CASE("access: an undefined tensor throws ValueError") {
  Tensor u;
  CHECK_FALSE(u.defined());
  CHECK_THROWS_MSG(u.shape(), ag::ValueError, "Tensor: the tensor is undefined (default-constructed)");
  CHECK_THROWS_MSG(u.dtype(), ag::ValueError, "Tensor: the tensor is undefined");
  CHECK(u.to_string() == "tensor(undefined)");
}

TEST_CASE("access: item<T>() converts one element; several elements throw ValueError") {
  CHECK(Tensor::from_vector(std::vector<float>{2.75f}).item<float>() == 2.75f);
  CHECK(Tensor::from_vector(std::vector<float>{2.75f}, {1, 1}).item<double>() == 2.75);
  CHECK(Tensor::from_vector(std::vector<float>{-2.75f}).item<int64_t>() == -2);  // truncation
  CHECK(Tensor::from_vector(std::vector<int64_t>{7}).item<double>() == 7.0);
  CHECK(Tensor::from_vector(std::vector<int32_t>{0}).item<bool>() == false);
  CHECK(ag::scalar_tensor(4.0, DType::i64).item<int32_t>() == 4);
  Tensor x = tc::iota(6).view({2, 3});
  CHECK(x.select(0, 1).select(0, 2).item<float>() == 5.0f);  // a 0-d view with an offset
  CHECK_THROWS_MSG(x.item<float>(), ag::ValueError, "item: expected a tensor with one element, got shape [2, 3]");
  CHECK_THROWS_MSG(ag::zeros({0}).item<float>(), ag::ValueError, "got shape [0]");
}

TEST_CASE("access: data<T>() points at the first element and checks T") {
  Tensor x = tc::iota(6).view({2, 3});
  Tensor row = x.select(0, 1);
  CHECK(row.data<float>() - x.data<float>() == 3);
  CHECK(row.data<float>()[0] == 3.0f);
  CHECK(row.raw_data() == static_cast<void*>(row.data<float>()));
  CHECK_THROWS_MSG(x.data<double>(), ag::DTypeError, "data: tensor has dtype f32, requested f64");
  CHECK_THROWS_MSG(ag::zeros({2}, DType::i64).data<int32_t>(), ag::DTypeError,
                   "data: tensor has dtype i64, requested i32");
  CHECK_THROWS_MSG(ag::zeros({2}, DType::b8).data<float>(), ag::DTypeError, "requested f32");
}

TEST_CASE("access: to_vector<T>() walks the logical order and converts") {
  Tensor x = tc::iota(6).view({2, 3});
  CHECK(x.t().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(x.slice(1, 0, 3, 2).to_vector<int64_t>() == std::vector<int64_t>{0, 2, 3, 5});
  CHECK(x.to_vector<bool>() == std::vector<bool>{false, true, true, true, true, true});
  CHECK(ag::ones({2, 1}).expand({2, 3}).to_vector<double>() == std::vector<double>(6, 1.0));
  CHECK(ag::zeros({0}).to_vector<float>().empty());
}

// ---- allclose -------------------------------------------------------------------------

TEST_CASE("allclose: |a - b| <= atol + rtol * |b|, NaN unequal, equal infinities equal") {
  auto t = [](std::vector<double> v) { return Tensor::from_vector(v); };
  CHECK(ag::allclose(t({1, 2}), t({1, 2})));
  CHECK(ag::allclose(t({1.0}), t({1.0 + 1e-6})));  // rtol 1e-5
  CHECK_FALSE(ag::allclose(t({1.0}), t({1.0 + 1e-4})));
  CHECK(ag::allclose(t({0.0}), t({5e-9})));  // atol 1e-8
  CHECK_FALSE(ag::allclose(t({0.0}), t({1e-7})));
  // rtol scales with |b| only: asymmetric
  CHECK(ag::allclose(t({0.0}), t({1.0}), 1.0, 0.0));
  CHECK_FALSE(ag::allclose(t({1.0}), t({0.0}), 1.0, 0.0));
  CHECK(ag::allclose(t({100}), t({101}), 0.01, 0.0));
  CHECK_FALSE(ag::allclose(t({100}), t({101}), 0.005, 0.0));
  CHECK(ag::allclose(t({100}), t({101}), 0.0, 1.0));
  // NaN and infinities
  CHECK_FALSE(ag::allclose(t({NAN}), t({NAN})));
  CHECK_FALSE(ag::allclose(t({1.0}), t({NAN}), 1e9, 1e9));
  CHECK(ag::allclose(t({INFINITY, -INFINITY}), t({INFINITY, -INFINITY})));
  CHECK_FALSE(ag::allclose(t({INFINITY}), t({-INFINITY})));
  CHECK_FALSE(ag::allclose(t({1.0}), t({INFINITY})));
  CHECK_FALSE(ag::allclose(t({INFINITY}), t({1.0})));
  // shapes broadcast as in torch.allclose (ShapeError when they cannot); dtypes may differ
  CHECK(ag::allclose(ag::ones({2, 1}), ag::ones({2})));
  CHECK_THROWS_AS(ag::allclose(ag::ones({2}), ag::ones({3})), ag::ShapeError);
  CHECK(ag::allclose(ag::ones({2}), ag::ones({2}, DType::f64)));
  CHECK(ag::allclose(tc::iota(6).view({2, 3}).t(), Tensor::from_vector(std::vector<float>{0, 3, 1, 4, 2, 5}, {3, 2})));
}

// ---- printing -------------------------------------------------------------------------

TEST_CASE("print: whole floats in PyTorch's style") {
  CHECK(Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}).to_string() ==
        "tensor([[1., 2.],\n        [3., 4.]])");
  CHECK(Tensor::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2}).to_string() ==
        "tensor([[1., 2.],\n        [3., 4.]], dtype=f64)");
  CHECK(Tensor::from_vector(std::vector<float>{1, 10, 100}).to_string() == "tensor([  1.,  10., 100.])");
  CHECK(Tensor::from_vector(std::vector<float>{-1, 2}).to_string() == "tensor([-1.,  2.])");
  CHECK(ag::scalar_tensor(3.0).to_string() == "tensor(3.)");
  std::ostringstream os;
  os << Tensor::from_vector(std::vector<float>{5});
  CHECK(os.str() == "tensor([5.])");
}

TEST_CASE("print: non-integer floats use 4 decimals, tiny values scientific") {
  CHECK(Tensor::from_vector(std::vector<float>{1.5f, -2.25f}).to_string() == "tensor([ 1.5000, -2.2500])");
  CHECK(ag::scalar_tensor(0.5).to_string() == "tensor(0.5000)");
  CHECK(Tensor::from_vector(std::vector<double>{1.0 / 3.0}).to_string() == "tensor([0.3333], dtype=f64)");
  CHECK(Tensor::from_vector(std::vector<float>{1e-5f, 1.0f}).to_string() == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(Tensor::from_vector(std::vector<float>{1.5f, NAN, INFINITY}).to_string() == "tensor([1.5000,    nan,    inf])");
}

TEST_CASE("print: integers, bool, 3-D nesting, empty tensors") {
  CHECK(Tensor::from_vector(std::vector<int64_t>{0, 1, 2}).to_string() == "tensor([0, 1, 2])");
  CHECK(Tensor::from_vector(std::vector<int32_t>{-3, 10}).to_string() == "tensor([-3, 10], dtype=i32)");
  CHECK(Tensor::from_vector(std::vector<bool>{true, false}).to_string() == "tensor([ True, False])");
  CHECK(Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}).to_string() ==
        "tensor([[[0, 1],\n"
        "         [2, 3]],\n"
        "\n"
        "        [[4, 5],\n"
        "         [6, 7]]])");
  CHECK(ag::zeros({0}).to_string() == "tensor([])");
  CHECK(ag::zeros({2, 0}).to_string() == "tensor([], size=[2, 0])");
  // a view prints its own elements
  CHECK(tc::iota(4).view({2, 2}).t().to_string() == "tensor([[0., 2.],\n        [1., 3.]])");
}

TEST_CASE("print: requires_grad and grad_fn") {
  Tensor x = ag::ones({2});
  x.requires_grad_();
  CHECK(x.to_string() == "tensor([1., 1.], requires_grad=True)");
  CHECK((x * 2.0).to_string() == "tensor([2., 2.], grad_fn=<mul>)");
}

TEST_CASE("print: more than 1000 elements are shortened with ...") {
  std::string s = ag::arange(2000).to_string();
  CHECK(s.rfind("tensor([   0,    1,    2,", 0) == 0);
  CHECK(s.find("...") != std::string::npos);
  CHECK(s.size() > std::string("1997, 1998, 1999])").size());
  CHECK(s.substr(s.size() - 18) == "1997, 1998, 1999])");
  CHECK(s.size() < 80);
  // 2-D: three rows, a "..." row, three rows; each row shortened too
  std::string m = ag::zeros({40, 40}).to_string();
  CHECK(std::count(m.begin(), m.end(), '\n') == 6);
  CHECK(m.find("\n        ...,\n") != std::string::npos);
  // exactly 1000 elements are all shown
  std::string full = ag::arange(1000).to_string();
  CHECK(full.find("...") == std::string::npos);
  CHECK(full.find(" 999])") != std::string::npos);
}

// ---- in-place writes --------------------------------------------------------------------

TEST_CASE("in-place: fill_, zero_, copy_, add_, mul_, masked_fill_ and the version counter") {
  Tensor x = ag::zeros({2, 3});
  uint64_t v0 = x.storage()->version();
  x.fill_(2.0);
  CHECK(diff(x, std::vector<double>(6, 2.0)) == "");
  CHECK(x.storage()->version() == v0 + 1);
  x.copy_(Tensor::from_vector(std::vector<double>{1.5, 2.5, 3.5}));  // broadcast, f64 -> f32
  CHECK(diff(x, {1.5, 2.5, 3.5, 1.5, 2.5, 3.5}) == "");
  x.add_(Tensor::from_vector(std::vector<float>{1, 2}, {2, 1}), 10.0);  // x += 10 * other
  CHECK(diff(x, {11.5, 12.5, 13.5, 21.5, 22.5, 23.5}) == "");
  x.mul_(2.0);
  CHECK(diff(x, {23, 25, 27, 43, 45, 47}) == "");
  x.masked_fill_(ag::gt(x, 44.0), -1.0);
  CHECK(diff(x, {23, 25, 27, 43, -1, -1}) == "");
  x.zero_();
  CHECK(diff(x, std::vector<double>(6, 0.0)) == "");
  CHECK(x.storage()->version() == v0 + 6);
  Tensor view = x.t();
  view.add_(ag::ones({3, 2}));  // a view bumps the shared counter
  CHECK(x.storage()->version() == v0 + 7);
  CHECK(diff(x, std::vector<double>(6, 1.0)) == "");
}

TEST_CASE("in-place: shape and dtype errors") {
  Tensor x = ag::zeros({3});
  CHECK_THROWS_MSG(x.add_(ag::zeros({2, 3})), ag::ShapeError, "add_: shape [2, 3] cannot be broadcast to [3]");
  CHECK_THROWS_MSG(x.masked_fill_(ag::ones({2, 3}, DType::b8), 0.0), ag::ShapeError,
                   "masked_fill: mask shape [2, 3] cannot be broadcast to input shape [3]");
  CHECK_THROWS_MSG(x.copy_(ag::zeros({4})), ag::ShapeError, "copy_: shapes [4] and [3] cannot be broadcast");
  CHECK_THROWS_MSG(x.copy_(ag::zeros({2, 3})), ag::ShapeError, "copy_: source shape [2, 3] cannot be broadcast to [3]");
}

TEST_CASE("in-place: a tensor that requires grad refuses writes outside NoGradGuard") {
  Tensor w = ag::ones({2});
  w.requires_grad_();
  CHECK_THROWS_WITH_AS(w.fill_(0.0),
                       "fill_: in-place write to a leaf tensor that requires grad (shape [2]); wrap it "
                       "in NoGradGuard (as optimizers do) or use the out-of-place op",
                       ag::AutogradError);
  CHECK_THROWS_MSG(w.zero_(), ag::AutogradError, "fill_: in-place write");
  CHECK_THROWS_MSG(w.copy_(ag::zeros({2})), ag::AutogradError, "copy_: in-place write");
  CHECK_THROWS_MSG(w.add_(ag::zeros({2})), ag::AutogradError, "add_: in-place write");
  CHECK_THROWS_MSG(w.mul_(2.0), ag::AutogradError, "mul_: in-place write");
  CHECK_THROWS_MSG(w.masked_fill_(ag::ones({2}, DType::b8), 0.0), ag::AutogradError, "masked_fill_: in-place write");
  CHECK(diff(w, {1, 1}) == "");
  {
    ag::NoGradGuard guard;
    w.add_(ag::ones({2}), -0.5);  // what an optimizer step does
  }
  CHECK(diff(w, {0.5, 0.5}) == "");
  CHECK_THROWS_MSG(ag::ones({2}, DType::i64).requires_grad_(), ag::DTypeError,
                   "requires_grad_: only floating tensors can require grad, got dtype i64");
  Tensor y = w * 2.0;  // a non-leaf
  CHECK_THROWS_MSG(y.requires_grad_(false), ag::AutogradError,
                   "requires_grad_: cannot turn off requires_grad of a non-leaf tensor; use detach()");
  CHECK_THROWS_MSG(w.set_grad(ag::zeros({3})), ag::ShapeError,
                   "set_grad: gradient [3] f32 does not match tensor [2] f32");
  CHECK_THROWS_MSG(w.set_grad(ag::zeros({2}, DType::f64)), ag::ShapeError,
                   "set_grad: gradient [2] f64 does not match tensor [2] f32");
}

// ---- runtime ----------------------------------------------------------------------------

TEST_CASE("runtime: set_num_threads / get_num_threads round trip; 0 and absurd counts are refused") {
  int before = ag::get_num_threads();
  CHECK(before >= 1);
  ag::set_num_threads(3);
  CHECK(ag::get_num_threads() == 3);
  ag::set_num_threads(1);
  CHECK(ag::get_num_threads() == 1);
  CHECK_THROWS_WITH_AS(ag::set_num_threads(0), "set_num_threads: need 1 <= n <= 1024, got 0", ag::ValueError);
  CHECK_THROWS_MSG(ag::set_num_threads(-2), ag::ValueError, "got -2");
  // A typo must not start 20,000 threads (issue 23); the largest count is accepted.
  CHECK_THROWS_WITH_AS(ag::set_num_threads(20000), "set_num_threads: need 1 <= n <= 1024, got 20000", ag::ValueError);
  CHECK_THROWS_MSG(ag::set_num_threads(ag::kMaxThreads + 1), ag::ValueError, "got 1025");
  CHECK(ag::get_num_threads() == 1);  // unchanged by the refused calls
  ag::set_num_threads(before);
  CHECK(ag::get_num_threads() == before);
}

TEST_CASE("runtime: ag::log() returns the library's logger") {
  spdlog::logger& l = ag::log();
  CHECK(l.name() == "attograd");
  CHECK(&ag::log() == &l);  // one logger
  l.debug("test_tensor: logger reachable");
}
