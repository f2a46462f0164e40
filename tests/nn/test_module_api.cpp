// nn::Module's PyTorch-style traversal (named_modules, modules, apply), parameter
// counts, requires_grad_, zero_grad, and weight tying by member assignment through
// parameters / state_dict / save-load / an optimizer step.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

template <class V>
std::vector<std::string> names(const V& v) {
  std::vector<std::string> out;
  for (auto& [n, x] : v) out.push_back(n);
  return out;
}

// The model of the PyTorch reference below: a = Sequential(Linear(2, 2),
// Sequential(GELU(), Linear(2, 1))), b = LayerNorm(2).
struct NestedImpl : nn::Module {
  NestedImpl() : nn::Module("Nested") {
    a = register_module("a", nn::Sequential(nn::Linear(2, 2), nn::Sequential(nn::GELU(), nn::Linear(2, 1))));
    b = register_module("b", nn::LayerNorm(nn::LayerNormOptions({2})));
  }
  nn::Sequential a{nullptr};
  nn::LayerNorm b{nullptr};
};
AG_MODULE(Nested);

// A GPT's tied embedding: logits = wte(ids) @ wte.weight^T, through the head Linear.
// ids (N,) -> (N, C) -> (N, V)
struct TinyLMImpl : nn::Module {
  TinyLMImpl(int64_t V, int64_t C) : nn::Module("TinyLM") {
    wte = register_module("wte", nn::Embedding(V, C));
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({C})));
    head = register_module("head", nn::Linear(nn::LinearOptions(C, V).bias(false)));
    head->weight = wte->weight;  // tying, as PyTorch's `self.head.weight = self.wte.weight`
  }
  Tensor forward(const Tensor& ids) { return head(ln(wte(ids))); }
  nn::Embedding wte{nullptr};
  nn::LayerNorm ln{nullptr};
  nn::Linear head{nullptr};
};
AG_MODULE(TinyLM);

}  // namespace

TEST_CASE("named_modules / modules / apply: PyTorch's names and order") {
  Nested net;
  // torch 1.13: [n for n, _ in N().named_modules()] for the same structure.
  CHECK(names(net->named_modules()) == std::vector<std::string>{"", "a", "a.0", "a.1", "a.1.0", "a.1.1", "b"});
  CHECK(names(net->named_modules("net")) ==
        std::vector<std::string>{"net", "net.a", "net.a.0", "net.a.1", "net.a.1.0", "net.a.1.1", "net.b"});
  auto mods = net->modules();
  REQUIRE(mods.size() == 7);
  CHECK(mods[0].get() == net.ptr().get());
  CHECK(mods[6]->type_name() == "LayerNorm");
  CHECK(names(net->named_children()) == std::vector<std::string>{"a", "b"});
  CHECK(net->children().size() == 2);

  // torch 1.13: N().apply(lambda m: order.append(type(m).__name__)) -> children first.
  std::vector<std::string> order;
  nn::Module& self = net->apply([&](nn::Module& m) { order.push_back(m.type_name()); });
  CHECK(&self == net.ptr().get());
  CHECK(order ==
        std::vector<std::string>{"Linear", "GELU", "Linear", "Sequential", "Sequential", "LayerNorm", "Nested"});

  // apply for custom initialization reaches every Linear.
  net->apply([](nn::Module& m) {
    if (auto* lin = m.as<nn::Linear>()) {  // LibTorch's as<>: holder or Impl type
      nn::init::constant_(lin->weight, 0.5);
      nn::init::zeros_(lin->bias);
    }
  });
  for (auto& [n, p] : net->named_parameters())
    if (n.starts_with("a.")) CHECK(p.sum().item<double>() == (contains(n, "weight") ? 0.5 * p.numel() : 0.0));
}

