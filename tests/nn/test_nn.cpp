// nn: the Module system (registration, dotted names, train / eval, zero_grad, to(),
// printing, holders, containers) and a custom module that trains. State dicts and
// save / load: test_nn/state_dict.cpp; the basic layers: test_nn/layers.cpp.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "nn_test_util.h"
#include "test_util.h"

#include <sstream>
#include <string>
#include <vector>

using namespace ag;
using namespace nn_test;

using test_util::contains;
using test_util::error_of;

namespace {

std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

}  // namespace

// ---- registration and names ---------------------------------------------------------

TEST_CASE("custom module: named_parameters are dotted and recursive, in registration order") {
  Net net;
  CHECK(names(net->named_parameters()) == std::vector<std::string>{"scale", "layers.0.weight", "layers.0.bias",
                                                                   "layers.1.weight", "norm.weight", "norm.bias"});
  CHECK(names(net->named_parameters(/*recurse=*/false)) == std::vector<std::string>{"scale"});
  CHECK(names(net->named_buffers()) == std::vector<std::string>{"steps", "running"});
  CHECK(net->parameters().size() == 6);
  // parameters() hands out the members themselves (same TensorImpl), not copies.
  CHECK(net->parameters()[0].impl() == net->scale.impl());
  CHECK(net->parameters()[1].impl() == net->layers->at<nn::LinearImpl>(0)->weight.impl());
  for (auto& p : net->parameters()) CHECK(p.requires_grad());

  auto kids = net->children();
  REQUIRE(kids.size() == 2);
  CHECK(kids[0]->type_name() == "ModuleList");
  CHECK(kids[1]->type_name() == "LayerNorm");
  CHECK(net->named_children()[0].first == "layers");
  CHECK(net->named_children()[1].first == "norm");
  CHECK(net->layers->size() == 2);
  CHECK(net->layers->children().size() == 2);

  // state_dict: PyTorch's order, each module's parameters then its buffers, then its
  // children's; by dotted name, detached.
  TensorMap sd = net->state_dict();
  std::vector<std::string> keys;
  for (auto& [k, t] : sd) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"scale", "steps", "running", "layers.0.weight", "layers.0.bias",
                                         "layers.1.weight", "norm.weight", "norm.bias"});
  CHECK_FALSE(sd.at("layers.0.weight").requires_grad());
  CHECK(sd.at("layers.0.weight").shares_storage(net->layers->at<nn::LinearImpl>(0)->weight));
}

TEST_CASE("register_parameter / buffer / module: flags and bad names") {
  struct M : nn::Module {
    M() : nn::Module("M") {}
  };
  M m;
  Tensor a = m.register_parameter("a", zeros({2}));
  Tensor frozen = m.register_parameter("frozen", zeros({2}), /*requires_grad=*/false);
  Tensor buf = m.register_buffer("buf", ones({2}));
  CHECK(a.requires_grad());
  CHECK_FALSE(frozen.requires_grad());
  CHECK_FALSE(buf.requires_grad());
  CHECK(names(m.named_parameters()) == std::vector<std::string>{"a", "frozen"});
  CHECK(names(m.named_buffers()) == std::vector<std::string>{"buf"});

  CHECK(contains(error_of<ValueError>([&] { m.register_parameter("a", zeros({1})); }), "'a'"));
  CHECK(contains(error_of<ValueError>([&] { m.register_parameter("x.y", zeros({1})); }), "'x.y'"));
  CHECK(contains(error_of<ValueError>([&] { m.register_buffer("", zeros({1})); }), "buffer name"));
  CHECK(contains(error_of<ValueError>([&] { m.register_parameter("u", Tensor{}); }), "'u'"));
  m.register_module("lin", nn::Linear(2, 2));
  CHECK(contains(error_of<ValueError>([&] { m.register_module("lin", nn::Linear(2, 2)); }), "'lin'"));
  CHECK(contains(error_of<ValueError>([&] { m.register_module("empty", nn::Linear(nullptr)); }), "'empty'"));
  CHECK(names(m.named_parameters()) == std::vector<std::string>{"a", "frozen", "lin.weight", "lin.bias"});
}

TEST_CASE("train / eval propagate through the tree") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  CHECK_FALSE(net->is_training());
  CHECK_FALSE(net->layers->is_training());
  CHECK_FALSE(net->layers->at<nn::LinearImpl>(1)->is_training());
  CHECK_FALSE(net->norm->is_training());
  net->train();
  CHECK(net->layers->at<nn::LinearImpl>(0)->is_training());
  CHECK(net->norm->is_training());
  net->layers->eval();  // a subtree only
  CHECK(net->is_training());
  CHECK_FALSE(net->layers->at<nn::LinearImpl>(0)->is_training());
}

