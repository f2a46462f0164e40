// Tensor::index / index_put_ with LibTorch's torch::indexing (attograd/tensor_indexing.h),
// index_put, nonzero, and ag::tensor literals. The "torch" cases are Python's x[...] in
// PyTorch 1.13 (tests/fixtures/torch_indexing.safetensors, tools/make_index_fixtures.py:
// the same case names, the same index literals), values and gradients.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace ag::indexing;

namespace {
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i64(const std::vector<int64_t>& v) { return Tensor::from_vector(v); }
Tensor b8(const std::vector<bool>& v) { return Tensor::from_vector(v); }

// The fixture's x: arange(120).reshape(4, 5, 6) + 0.5, f64, a leaf that requires grad.
Tensor fixture_x() { return (arange(120, DType::f64).reshape({4, 5, 6}) + 0.5).detach().requires_grad_(); }

// The index literals of tools/make_index_fixtures.py.
Tensor i1() { return i64({2, 0, -1, 2}); }
Tensor a2() { return i64({0, 4, 1, 2}, {2, 2}); }
Tensor b2() { return i64({5, 0, -1, 3}, {2, 2}); }
Tensor r3() { return i64({0, 3, 1}); }
Tensor c3() { return i64({1, 2, 5}); }
Tensor col() { return i64({0, 2, 3}, {3, 1}); }
Tensor row() { return i64({1, 4}); }
Tensor m4() { return b8({true, false, true, true}); }
Tensor m45() {
  std::vector<bool> m;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) m.push_back((i * 5 + j) % 3 == 0);
  return Tensor::from_vector(m, {4, 5});
}

using Get = std::function<Tensor(const Tensor&)>;
const std::vector<std::pair<std::string, Get>>& get_cases() {
  static const std::vector<std::pair<std::string, Get>> cases = {
      {"basic_mix",
       [](const Tensor& x) {
         return x.index({Slice(), None, 0, Slice(1, None, 2)});
       }},
      {"ellipsis_last",
       [](const Tensor& x) {
         return x.index({Ellipsis, 2});
       }},
      {"ellipsis_mid",
       [](const Tensor& x) {
         return x.index({1, "...", Slice(1, 4)});
       }},
      {"negative_int_and_slices",
       [](const Tensor& x) {
         return x.index({-1, Slice(-3), Slice(None, None, 3)});
       }},
      {"slice_clamped",
       [](const Tensor& x) {
         return x.index({Slice(1, 100), Slice(-100, 2)});
       }},
      {"all_ellipsis", [](const Tensor& x) { return x.index({Ellipsis}); }},
      {"zero_d_int_tensor", [](const Tensor& x) { return x.index({scalar_tensor(2)}); }},
      {"bool_true",
       [](const Tensor& x) {
         return x.index({true, 1});
       }},
      {"bool_false", [](const Tensor& x) { return x.index({false}); }},
      {"adv_one_repeated", [](const Tensor& x) { return x.index({i1()}); }},
      {"adv_two_adjacent",
       [](const Tensor& x) {
         return x.index({Slice(), a2(), b2()});
       }},
      {"adv_nonadjacent",
       [](const Tensor& x) {
         return x.index({r3(), Slice(), c3()});
       }},
      {"adv_broadcast",
       [](const Tensor& x) {
         return x.index({col(), row()});
       }},
      {"adv_then_slice",
       [](const Tensor& x) {
         return x.index({i1(), Slice(1, 3)});
       }},
      {"none_then_adv",
       [](const Tensor& x) {
         return x.index({None, i1(), Ellipsis, 0});
       }},
      {"int_between_adv",
       [](const Tensor& x) {
         return x.index({r3(), 1, c3()});
       }},
      {"mask_rows", [](const Tensor& x) { return x.index({m4()}); }},
      {"mask_2d", [](const Tensor& x) { return x.index({m45()}); }},
      {"mask_and_index",
       [](const Tensor& x) {
         return x.index({m4(), Slice(), c3()});
       }},
      {"empty_index", [](const Tensor& x) { return x.index({i64({})}); }},
  };
  return cases;
}

// y = x * 1; y[spec] = v (a non-leaf, as the fixture's), or index_put_ with accumulate.
using Put = std::function<void(Tensor& y, const Tensor& v)>;
const std::vector<std::pair<std::string, Put>>& put_cases() {
  static const std::vector<std::pair<std::string, Put>> cases = {
      {"basic_broadcast",
       [](Tensor& y, const Tensor& v) {
         y.index_put_({Slice(), 1, Slice(None, None, 2)}, v);
       }},
      {"adv_rows", [](Tensor& y, const Tensor& v) { y.index_put_({r3()}, v); }},
      {"mask_scalar", [](Tensor& y, const Tensor& v) { y.index_put_({m45()}, v); }},
      {"adv_nonadjacent",
       [](Tensor& y, const Tensor& v) {
         y.index_put_({r3(), Slice(), c3()}, v);
       }},
      {"accumulate_repeated",
       [](Tensor& y, const Tensor& v) {
         y.index_put_({i1(), i64({0, 1, 2, 1})}, v, true);
       }},
  };
  return cases;
}
}  // namespace