TEST_CASE("Module::as: the holder or the Impl type, nullptr for another type") {
  Nested net;
  nn::Module& m = *net->a;
  CHECK(m.as<nn::Sequential>() == net->a.ptr().get());
  CHECK(m.as<nn::SequentialImpl>() == net->a.ptr().get());
  CHECK(m.as<nn::Linear>() == nullptr);
  const nn::Module& c = *net->b;
  CHECK(c.as<nn::LayerNorm>() == net->b.ptr().get());
  CHECK(c.as<nn::Linear>() == nullptr);
}

TEST_CASE("named_modules: a shared submodule once (remove_duplicate), a stack module is refused") {
  nn::Linear shared(2, 2);
  nn::Sequential seq(shared, nn::GELU(), shared);
  CHECK(names(seq->named_modules()) == std::vector<std::string>{"", "0", "1"});
  CHECK(names(seq->named_modules("", false)) == std::vector<std::string>{"", "0", "1", "2"});
  CHECK(names(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(names(seq->state_dict()).size() == 4);  // 0.* and 2.*: state_dict keeps every name
  CHECK(seq->num_parameters() == 6);

  nn::Module plain("Plain");
  CHECK(contains(error_of<ValueError>([&] { plain.named_modules(); }), "shared_ptr"));
}

TEST_CASE("num_parameters, requires_grad_, zero_grad") {
  Nested net;
  // a.0: 2*2+2, a.1.1: 2*1+1, b: 2+2
  CHECK(net->num_parameters() == 13);
  CHECK(net->num_parameters(/*trainable_only=*/true) == 13);
  nn::Module& r = net->a->requires_grad_(false);
  CHECK(&r == net->a.ptr().get());
  CHECK(net->num_parameters() == 13);
  CHECK(net->num_parameters(true) == 4);
  for (auto& [n, p] : net->named_parameters()) CHECK(p.requires_grad() == n.starts_with("b."));
  net->requires_grad_();
  CHECK(net->num_parameters(true) == 13);

  Tensor x = randn({3, 2});
  (net->a(x).sum() + net->b(x).sum()).backward();
  for (auto& p : net->parameters()) CHECK(p.grad().defined());
  net->zero_grad();
  for (auto& p : net->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("register_parameter by address: the registry follows the member") {
  nn::Linear lin(3, 2);
  Tensor w = ones({2, 3});
  lin->weight = w;  // plain assignment, as PyTorch's setattr
  auto ps = lin->named_parameters();
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].second.impl() == w.impl());
  lin->bias = Tensor{};  // PyTorch: lin.bias = None
  CHECK(names(lin->named_parameters()) == std::vector<std::string>{"weight"});

  nn::Module m("M");
  CHECK(contains(error_of<ValueError>([&] { m.register_parameter("p", static_cast<Tensor*>(nullptr)); }),
                 "'p' is undefined"));
  // References returned by register_parameter stay valid as more are registered.
  Tensor& first = m.register_parameter("first", zeros({1}));
  for (int i = 0; i < 40; ++i) m.register_parameter("p" + std::to_string(i), zeros({1}));
  CHECK(first.impl() == m.named_parameters().front().second.impl());
}

TEST_CASE("weight tying: parameters once, state_dict both names, counts once") {
  TinyLM lm(5, 3);
  CHECK(lm->head->weight.impl() == lm->wte->weight.impl());
  CHECK(names(lm->named_parameters()) == std::vector<std::string>{"wte.weight", "ln.weight", "ln.bias"});
  CHECK(lm->parameters().size() == 3);
  CHECK(names(lm->named_parameters(true, /*remove_duplicate=*/false)) ==
        std::vector<std::string>{"wte.weight", "ln.weight", "ln.bias", "head.weight"});
  // torch: list(m.state_dict()) == ['wte.weight', 'ln.weight', 'ln.bias', 'head.weight']
  TensorMap sd = lm->state_dict();
  CHECK(sd.size() == 4);
  REQUIRE(sd.contains("head.weight"));
  CHECK(sd.at("head.weight").to_vector<float>() == sd.at("wte.weight").to_vector<float>());
  CHECK(lm->num_parameters() == 5 * 3 + 3 + 3);

  lm->to(DType::f64);  // converts the shared tensor once; the tie holds
  CHECK(lm->head->weight.impl() == lm->wte->weight.impl());
  CHECK(lm->head->weight.dtype() == DType::f64);
}

TEST_CASE("weight tying: save writes both keys, load keeps the tie; the later key wins as in torch") {
  TinyLM a(5, 3), b(5, 3);
  const std::string path = test_util::tmp_dir("module_api", "tied") + "/tied.safetensors";
  nn::save(*a, path);
  TensorMap file = load_safetensors(path);
  CHECK(names(file).size() == 4);
  nn::load(*b, path);
  CHECK(b->head->weight.impl() == b->wte->weight.impl());
  CHECK(b->wte->weight.to_vector<float>() == a->wte->weight.to_vector<float>());

  // Keys that disagree: torch 1.13's load_state_dict copies wte.weight, then
  // head.weight into the same tensor, so head.weight's values remain (checked with
  // torch: the tied weight ends up all ones for {wte: zeros, head: ones}).
  file.insert("wte.weight", zeros({5, 3}));
  file.insert("head.weight", ones({5, 3}));
  b->load_state_dict(file);
  CHECK(b->head->weight.impl() == b->wte->weight.impl());
  CHECK(b->wte->weight.sum().item<double>() == 15.0);

  // strict: a checkpoint without the tied key is missing it, as in torch.
  TensorMap partial;
  for (auto& [n, t] : file)
    if (n != "head.weight") partial.insert(n, t);
  CHECK(contains(error_of<ValueError>([&] { b->load_state_dict(partial); }), "missing keys: [head.weight]"));
  b->load_state_dict(partial, /*strict=*/false);
  CHECK(b->wte->weight.sum().item<double>() == 0.0);
}

TEST_CASE("weight tying: .grad sums both uses; Adam updates the shared tensor once") {
  manual_seed(3);
  TinyLM lm(5, 3);
  lm->to(DType::f64);
  Tensor ids = Tensor::from_vector(std::vector<int64_t>{0, 3, 3, 1});
  Tensor R = randn({4, 5}, DType::f64);  // loss = sum(logits * R)
  Tensor E0 = lm->wte->weight.detach().clone();

  // The same computation with two independent copies of E: their gradients are the
  // contributions of the embedding use and of the head use.
  Tensor e_emb = E0.clone().requires_grad_(true), e_head = E0.clone().requires_grad_(true);
  Tensor h = lm->ln(embedding(ids, e_emb));  // (4, 3)
  (linear(h, e_head) * R).sum().backward();
  Tensor expected_grad = e_emb.grad() + e_head.grad();
  CHECK(abs(e_emb.grad()).sum().item<double>() > 0);
  CHECK(abs(e_head.grad()).sum().item<double>() > 0);

  lm->zero_grad();
  optim::Adam opt(lm->named_parameters(), optim::AdamOptions(0.1));
  (lm(ids) * R).sum().backward();
  Tensor g = lm->wte->weight.grad();
  CHECK(test_util::max_abs_diff(g, expected_grad) < 1e-12);
  // clip_grad_norm_ over parameters() counts the shared gradient once (a stale or
  // duplicate entry would add |g|^2 again).
  auto sq = [](const Tensor& t) { return (t * t).sum().item<double>(); };
  double want_norm = std::sqrt(sq(g) + sq(lm->ln->weight.grad()) + sq(lm->ln->bias.grad()));
  CHECK(optim::clip_grad_norm_(lm->parameters(), 1e9) == doctest::Approx(want_norm).epsilon(1e-12));
  opt.step();
  // Adam's first step: m_hat = g, v_hat = g^2, p -= lr * g / (|g| + eps). A second
  // update of the same tensor (stale duplicate in the list) would move it by 2 lr.
  Tensor want = E0 - 0.1 * g / (abs(g) + 1e-8);
  CHECK(test_util::max_abs_diff(lm->wte->weight, want) < 1e-12);
  CHECK(lm->head->weight.impl() == lm->wte->weight.impl());
}

TEST_CASE("parameters, buffers and submodules share one namespace: a reused name is a KeyError") {
  // PyTorch's register_buffer / register_parameter / add_module: KeyError "attribute 'w'
  // already exists". A buffer named like a parameter used to be accepted: two tensors
  // under one state-dict key, the later silently loaded into both.
  auto m = std::make_shared<nn::Module>("M");
  m->register_parameter("w", ag::zeros(Shape{2}));
  m->register_buffer("running", ag::zeros(Shape{2}));
  m->register_module("child", nn::Linear(2, 2));
  CHECK_THROWS_WITH_AS(
      m->register_buffer("w", ag::ones(Shape{2})),
      doctest::Contains("M: cannot register buffer 'w': attribute 'w' already exists (as a parameter)"), ag::KeyError);
  CHECK_THROWS_WITH_AS(m->register_parameter("running", ag::ones(Shape{2})),
                       doctest::Contains("attribute 'running' already exists (as a buffer)"), ag::KeyError);
  CHECK_THROWS_WITH_AS(m->register_buffer("child", ag::ones(Shape{2})),
                       doctest::Contains("attribute 'child' already exists (as a submodule)"), ag::KeyError);
  CHECK_THROWS_WITH_AS(m->register_module("w", nn::Linear(2, 2)),
                       doctest::Contains("attribute 'w' already exists (as a parameter)"), ag::KeyError);
  Tensor member = ag::zeros(Shape{2});
  CHECK_THROWS_AS(m->register_buffer("w", &member), ag::KeyError);
  // The same kind twice stays the ValueError it was.
  CHECK_THROWS_WITH_AS(m->register_parameter("w", ag::ones(Shape{2})), doctest::Contains("is already registered"),
                       ag::ValueError);
  // Nothing was added by the refused calls.
  CHECK(names(m->state_dict()) == std::vector<std::string>{"w", "running", "child.weight", "child.bias"});
}

TEST_CASE("apply with an empty function is a ValueError, not std::bad_function_call") {
  Nested net;
  CHECK_THROWS_WITH_AS(net->apply(nullptr), doctest::Contains("Nested.apply: the function is empty"), ag::ValueError);
}

TEST_CASE("bf16 / f16: Module::to swaps floating params; a bf16 file loads into f32 or bf16 modules") {
  manual_seed(5);
  nn::Linear lin(3, 2);
  const std::vector<float> w32 = lin->weight.to_vector<float>();
  const std::string path = test_util::tmp_dir("module_api", "half") + "/bf16.safetensors";
  lin->to(DType::bf16);  // PyTorch's module.bfloat16(): every floating param and buffer
  CHECK(lin->weight.dtype() == DType::bf16);
  CHECK(lin->bias.dtype() == DType::bf16);
  CHECK(lin->parameters().size() == 2);
  nn::save(*lin, path);
  CHECK(load_safetensors(path).at("weight").dtype() == DType::bf16);  // saved as BF16
  // Into an f32 module: load_state_dict copies into the module's own dtype (as
  // torch's param.copy_), so the bf16 values arrive exactly, as f32.
  nn::Linear f32(3, 2);
  nn::load(*f32, path);
  CHECK(f32->weight.dtype() == DType::f32);
  CHECK(f32->weight.to_vector<float>() == lin->weight.to_vector<float>());
  std::vector<float> rounded;
  for (float v : w32) rounded.push_back(BFloat16(v));
  CHECK(f32->weight.to_vector<float>() == rounded);
  // Keeping bf16: convert the module first (the explicit request), then load.
  nn::Linear keep(3, 2);
  keep->to(DType::f16);
  keep->to(DType::bf16);
  nn::load(*keep, path);
  CHECK(keep->weight.dtype() == DType::bf16);
  CHECK(keep->weight.to_vector<float>() == rounded);
  // A bf16 module computes in f32 and rounds each op's result to bf16 (PyTorch's CPU rule).
  Tensor y = keep->forward(ones({1, 3}, DType::bf16));
  CHECK(y.dtype() == DType::bf16);
  Tensor want = ag::matmul(ones({1, 3}), keep->weight.to(DType::f32).t()) + keep->bias.to(DType::f32);
  CHECK(allclose(y.to(DType::f32), want, 1.0 / 128, 1.0 / 128));
}

namespace {
// forward of two tensors, for the checkpoint overloads below.
struct ScaleByImpl : ag::nn::Module {
  ScaleByImpl() : ag::nn::Module("ScaleBy") { w = register_parameter("w", ag::full({3}, 2.0)); }
  ag::Tensor forward(const ag::Tensor& x, const ag::Tensor& y) { return x * w + y; }
  ag::Tensor w;
};
AG_MODULE(ScaleBy);
}  // namespace

TEST_CASE("ag::checkpoint(module, x) and (module, x, y) take a module holder, as torch's checkpoint(block, x)") {
  // The holder's operator() was unconstrained: std::function's constructor asked whether
  // it takes a std::vector<Tensor> and instantiated its body, which did not compile.
  ag::manual_seed(1);
  ag::nn::Linear lin(3, 2);
  const ag::Tensor x = ag::randn({4, 3}).requires_grad_(), y = ag::randn({4, 3});
  const ag::Tensor a = ag::checkpoint(lin, x);
  CHECK(ag::all(ag::eq(a, lin(x))).item<bool>());
  ScaleBy two;
  const ag::Tensor b = ag::checkpoint(two, x, y);
  CHECK(ag::all(ag::eq(b, two(x, y))).item<bool>());
  b.sum().backward();
  CHECK(ag::all(ag::eq(two->w.grad(), x.detach().sum({0}))).item<bool>());
  static_assert(!std::is_invocable_v<ag::nn::Linear&, const std::vector<ag::Tensor>&>);
  static_assert(std::is_invocable_v<ScaleBy&, const ag::Tensor&, const ag::Tensor&>);
}

TEST_CASE("zero_grad(set_to_none): drop the .grad (default, PyTorch 2.x) or zero it in place") {
  ag::nn::Linear lin(3, 2);
  ag::optim::SGD opt(lin->parameters(), ag::optim::SGDOptions(0.1));
  lin(ag::ones({1, 3})).sum().backward();
  const ag::Tensor g = lin->weight.grad();
  lin->zero_grad(false);
  CHECK(lin->weight.grad().defined());
  CHECK(lin->weight.grad().data<float>() == g.data<float>());  // the same buffer, zeroed
  CHECK(ag::all(ag::eq(lin->weight.grad(), 0.0)).item<bool>());
  lin(ag::ones({1, 3})).sum().backward();  // accumulates into the zeros
  CHECK(ag::all(ag::eq(lin->weight.grad(), 1.0)).item<bool>());
  opt.zero_grad(false);
  CHECK(ag::all(ag::eq(lin->bias.grad(), 0.0)).item<bool>());
  opt.zero_grad();
  CHECK(!lin->weight.grad().defined());
  // a create_graph gradient is kept as values only
  auto gw = ag::grad({(lin->weight * lin->weight).sum()}, {lin->weight}, {}, false, true);
  lin->weight.set_grad(gw[0]);
  CHECK(!lin->weight.grad().is_leaf());
  lin->zero_grad(false);
  CHECK(lin->weight.grad().is_leaf());
  CHECK(!lin->weight.grad().requires_grad());
}
