// nn: the Module system (registration, dotted names, train/eval, to(), state dicts,
// printing, holders, containers), the basic layers against hand-computed values, and
// save / load through safetensors.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <cmath>
#include <filesystem>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ag;

using test_util::contains;
using test_util::error_of;

namespace {

std::string tmp_path(const std::string& name) {
  fs::path dir = fs::path(AG_TMP_DIR) / "nn";
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> names(const std::vector<std::pair<std::string, Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& [n, t] : v) out.push_back(n);
  return out;
}

bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.to_vector<double>() == b.to_vector<double>();
}

// ---- a custom module, written as a user would -----------------------------------
// x (B, 4) -> Linear(4, 8) -> ReLU -> Linear(8, 3) -> LayerNorm(3) -> * scale
struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    layers = register_module("layers", nn::ModuleList());
    layers->push_back(nn::Linear(4, 8));
    layers->push_back(nn::Linear(nn::LinearOptions(8, 3).bias(false)));
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({3})));
    scale = register_parameter("scale", full({3}, 2.0));
    steps = register_buffer("steps", zeros({1}, DType::i64));
    running = register_buffer("running", zeros({3}));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = relu(layers->at<nn::LinearImpl>(0)->forward(x));
    y = layers->at<nn::LinearImpl>(1)->forward(y);
    return norm(y) * scale;
  }

  nn::ModuleList layers{nullptr};
  nn::LayerNorm norm{nullptr};
  Tensor scale;    // (3)
  Tensor steps;    // (1) i64 buffer
  Tensor running;  // (3) f32 buffer
};
AG_MODULE(Net);

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

  // state_dict: parameters then buffers, all by dotted name, detached.
  TensorMap sd = net->state_dict();
  std::vector<std::string> keys;
  for (auto& [k, t] : sd) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"scale", "layers.0.weight", "layers.0.bias", "layers.1.weight", "norm.weight",
                                         "norm.bias", "steps", "running"});
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

// ---- state dicts --------------------------------------------------------------------

TEST_CASE("load_state_dict converts an f32 checkpoint into an f64 module") {
  manual_seed(2);
  Net src;
  manual_seed(3);
  Net dst;
  dst->to(DType::f64);
  dst->load_state_dict(src->state_dict());
  for (auto& n_p : dst->named_parameters()) {
    auto& n = n_p.first;
    auto& p = n_p.second;
    INFO(n);
    CHECK(p.dtype() == DType::f64);
    CHECK(p.to_vector<double>() == src->state_dict().at(n).to_vector<double>());
  }
  CHECK(dst->running.dtype() == DType::f64);
  Tensor x = randn({2, 4});
  CHECK(allclose(dst(x.to(DType::f64)), src(x).to(DType::f64), 1e-5, 1e-5));
}

TEST_CASE("load_state_dict: a shape mismatch names the key and both shapes and changes nothing") {
  manual_seed(4);
  Net net;
  TensorMap before = net->state_dict();
  std::vector<std::vector<double>> values;
  for (auto& [k, t] : before) values.push_back(t.clone().to_vector<double>());

  TensorMap bad;
  for (auto& [k, t] : before) bad.insert(k, zeros_like(t));  // would zero everything...
  bad.insert("layers.1.weight", zeros({3, 7}));              // ...but one shape is wrong
  std::string msg = error_of<ShapeError>([&] { net->load_state_dict(bad); });
  CHECK(contains(msg, "layers.1.weight"));
  CHECK(contains(msg, "[3, 7]"));
  CHECK(contains(msg, "[3, 8]"));
  std::size_t i = 0;
  for (auto& k_t : net->state_dict()) {
    auto& k = k_t.first;
    auto& t = k_t.second;
    INFO(k);
    CHECK(t.to_vector<double>() == values[i++]);  // untouched, even keys before the bad one
  }
}