TEST_CASE("index: every torch case gives PyTorch's values and gradient") {
  const auto f = test_util::load_fixture("torch_indexing");
  for (const auto& c : get_cases()) {
    INFO("case ", c.first);
    Tensor x = fixture_x();
    Tensor out = c.second(x);
    const Tensor& want = f.at("get." + c.first + ".out");
    REQUIRE(out.shape() == want.shape());
    CHECK(tc::diff(out, want) == "");
    Tensor w = arange(1, out.numel() + 1, 1, DType::f64).reshape(out.shape());
    if (out.numel() > 0) (out * w).sum().backward();
    Tensor g = x.grad().defined() ? x.grad() : zeros_like(x);
    CHECK(tc::diff(g, f.at("get." + c.first + ".grad")) == "");
  }
}

TEST_CASE("index_put_: every torch case gives PyTorch's values and gradients") {
  const auto f = test_util::load_fixture("torch_indexing");
  for (const auto& c : put_cases()) {
    INFO("case ", c.first);
    Tensor x = fixture_x();
    Tensor v = f.at("put." + c.first + ".v").clone().requires_grad_();
    Tensor y = x * 1.0;
    c.second(y, v);
    CHECK(tc::diff(y, f.at("put." + c.first + ".out")) == "");
    (y * arange(1, 121, 1, DType::f64).reshape({4, 5, 6})).sum().backward();
    CHECK(tc::diff(x.grad(), f.at("put." + c.first + ".grad_x")) == "");
    CHECK(tc::diff(v.grad(), f.at("put." + c.first + ".grad_v")) == "");
  }
}

TEST_CASE("index: basic indices give views, tensor indices copies") {
  Tensor x = arange(24, DType::f32).reshape({2, 3, 4});
  Tensor v = x.index({Slice(), None, 1, Slice(None, None, 2)});
  CHECK(v.shape() == Shape{2, 1, 2});
  CHECK(v.shares_storage(x));
  CHECK(x.index({scalar_tensor(1)}).shares_storage(x));  // a 0-d integer tensor selects
  CHECK_FALSE(x.index({i64({1})}).shares_storage(x));
  // i32 indices equal i64 ones (PyTorch 2.x accepts int, 1.13 only long).
  Tensor i32 = Tensor::from_vector(std::vector<int32_t>{2, -1});
  CHECK(tc::diff(x.index({Slice(), i32}), x.index({Slice(), i64({2, -1})})) == "");
}

TEST_CASE("index_put_: basic writes go through the view, outside the graph") {
  Tensor x = zeros({3, 4}, DType::i64);
  x.index_put_({1, Slice(1, 3)}, 7);
  x.index_put_({Slice(), -1}, i64({1, 2, 3}));
  CHECK(x.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 1, 0, 7, 7, 2, 0, 0, 0, 3});
  // A bool mask and repeated indices with accumulate.
  Tensor y = zeros({4});
  y.index_put_({b8({true, false, true, false})}, 5.0);
  y.index_put_({i64({3, 3, 1})}, tensor({1.0, 2.0, 4.0}), true);
  CHECK(tc::diff(y, {5, 4, 5, 3}) == "");
  // index_put (out of place) leaves its input alone.
  Tensor z = index_put(y, {i64({0})}, tensor({9.0}));
  CHECK(tc::diff(z, {9, 4, 5, 3}) == "");
  CHECK(tc::diff(y, {5, 4, 5, 3}) == "");
  // An undefined index tensor takes the whole dim, as None in torch.index_put's list.
  Tensor m = zeros({2, 3});
  m.index_put_(std::vector<Tensor>{Tensor(), i64({0, 2})}, tensor({1.0, 2.0}), false);
  CHECK(tc::diff(m, {1, 0, 2, 1, 0, 2}) == "");
}

