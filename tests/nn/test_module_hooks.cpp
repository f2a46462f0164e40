// Module hooks, as PyTorch's: forward pre-hooks and forward hooks (which may replace the
// inputs / the output), full backward hooks and full backward pre-hooks (which see the
// gradients w.r.t. the call's inputs and outputs, and may replace them), removable
// handles; they run for calls through the holder (and Sequential), not for ->forward.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

std::vector<double> vec(const Tensor& t) { return t.to_vector<double>(); }
Tensor t2(const std::vector<double>& v, int64_t rows, int64_t cols) { return Tensor::from_vector(v, {rows, cols}); }

// Linear(3, 2) with W = [[1, 0, -1], [2, 1, 0]], b = [0.5, -0.5], in f64.
nn::Linear make_linear() {
  nn::Linear lin(nn::LinearOptions(3, 2));
  lin->to(DType::f64);
  NoGradGuard no_grad;
  lin->weight.copy_(t2({1, 0, -1, 2, 1, 0}, 2, 3));
  lin->bias.copy_(Tensor::from_vector(std::vector<double>{0.5, -0.5}));
  return lin;
}

// Two Tensor arguments around a non-Tensor one, an optional, and a pair result:
// (u, v) = (k a b, a + b), b = 1 when absent.
struct PairImpl : nn::Module {
  PairImpl() : nn::Module("Pair") {}
  std::pair<Tensor, Tensor> forward(const Tensor& a, int64_t k, const std::optional<Tensor>& b) {
    Tensor bb = b ? *b : ag::ones_like(a);
    return {a * bb * static_cast<double>(k), a + bb};
  }
};
AG_MODULE(Pair);

}  // namespace

TEST_CASE("module hooks: a forward pre-hook replaces the input, a forward hook the output; handles remove") {
  nn::Linear lin = make_linear();
  Tensor x = t2({1, 2, 3, 0, -1, 4}, 2, 3);
  const Tensor plain = lin->forward(x);
  std::vector<std::string> order;
  auto pre = lin->register_forward_pre_hook([&](nn::Module& m, const std::vector<Tensor>& in) {
    order.push_back("pre:" + m.type_name());
    REQUIRE(in.size() == 1);
    return in[0] * 2.0;  // a Tensor: the one replacement
  });
  std::vector<double> pre2_saw;
  auto pre2 = lin->register_forward_pre_hook([&](nn::Module&, const std::vector<Tensor>& in) {
    order.push_back("pre2");
    pre2_saw = vec(in[0]);
  });
  auto fwd = lin->register_forward_hook(
      [&](nn::Module&, const std::vector<Tensor>& in, const std::vector<Tensor>& out) -> nn::HookResult {
        order.push_back("fwd");
        CHECK(vec(in[0]) == vec(x * 2.0));
        return std::vector<Tensor>{out[0] + 100.0};
      });
  Tensor y = lin(x);
  CHECK(order == std::vector<std::string>{"pre:Linear", "pre2", "fwd"});
  CHECK(pre2_saw == vec(x * 2.0));  // the first pre-hook's result
  CHECK(vec(y) == vec(lin->forward(x * 2.0) + 100.0));
  // ->forward is a plain call: no hooks (PyTorch's .forward()).
  order.clear();
  CHECK(vec(lin->forward(x)) == vec(plain));
  CHECK(order.empty());
  // Sequential calls its children as through their holders.
  nn::Sequential seq(lin);
  CHECK(vec(seq(x)) == vec(y));
  CHECK(order.size() == 3);
  pre.remove();
  fwd.remove();
  fwd.remove();  // twice is harmless
  order.clear();
  CHECK(vec(lin(x)) == vec(plain));
  CHECK(order == std::vector<std::string>{"pre2"});
  CHECK(pre2_saw == vec(x));
  pre2.remove();
  CHECK_FALSE(lin->has_hooks());
}

TEST_CASE("module hooks: a full backward hook on Linear sees grad_input and grad_output; may replace grad_input") {
  nn::Linear lin = make_linear();
  Tensor x = t2({1, 2, 3, 0, -1, 4}, 2, 3).requires_grad_();
  Tensor c = t2({1, 2, 3, 4}, 2, 2);
  int calls = 0;
  std::vector<double> grad_in, grad_out;
  auto h =
      lin->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
        ++calls;
        REQUIRE(gi.size() == 1);
        REQUIRE(go.size() == 1);
        grad_in = vec(gi[0]);
        grad_out = vec(go[0]);
      });
  // loss = sum(c * (x W^T + b)): grad_output = c, grad_input = c W =
  // [[1+4, 0+2, -1+0], [3+8, 0+4, -3+0]]; W.grad = c^T x = [[1, -1, 15], [2, 0, 22]].
  (lin(x) * c).sum().backward();
  CHECK(calls == 1);
  CHECK(grad_out == std::vector<double>{1, 2, 3, 4});
  CHECK(grad_in == std::vector<double>{5, 2, -1, 11, 4, -3});
  CHECK(vec(x.grad()) == grad_in);
  CHECK(vec(lin->weight.grad()) == std::vector<double>{1, -1, 15, 2, 0, 22});
  CHECK(vec(lin->bias.grad()) == std::vector<double>{4, 6});
  // Through ag::grad too.
  auto gx = ag::grad({(lin(x) * c).sum()}, {x});
  CHECK(calls == 2);
  CHECK(vec(gx[0]) == grad_in);
  // A replacement grad_input is what reaches x; the parameters' gradients are unchanged.
  h.remove();
  auto h2 = lin->register_full_backward_hook(
      [](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>&) { return gi[0] * -1.0; });
  x.zero_grad();
  lin->zero_grad();
  (lin(x) * c).sum().backward();
  CHECK(vec(x.grad()) == std::vector<double>{-5, -2, 1, -11, -4, 3});
  CHECK(vec(lin->weight.grad()) == std::vector<double>{1, -1, 15, 2, 0, 22});
  // A wrong count or shape is refused.
  auto h3 =
      lin->register_full_backward_hook([](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>&) {
        return std::vector<Tensor>{gi[0], gi[0]};
      });
  CHECK(contains(error_of<ValueError>([&] { (lin(x) * c).sum().backward(); }), "returned 2 tensors, expected 1"));
}