TEST_CASE("load_state_dict: strict lists missing and unexpected keys in one error; non-strict ignores them") {
  manual_seed(5);
  Net net;
  TensorMap sd;
  for (auto& [k, t] : net->state_dict())
    if (k != "norm.bias" && k != "layers.0.bias") sd.insert(k, full_like(t, 0.5));
  sd.insert("layers.2.weight", zeros({3, 3}));
  sd.insert("extra", zeros({1}));

  std::vector<double> bias0 = net->layers->at<nn::LinearImpl>(0)->bias.to_vector<double>();
  std::string msg = error_of<ValueError>([&] { net->load_state_dict(sd); });
  CHECK(contains(msg, "missing keys"));
  CHECK(contains(msg, "norm.bias"));
  CHECK(contains(msg, "layers.0.bias"));
  CHECK(contains(msg, "unexpected keys"));
  CHECK(contains(msg, "layers.2.weight"));
  CHECK(contains(msg, "extra"));
  CHECK(net->scale.to_vector<double>() == std::vector<double>{2.0, 2.0, 2.0});  // nothing loaded

  net->load_state_dict(sd, /*strict=*/false);
  CHECK(net->scale.to_vector<double>() == std::vector<double>{0.5, 0.5, 0.5});
  CHECK(net->layers->at<nn::LinearImpl>(1)->weight.to_vector<double>() == std::vector<double>(24, 0.5));
  CHECK(net->layers->at<nn::LinearImpl>(0)->bias.to_vector<double>() == bias0);  // missing: kept
  CHECK(net->norm->bias.to_vector<double>() == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("save / load round trip through safetensors") {
  const std::string path = tmp_path("net.safetensors");
  manual_seed(6);
  Net a;
  {
    NoGradGuard g;
    a->running.copy_(Tensor::from_vector<float>({1.5f, -2.0f, 3.25f}));
    a->steps.fill_(7);
  }
  nn::save(*a, path);
  manual_seed(7);
  Net b;
  CHECK_FALSE(same_values(a->layers->at<nn::LinearImpl>(0)->weight, b->layers->at<nn::LinearImpl>(0)->weight));
  nn::load(*b, path);
  for (auto& k_t : a->state_dict()) {
    auto& k = k_t.first;
    auto& t = k_t.second;
    INFO(k);
    CHECK(b->state_dict().at(k).dtype() == t.dtype());
    CHECK(same_values(b->state_dict().at(k), t));
  }
  CHECK(b->steps.to_vector<int64_t>() == std::vector<int64_t>{7});
  Tensor x = randn({4, 4});
  CHECK(same_values(a(x), b(x)));
  // the file is a plain safetensors file with PyTorch-style keys
  TensorMap raw = load_safetensors(path);
  CHECK(raw.contains("layers.0.weight"));
  CHECK(raw.at("layers.0.weight").shape() == Shape({8, 4}));

  // a module of another shape refuses the file and stays as it was
  struct Other : nn::Module {
    Other() : nn::Module("Other") { lin = register_module("lin", nn::Linear(2, 2)); }
    nn::Linear lin{nullptr};
  } other;
  CHECK_THROWS_AS(nn::load(other, path), ValueError);
  nn::load(other, path, /*strict=*/false);  // nothing in common: a no-op
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

// ---- layers -----------------------------------------------------------------------------

TEST_CASE("Linear: shapes, PyTorch's default init bounds, bias(false)") {
  manual_seed(9);
  nn::Linear lin(16, 40);
  CHECK(lin->weight.shape() == Shape({40, 16}));  // (out, in)
  CHECK(lin->bias.shape() == Shape({40}));
  CHECK(lin->weight.dtype() == DType::f32);
  const double bound = 1.0 / std::sqrt(16.0);  // 0.25
  double wmax = 0, bmax = 0;
  for (double v : lin->weight.to_vector<double>()) wmax = std::max(wmax, std::abs(v));
  for (double v : lin->bias.to_vector<double>()) bmax = std::max(bmax, std::abs(v));
  CHECK(wmax <= bound);
  CHECK(wmax > 0.9 * bound);  // 640 draws of U(-0.25, 0.25) reach close to the edge
  CHECK(bmax <= bound);
  CHECK(bmax > 0.5 * bound);

  nn::Linear nb(nn::LinearOptions(4, 2).bias(false));
  CHECK_FALSE(nb->bias.defined());
  CHECK(names(nb->named_parameters()) == std::vector<std::string>{"weight"});
  CHECK(nb(randn({7, 3, 4})).shape() == Shape({7, 3, 2}));  // (..., in) -> (..., out)
  CHECK_THROWS_AS(nn::Linear(0, 3), ValueError);
  CHECK_THROWS_AS(lin(randn({2, 15})), ShapeError);
}

TEST_CASE("Linear: forward equals x @ W^T + b computed by hand, and its gradients") {
  manual_seed(10);
  nn::Linear lin(3, 2);
  lin->to(DType::f64);
  Tensor x = randn({2, 2, 3}, DType::f64).requires_grad_();  // (B, T, in)
  Tensor y = lin(x);
  REQUIRE(y.shape() == Shape({2, 2, 2}));
  auto xv = x.to_vector<double>(), wv = lin->weight.to_vector<double>(), bv = lin->bias.to_vector<double>();
  auto yv = y.to_vector<double>();
  for (int r = 0; r < 4; ++r)
    for (int o = 0; o < 2; ++o) {
      double want = bv[o];
      for (int i = 0; i < 3; ++i) want += xv[r * 3 + i] * wv[o * 3 + i];
      CHECK(yv[r * 2 + o] == doctest::Approx(want).epsilon(1e-14));
    }
  // loss = sum(y): dW[o][i] = sum_r x[r][i], db[o] = rows, dx[r][i] = sum_o W[o][i]
  y.sum().backward();
  auto gw = lin->weight.grad().to_vector<double>(), gb = lin->bias.grad().to_vector<double>();
  auto gx = x.grad().to_vector<double>();
  for (int o = 0; o < 2; ++o) {
    CHECK(gb[o] == doctest::Approx(4.0));
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int r = 0; r < 4; ++r) s += xv[r * 3 + i];
      CHECK(gw[o * 3 + i] == doctest::Approx(s).epsilon(1e-14));
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 3; ++i) CHECK(gx[r * 3 + i] == doctest::Approx(wv[i] + wv[3 + i]).epsilon(1e-14));
}

TEST_CASE("Embedding: lookup, padding_idx row zero with no gradient, out-of-range ids") {
  manual_seed(11);
  nn::Embedding emb(nn::EmbeddingOptions(6, 3).padding_idx(2));
  CHECK(emb->weight.shape() == Shape({6, 3}));
  CHECK(emb->weight.select(0, 2).to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(emb->weight.select(0, 1).to_vector<double>() != std::vector<double>{0, 0, 0});

  Tensor ids = Tensor::from_vector<int64_t>({1, 2, 5, 1, 2, 0}, Shape{2, 3});
  Tensor y = emb(ids);
  CHECK(y.shape() == Shape({2, 3, 3}));
  CHECK(same_values(y.select(0, 0).select(0, 2), emb->weight.select(0, 5)));
  CHECK(y.select(0, 1).select(0, 1).to_vector<double>() == std::vector<double>{0, 0, 0});

  (y * (y.detach() + 1.0)).sum().backward();  // nonzero upstream everywhere
  Tensor g = emb->weight.grad();
  CHECK(g.select(0, 2).to_vector<double>() == std::vector<double>{0, 0, 0});  // padding
  CHECK(g.select(0, 3).to_vector<double>() == std::vector<double>{0, 0, 0});  // unused
  for (double v : g.select(0, 1).to_vector<double>()) CHECK(v != 0.0);        // used twice

  // negative padding_idx counts from the end, as in PyTorch
  nn::Embedding last(nn::EmbeddingOptions(4, 2).padding_idx(-1));
  CHECK(*last->options.padding_idx() == 3);
  CHECK(last->weight.select(0, 3).to_vector<double>() == std::vector<double>{0, 0});

  std::string msg = error_of<IndexError>([&] { emb(Tensor::from_vector<int64_t>({0, 6})); });
  CHECK(contains(msg, "6"));
  CHECK_THROWS_AS(emb(Tensor::from_vector<int64_t>({-1})), IndexError);
  CHECK_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), IndexError);
  CHECK_THROWS_AS(emb(Tensor::from_vector<double>({1.0})), DTypeError);
}

TEST_CASE("LayerNorm: weight ones, bias zeros, normalized rows") {
  manual_seed(12);
  nn::LayerNorm ln(nn::LayerNormOptions({16}));
  CHECK(ln->weight.to_vector<double>() == std::vector<double>(16, 1.0));
  CHECK(ln->bias.to_vector<double>() == std::vector<double>(16, 0.0));
  Tensor x = randn({4, 5, 16}) * 3.0 + 7.0;
  Tensor y = ln(x);
  CHECK(y.shape() == x.shape());
  auto m = mean(y, {-1}).to_vector<double>();
  auto v = var(y, {-1}, /*correction=*/0).to_vector<double>();
  for (double e : m) CHECK(std::abs(e) < 1e-5);
  for (double e : v) CHECK(e == doctest::Approx(1.0).epsilon(1e-3));  // eps 1e-5 against var ~9

  nn::LayerNorm plain(nn::LayerNormOptions({16}).elementwise_affine(false));
  CHECK(plain->parameters().empty());
  CHECK(allclose(plain(x), y, 1e-5, 1e-6));
  nn::LayerNorm nobias(nn::LayerNormOptions({16}).bias(false));
  CHECK(names(nobias->named_parameters()) == std::vector<std::string>{"weight"});
}

TEST_CASE("Dropout: train vs eval, p = 0, fraction zeroed and scale") {
  Generator gen(123);
  nn::Dropout drop(nn::DropoutOptions(0.3));
  drop->generator = &gen;
  Tensor x = ones({200, 500});  // 100,000 elements
  Tensor y = drop(x);
  auto v = y.to_vector<double>();
  int64_t zeros_n = 0, wrong_scale = 0;  // kept values are scaled by 1 / (1 - p)
  for (double e : v) {
    if (e == 0.0)
      ++zeros_n;
    else if (std::abs(e - 1.0 / 0.7) > 1e-6)
      ++wrong_scale;
  }
  CHECK(wrong_scale == 0);
  double frac = double(zeros_n) / double(v.size());
  CHECK(frac == doctest::Approx(0.3).epsilon(0.03));  // sd of the fraction is 0.0014
  CHECK(mean(y).item<double>() == doctest::Approx(1.0).epsilon(0.02));

  drop->eval();
  CHECK(same_values(drop(x), x));
  drop->train();
  nn::Dropout none(0.0);
  Tensor r = randn({10, 10});
  CHECK(same_values(none(r), r));
  CHECK_THROWS_AS(nn::Dropout(1.5), ValueError);

  // dropout in a Sequential follows the container's mode
  nn::Sequential seq(nn::Linear(4, 4), nn::Dropout(0.5));
  seq->eval();
  Tensor z = randn({3, 4});
  CHECK(same_values(seq(z), seq(z)));
}

TEST_CASE("ReLU and GELU modules") {
  Tensor x = Tensor::from_vector<double>({-2.0, -0.5, 0.5, 1.0});
  nn::ReLU relu_m;
  CHECK(relu_m(x).to_vector<double>() == std::vector<double>{0.0, 0.0, 0.5, 1.0});
  nn::GELU g;
  nn::GELU g_tanh{nn::GELUOptions(GeluApprox::tanh)};  // braces: clang reads parentheses as a declaration
  auto exact = g(x).to_vector<double>(), approx = g_tanh(x).to_vector<double>();
  // x * Phi(x): Phi(1) = 0.841344746068543, Phi(-2) = 0.0227501319481792
  CHECK(exact[3] == doctest::Approx(0.841344746068543).epsilon(1e-12));
  CHECK(exact[0] == doctest::Approx(-2.0 * 0.0227501319481792).epsilon(1e-12));
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) at 1
  CHECK(approx[3] == doctest::Approx(0.5 * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * 1.044715))).epsilon(1e-12));
  CHECK(exact[3] != approx[3]);
}

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