TEST_CASE("index and index_put_: errors name the op and the shapes, as PyTorch's") {
  Tensor x = zeros({2, 3});
  CHECK_THROWS_AS(x.index({0, 0, 0}), IndexError);  // too many indices for tensor of dimension 2
  CHECK_THROWS_WITH_AS(x.index({0, 0, 0}), doctest::Contains("too many indices for tensor of dimension 2"), IndexError);
  CHECK_THROWS_WITH_AS(x.index({Ellipsis, Ellipsis}), doctest::Contains("single ellipsis"), IndexError);
  CHECK_THROWS_WITH_AS(x.index({5}), doctest::Contains("index 5 is out of bounds for dimension 0 with size 2"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.index({Slice(), i64({3})}),
                       doctest::Contains("index 3 is out of bounds for dimension 1 with size 3"), IndexError);
  CHECK_THROWS_WITH_AS(x.index({i64({-3})}), doctest::Contains("index -3 is out of bounds"), IndexError);
  CHECK_THROWS_WITH_AS(x.index({Slice(None, None, -1)}), doctest::Contains("step must be greater than zero"),
                       ValueError);
  CHECK_THROWS_WITH_AS(x.index({b8({true, false, true})}), doctest::Contains("the shape of the mask [3] at index 0"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.index({i64({0, 1}), i64({0, 1, 2})}),
                       doctest::Contains("indexing tensors could not be broadcast together with shapes [2], [3]"),
                       IndexError);
  CHECK_THROWS_WITH_AS(x.index({zeros({1})}), doctest::Contains("tensors used as indices must be long, int or bool"),
                       IndexError);
  CHECK_THROWS_WITH_AS(TensorIndex("..x"), doctest::Contains("expected \"...\""), ValueError);
  CHECK_THROWS_WITH_AS(
      x.index_put_({0}, zeros({2})),
      doctest::Contains("value tensor of shape [2] cannot be broadcast to indexing result of shape [3]"), ShapeError);
  CHECK_THROWS_WITH_AS(x.index_put_({i64({0})}, zeros({3}, DType::f64)),
                       doctest::Contains("index put requires the source and destination dtypes match"), DTypeError);
  CHECK_THROWS_WITH_AS(index_put(x, {Tensor(), Tensor(), Tensor()}, zeros({1})),
                       doctest::Contains("index_put: too many indices for tensor of dimension 2"), IndexError);
  CHECK_THROWS_WITH_AS(x.index({Tensor()}), doctest::Contains("index: an index tensor is undefined"), ValueError);
  CHECK_THROWS_WITH_AS(TensorIndex(UINT64_MAX), doctest::Contains("does not fit int64"), IndexError);
  // Nothing was written by the failed calls.
  CHECK(tc::diff(x, std::vector<double>(6, 0.0)) == "");
}

TEST_CASE("index_put_ inside the graph: a leaf that requires grad refuses, a non-leaf records") {
  Tensor w = ones({3}).requires_grad_();
  CHECK_THROWS_AS(w.index_put_({0}, 2.0), AutogradError);
  Tensor h = w * 2.0;
  h.index_put_({i64({1})}, tensor({5.0f}));
  h.sum().backward();
  CHECK(tc::diff(w.grad(), {2, 0, 2}) == "");
}

TEST_CASE("index: double backward through an advanced index (gradgradcheck)") {
  Tensor x = (arange(12, DType::f64).reshape({3, 4}) * 0.25).detach().requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return ag::pow(in[0].index({i64({2, 0, 2}), Slice(1, None)}), 3.0); };
  CHECK(gradcheck(fn, {x}).ok);
  CHECK(gradgradcheck(fn, {x}).ok);
}

TEST_CASE("nonzero and argwhere: coordinates in row()-major order; NaN counts") {
  const double nan = std::nan("");
  Tensor x = Tensor::from_vector(std::vector<double>{0, 1.5, 0, nan, -2, 0}, {2, 3});
  CHECK(nonzero(x).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  CHECK(nonzero(x).shape() == Shape{3, 2});
  CHECK(argwhere(x).to_vector<int64_t>() == nonzero(x).to_vector<int64_t>());
  CHECK(nonzero(zeros({0, 2})).shape() == Shape{0, 2});
  CHECK(nonzero(scalar_tensor(3.0)).shape() == Shape{1, 0});  // torch.nonzero(tensor(3.)): [1, 0]
}

TEST_CASE("tensor literals infer PyTorch's dtype") {
  Tensor a = tensor({{1, 2}, {3, 4}});
  CHECK(a.dtype() == DType::i64);
  CHECK(a.shape() == Shape{2, 2});
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(tensor({1.5, 2.0}).dtype() == get_default_dtype());
  CHECK(tensor({1, 2.5}).dtype() == get_default_dtype());  // mixed: the widest kind, as torch.tensor
  CHECK(tensor({true, false}).dtype() == DType::b8);
  CHECK(tensor({true, 2}).dtype() == DType::i64);
  CHECK(tensor(3).shape() == Shape{});
  CHECK(tensor({}).shape() == Shape{0});
  CHECK(tensor({}).dtype() == get_default_dtype());
  CHECK(tensor({{}, {}}).shape() == Shape{2, 0});
  CHECK(tensor({{1, 2}}, DType::f64).dtype() == DType::f64);
  // int64 exact, not through double.
  CHECK(tensor({INT64_MAX}).item<int64_t>() == INT64_MAX);
  CHECK(tensor(std::vector<float>{1, 2, 3}).shape() == Shape{3});
  CHECK_THROWS_WITH_AS(tensor({{1, 2}, {3}}), doctest::Contains("ragged"), ShapeError);
}