TEST_CASE("module hooks: a full backward pre-hook replaces grad_output, which the module and the hooks see") {
  nn::Linear lin = make_linear();
  Tensor x = t2({1, 2, 3, 0, -1, 4}, 2, 3).requires_grad_();
  Tensor c = t2({1, 2, 3, 4}, 2, 2);
  std::vector<std::string> order;
  std::vector<double> seen_out;
  auto pre = lin->register_full_backward_pre_hook([&](nn::Module&, const std::vector<Tensor>& go) {
    order.push_back("pre");
    CHECK(vec(go[0]) == std::vector<double>{1, 2, 3, 4});
    return go[0] * 2.0;
  });
  auto h =
      lin->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>& go) {
        order.push_back("full");
        seen_out = vec(go[0]);
      });
  (lin(x) * c).sum().backward();
  CHECK(order == std::vector<std::string>{"pre", "full"});
  CHECK(seen_out == std::vector<double>{2, 4, 6, 8});
  CHECK(vec(x.grad()) == std::vector<double>{10, 4, -2, 22, 8, -6});
  CHECK(vec(lin->weight.grad()) == std::vector<double>{2, -2, 30, 4, 0, 44});
}

TEST_CASE("module hooks: no input requires grad: the backward hook runs with undefined grad_input") {
  nn::Linear lin = make_linear();
  Tensor x = t2({1, 2, 3, 0, -1, 4}, 2, 3);
  int calls = 0;
  auto h =
      lin->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
        ++calls;
        REQUIRE(gi.size() == 1);
        CHECK_FALSE(gi[0].defined());
        CHECK(vec(go[0]) == std::vector<double>{1, 1, 1, 1});
      });
  lin(x).sum().backward();
  CHECK(calls == 1);
  CHECK(vec(lin->bias.grad()) == std::vector<double>{2, 2});
  auto bad = lin->register_full_backward_hook(
      [](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>& go) { return go[0]; });
  CHECK(contains(error_of<AutogradError>([&] { lin(x).sum().backward(); }), "no input requires gradient"));
}

TEST_CASE("module hooks: several Tensor arguments, an optional one, a pair result") {
  Pair pair;
  Tensor a = Tensor::from_vector(std::vector<double>{1, 2}).requires_grad_();
  Tensor b = Tensor::from_vector(std::vector<double>{3, -1}).requires_grad_();
  Tensor c1 = Tensor::from_vector(std::vector<double>{1, 1}), c2 = Tensor::from_vector(std::vector<double>{0.5, 2});
  std::size_t n_in = 0, n_out = 0;
  std::vector<std::vector<double>> gin, gout;
  bool second_undefined = false;
  auto f = pair->register_forward_hook([&](nn::Module&, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    n_in = in.size();
    n_out = out.size();
    second_undefined = !in[1].defined();
  });
  auto h =
      pair->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
        gin = {vec(gi[0]), vec(gi[1])};
        gout = {vec(go[0]), go[1].defined() ? vec(go[1]) : std::vector<double>{}};
      });
  // (u, v) = (2ab, a + b); loss = sum(u c1) + sum(v c2): grad_output = (c1, c2),
  // grad_input = (2 c1 b + c2, 2 c1 a + c2) = ((6.5, 0), (2.5, 6)).
  // (No structured bindings: clang cannot use them inside CHECK.)
  std::pair<Tensor, Tensor> r = pair(a, int64_t{2}, std::optional<Tensor>(b));
  const Tensor u = r.first, v = r.second;
  CHECK(n_in == 2);
  CHECK(n_out == 2);
  ((u * c1).sum() + (v * c2).sum()).backward();
  CHECK(gout == std::vector<std::vector<double>>{{1, 1}, {0.5, 2}});
  CHECK(gin == std::vector<std::vector<double>>{{6.5, 0}, {2.5, 6}});
  CHECK(vec(a.grad()) == std::vector<double>{6.5, 0});
  // Only u used: v's gradient is undefined; grad_input = (2 c1 b, 2 c1 a) = ((6, -2), (2, 4)).
  (pair(a, int64_t{2}, std::optional<Tensor>(b)).first * c1).sum().backward();
  CHECK(gout == std::vector<std::vector<double>>{{1, 1}, {}});
  CHECK(gin == std::vector<std::vector<double>>{{6, -2}, {2, 4}});
  // An absent optional is an undefined input; a pre-hook may fill it in.
  auto pre = pair->register_forward_pre_hook([&](nn::Module&, const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0], in[1].defined() ? in[1] : in[0] * 0.0 + 3.0};
  });
  second_undefined = true;
  const Tensor u3 = pair(a, int64_t{1}, std::optional<Tensor>()).first;
  CHECK_FALSE(second_undefined);  // the forward hook saw the filled-in value
  CHECK(vec(u3) == std::vector<double>{3, 6});
  CHECK(contains(error_of<ValueError>([&] {
                   auto bad = pair->register_forward_pre_hook(
                       [](nn::Module&, const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0]}; });
                   pair(a, int64_t{1}, std::optional<Tensor>());
                 }),
                 "forward pre-hook returned 1 inputs, expected 2"));
}