TEST_CASE("zero_grad drops every parameter's gradient") {
  Net net;
  Tensor x = randn({5, 4});
  net(x).sum().backward();
  for (auto& n_p : net->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO(n);
    CHECK(p.grad().defined());
  }
  net->zero_grad();
  for (auto& p : net->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("to(f64) converts in place: members and earlier handles see it") {
  manual_seed(1);
  Net net;
  Tensor w = net->layers->at<nn::LinearImpl>(0)->weight;  // a handle taken before
  std::vector<double> before = w.to_vector<double>();
  Tensor x = randn({3, 4});
  Tensor y32 = net(x);
  net->to(DType::f64);
  for (auto& n_p : net->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO(n);
    CHECK(p.dtype() == DType::f64);
    CHECK(p.requires_grad());
  }
  CHECK(w.dtype() == DType::f64);
  CHECK(w.to_vector<double>() == before);  // f32 -> f64 is exact
  CHECK(net->scale.dtype() == DType::f64);
  CHECK(net->norm->weight.dtype() == DType::f64);
  CHECK(net->running.dtype() == DType::f64);
  CHECK(net->steps.dtype() == DType::i64);  // integer buffers stay
  Tensor y64 = net(x.to(DType::f64));
  CHECK(y64.dtype() == DType::f64);
  CHECK(allclose(y64, y32.to(DType::f64), 1e-5, 1e-5));
  // the f64 module trains: gradients arrive in f64
  y64.sum().backward();
  CHECK(w.grad().dtype() == DType::f64);
  CHECK_THROWS_AS(net->to(DType::i64), DTypeError);
}

// ---- printing ------------------------------------------------------------------------

TEST_CASE("printing a module shows its tree and options") {
  Net net;
  std::string s = str(*net);
  CHECK(s.rfind("Net(", 0) == 0);
  CHECK(contains(s, "(layers): ModuleList("));
  CHECK(contains(s, "(0): Linear(in_features=4, out_features=8, bias=true)"));
  CHECK(contains(s, "(1): Linear(in_features=8, out_features=3, bias=false)"));
  CHECK(contains(s, "(norm): LayerNorm([3], eps=1e-05, elementwise_affine=true)"));
  CHECK(s.back() == ')');

  std::ostringstream os;
  os << nn::Linear(nn::LinearOptions(512, 2048).bias(false));  // holders print too
  CHECK(os.str() == "Linear(in_features=512, out_features=2048, bias=false)");
  CHECK(str(*nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0))) == "Embedding(10, 3, padding_idx=0)");
  CHECK(str(*nn::Dropout(0.25)) == "Dropout(p=0.25)");
  CHECK(str(*nn::GELU(GeluApprox::tanh)) == "GELU(approximate=tanh)");
  CHECK(str(*nn::ReLU()) == "ReLU");
}

// ---- holders and containers ------------------------------------------------------------

TEST_CASE("ModuleHolder: call, ->, shared ownership, empty holder") {
  nn::Linear lin(nn::LinearOptions(4, 5));
  Tensor x = randn({2, 4});
  Tensor y = lin(x);
  CHECK(y.shape() == Shape({2, 5}));
  CHECK(same_values(y, lin->forward(x)));
  CHECK(same_values(y, (*lin).forward(x)));

  nn::Linear copy = lin;  // holders share the module
  CHECK(copy.ptr() == lin.ptr());
  nn::Linear direct(lin);  // direct-initialization from a non-const lvalue too
  CHECK(direct.ptr() == lin.ptr());
  nn::Linear from_ptr(std::make_shared<nn::LinearImpl>(3, 2));
  CHECK(from_ptr->weight.shape() == Shape({2, 3}));

  nn::Linear empty{nullptr};
  CHECK(empty.is_empty());
  CHECK_FALSE(lin.is_empty());
  CHECK_THROWS_AS(empty(x), ValueError);
  CHECK_THROWS_AS(empty->forward(x), ValueError);
  CHECK_THROWS_AS((void)empty->weight, ValueError);
  CHECK_THROWS_AS((void)*empty, ValueError);
  empty = lin;  // a member declared empty gets its module later, as in reset()
  CHECK(same_values(empty(x), y));
}

TEST_CASE("Sequential runs its modules in order; names are 0, 1, ...") {
  manual_seed(8);
  nn::Linear l1(3, 6), l2(6, 2);
  nn::Sequential seq(l1, nn::ReLU(), l2);
  CHECK(seq->size() == 3);
  CHECK(names(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  Tensor x = randn({4, 3});
  CHECK(same_values(seq(x), l2(relu(l1(x)))));
  nn::Sequential copy(seq);  // copies the holder, does not nest it
  CHECK(copy.ptr() == seq.ptr());

  nn::Sequential outer;
  outer->push_back(seq);
  outer->push_back(nn::GELU());
  CHECK(names(outer->named_parameters()) ==
        std::vector<std::string>{"0.0.weight", "0.0.bias", "0.2.weight", "0.2.bias"});
  CHECK(same_values(outer(x), gelu(l2(relu(l1(x))))));
  std::string s = str(*outer);
  CHECK(contains(s, "(0): Sequential(\n    (0): Linear(in_features=3, out_features=6, bias=true)"));
  CHECK(contains(s, "(1): ReLU"));
  CHECK(contains(s, "(1): GELU(approximate=none)"));
}

TEST_CASE("ModuleList: indexing, typed access, iteration") {
  nn::ModuleList list;
  list->push_back(nn::Linear(2, 3));
  list->push_back(nn::ReLU());
  CHECK(list->size() == 2);
  CHECK((*list)[0]->type_name() == "Linear");
  CHECK(list->at<nn::LinearImpl>(0)->weight.shape() == Shape({3, 2}));
  CHECK(contains(error_of<ValueError>([&] { list->at<nn::LinearImpl>(1); }), "ReLU"));
  CHECK_THROWS_AS((*list)[2], IndexError);
  int n = 0;
  for (auto& m : *list) n += m != nullptr;
  CHECK(n == 2);
  CHECK(names(list->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias"});
}

// ---- training -------------------------------------------------------------------------

TEST_CASE("a custom module trains: one SGD step lowers the loss") {
  manual_seed(13);
  Net net;
  Tensor x = randn({16, 4}), target = randn({16, 3});
  auto loss_of = [&] { return mse_loss(net(x), target); };
  Tensor loss = loss_of();
  loss.backward();
  {
    NoGradGuard g;
    for (auto& p : net->parameters()) p.add_(p.grad(), -0.05);
  }
  net->zero_grad();
  CHECK(loss_of().item<double>() < loss.item<double>());
}
