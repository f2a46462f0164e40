// Tensors of 9 to 64 dims (PyTorch's limit): Dims spills from its 8 inline slots to one
// heap block and back, and every layer above (factories, views, reductions, broadcasting,
// advanced indexing, matmul, autograd, safetensors) works at those ranks. Each result is
// compared with the same computation at a low rank, where the code paths are long tested.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <numeric>
#include <vector>

#include "tensor_checks.h"
#include "test_util.h"

using namespace ag;
using namespace ag::indexing;

namespace {
Shape ones_then(int64_t n_ones, std::vector<int64_t> tail) {
  Shape s = Dims::filled(n_ones, 1);
  for (int64_t v : tail) s.push_back(v);
  return s;
}
}  // namespace

TEST_CASE("many dims: Dims spills to the heap past 8 and copies, moves and shrinks back") {
  Dims d;
  for (int64_t i = 0; i < 12; ++i) d.push_back(10 + i);
  REQUIRE(d.size() == 12);
  CHECK(d[0] == 10);
  CHECK(d.back() == 21);
  Dims copy = d;
  copy[11] = -1;
  CHECK(d[11] == 21);  // a deep copy, not a shared block
  Dims moved = std::move(copy);
  CHECK(moved.size() == 12);
  CHECK(moved[11] == -1);
  CHECK(copy.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from Dims is empty
  Dims small{1, 2, 3};
  small = d;  // inline <- heap
  CHECK(small == d);
  d = Dims{4, 5};  // heap <- inline
  CHECK(d == Dims({4, 5}));
  Dims edge = Dims::filled(8, 7);
  edge.insert(3, 99);  // the insert that spills
  CHECK(edge.size() == 9);
  CHECK(edge[3] == 99);
  CHECK(edge[8] == 7);
  edge.erase(3);  // back to the inline slots
  CHECK(edge == Dims::filled(8, 7));
  Dims full = Dims::filled(kMaxDims, 1);
  CHECK(full.size() == 64);
  CHECK_THROWS_MSG(full.push_back(1), ShapeError, "shape: more than 64 dims are not supported");
}

TEST_CASE("many dims: factories, numel, strides and views at rank 12") {
  Shape s = Dims::filled(12, 2);
  Tensor x = arange(4096, DType::f64).reshape(s);
  CHECK(x.dim() == 12);
  CHECK(x.numel() == 4096);
  CHECK(x.stride(0) == 2048);
  CHECK(x.stride(11) == 1);
  CHECK(x.stride(-2) == 2);
  CHECK_THROWS_MSG(x.stride(12), IndexError, "stride: dim 12 is out of range for a tensor with 12 dims");
  CHECK(x.sum().item<double>() == 4095.0 * 4096.0 / 2.0);
  // Reversing 12 binary dims reverses the bits of each flat index.
  std::vector<int64_t> perm(12);
  std::iota(perm.rbegin(), perm.rend(), 0);
  std::vector<double> got = x.permute(perm).contiguous().to_vector<double>();
  bool bits_reversed = true;
  for (int64_t k = 0; k < 4096; ++k) {
    int64_t r = 0;
    for (int b = 0; b < 12; ++b) r |= ((k >> b) & 1) << (11 - b);
    bits_reversed = bits_reversed && got[size_t(k)] == double(r);
  }
  CHECK(bits_reversed);
  // Reductions over some of the 12 dims equal the same reduction of a 3-D view.
  Tensor by_group = x.sum({4, 5, 6, 7});  // dims 0-3 | 4-7 | 8-11 -> (16, 16, 16) summed over the middle
  CHECK(by_group.dim() == 8);
  CHECK(tc::diff(by_group.reshape({16, 16}), x.reshape({16, 16, 16}).sum({1}), 0.0) == "");
  CHECK(tc::diff(x.amax({-1, 0}).reshape({-1}), x.reshape({2, 1024, 2}).amax({0, 2}), 0.0) == "");
  Tensor t = x.transpose(0, 11).unsqueeze(5).squeeze(5);
  CHECK(t.dim() == 12);
  CHECK(t.index({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}).item<double>() == 1.0);
}

TEST_CASE("many dims: broadcasting, matmul and a 13-dim advanced index") {
  Tensor a = randn(ones_then(0, {2, 2, 2, 2, 2, 1, 1, 1, 1, 1}), DType::f64);
  Tensor b = randn(ones_then(0, {1, 1, 1, 1, 1, 3, 3, 3, 3, 3}), DType::f64);
  Tensor sum = a + b;
  CHECK(sum.dim() == 10);
  CHECK(tc::diff(sum.reshape({32, 243}), a.reshape({32, 1}) + b.reshape({1, 243}), 0.0) == "");

  Tensor batch = randn({2, 1, 2, 1, 2, 1, 2, 1, 3, 4}, DType::f64);
  Tensor w = randn({4, 5}, DType::f64);
  Tensor y = matmul(batch, w);
  CHECK(y.shape() == Shape{2, 1, 2, 1, 2, 1, 2, 1, 3, 5});
  CHECK(tc::diff(y.reshape({48, 5}), matmul(batch.reshape({48, 4}), w), 1e-14) == "");

  // An (1 x 9, 2, 2) index into the first dim of a (4, 5, 6) tensor: (1 x 9, 2, 2, 5, 6).
  Tensor x = randn({4, 5, 6}, DType::f64).requires_grad_();
  Tensor flat_idx = Tensor::from_vector(std::vector<int64_t>{3, 0, 3, 1});
  Tensor idx = flat_idx.reshape(ones_then(9, {2, 2}));
  Tensor picked = x.index({idx});
  CHECK(picked.dim() == 13);
  CHECK(tc::diff(picked.reshape({4, 5, 6}), x.index({flat_idx}), 0.0) == "");
  picked.sum().backward();
  Tensor want = zeros({4, 5, 6}, DType::f64);
  want.index_put_({0}, 1.0);
  want.index_put_({1}, 1.0);
  want.index_put_({3}, 2.0);  // row 3 picked twice: gradients accumulate
  CHECK(tc::diff(x.grad(), want, 0.0) == "");
}

TEST_CASE("many dims: gradcheck and gradgradcheck through rank 10") {
  Tensor x = randn({2, 1, 2, 1, 2, 1, 1, 1, 1, 3}, DType::f64).requires_grad_();
  Tensor w = randn({1, 2, 1, 1, 1, 1, 1, 1, 1, 3}, DType::f64).requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor prod = in[0] * in[1];  // broadcast to rank 10
    return (prod.tanh() * prod).sum({0, 3, -1}).softmax(1);
  };
  CHECK(gradcheck(fn, {x, w}).ok);
  CHECK(gradgradcheck(fn, {x, w}).ok);
}

TEST_CASE("many dims: unsqueeze to 64 works, the 65th dim is refused") {
  Tensor x = ones({2});
  for (int i = 1; i < 64; ++i) x = x.unsqueeze(0);
  CHECK(x.dim() == 64);
  CHECK(x.sum().item<float>() == 2.0f);
  CHECK_THROWS_MSG(x.unsqueeze(0), ShapeError, "has 64 dims; more than 64 dims are not supported");
  CHECK_THROWS_MSG(zeros(Dims(std::vector<int64_t>(65, 1))), ShapeError, "shape: more than 64 dims");
}

TEST_CASE("many dims: safetensors round trip of a 10-dim tensor") {
  std::string path = test_util::tmp_dir("test_many_dims", "roundtrip") + "/t.safetensors";
  Tensor x = randn({1, 2, 1, 3, 1, 2, 1, 1, 2, 1});
  TensorMap m;
  m.insert("x", x);
  save_safetensors(path, m);
  Tensor back = load_safetensors(path).at("x");
  CHECK(back.shape() == x.shape());
  CHECK(tc::diff(back, x, 0.0) == "");
}
