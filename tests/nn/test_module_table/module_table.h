#pragma once
// The module table: one line per public module of the nn API (each X of AG_MODULE(X) in
// nn/include/attograd/nn/*.h), as tests/ops/op_table/ is for ops. The lines live in
// tests/nn/test_module_table/<family>.cpp, registered with AG_MODULE_TABLE(<family>);
// tests/nn/test_module_table.cpp runs each line, as applies to its module:
//   1. its options' defaults equal torch.nn's constructor defaults;
//   2. forward on small float64 inputs gives the expected output shapes;
//   3. printing equals PyTorch's repr for the same configuration, once the line's
//      listed differences are applied to PyTorch's text;
//   4. its state-dict keys and shapes equal PyTorch's, and state_dict -> a fresh module
//      -> load_state_dict gives the same state and outputs;
//   5. gradcheck (float64) of the inputs' gradients through the module;
//   6. train/eval: eval output deterministic and equal to the line's reference.
// PyTorch's side (1-4) is tests/fixtures/module_table/expected.json, written by
// tools/fixtures/module_table.py with the same configurations; modules PyTorch 1.13 lacks
// have attograd-only expectations in their line (`repr`, `state`, `torch_defaults`).
// Adding a module adds one line here and, if PyTorch has it, one entry in that script.
#include <attograd/attograd.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace module_table {
using namespace ag;
using Json = nlohmann::json;
using Tensors = std::vector<Tensor>;

// ---- a line's module and how to call it -----------------------------------------------
// The module, and its forward on the line's inputs with every Tensor result listed
// (an undefined one, such as MultiheadAttention's weights without need_weights, left out).
struct Made {
  std::shared_ptr<nn::Module> module;
  std::function<Tensors(const Tensors&)> forward;  // empty: no forward (ModuleList, ...)
};

inline void flat(Tensors& v, const Tensor& t) {
  if (t.defined()) v.push_back(t);
}
template <class A, class B>
void flat(Tensors& v, const std::pair<A, B>& p);
template <class... T>
void flat(Tensors& v, const std::tuple<T...>& t);
template <class A, class B>
void flat(Tensors& v, const std::pair<A, B>& p) {
  flat(v, p.first);
  flat(v, p.second);
}
template <class... T>
void flat(Tensors& v, const std::tuple<T...>& t) {
  std::apply([&v](const auto&... e) { (flat(v, e), ...); }, t);
}
// Every Tensor of a forward's result, in order.
template <class R>
Tensors outs(const R& r) {
  Tensors v;
  flat(v, r);
  return v;
}

// A holder and its call: bind(nn::GRUCell(3, 4), [](auto& m, auto& x) { return m(x[0]); }).
template <class H, class F>
Made bind(H h, F f) {
  return {h.ptr(), [h, f](const Tensors& x) { return outs(f(h, x)); }};
}
// The usual call, m(x[0]).
template <class H>
Made unary(H h) {
  return bind(h, [](const H& m, const Tensors& x) { return m(x[0]); });
}
// Two inputs, m(x[0], x[1]): losses, CosineSimilarity, decoders.
template <class H>
Made binary(H h) {
  return bind(h, [](const H& m, const Tensors& x) { return m(x[0], x[1]); });
}
// Three, m(x[0], x[1], x[2]): attention's query, key, value.
template <class H>
Made ternary(H h) {
  return bind(h, [](const H& m, const Tensors& x) { return m(x[0], x[1], x[2]); });
}
// A module without a forward (ModuleList, ModuleDict, ParameterList, ParameterDict).
template <class H>
Made no_forward(H h) {
  return {h.ptr(), {}};
}

// ---- inputs -------------------------------------------------------------------------------
// Input i of a line (values only; the runner sets requires_grad on the differentiable ones).
using Init = Tensor (*)(std::size_t i, const Shape& shape, Generator& rng);
inline Tensor normal(std::size_t, const Shape& s, Generator& rng) { return randn(s, DType::f64, &rng); }
// Probabilities and BCE's targets: U[0.1, 0.9).
inline Tensor probs(std::size_t, const Shape& s, Generator& rng) { return uniform(s, 0.1, 0.9, DType::f64, &rng); }
// Class indices or token ids in [0, N), i64.
template <int64_t N>
Tensor ids(std::size_t, const Shape& s, Generator& rng) {
  std::vector<int64_t> v(static_cast<std::size_t>(numel(s)));
  for (auto& e : v) e = rng.integer(0, N);
  return Tensor::from_vector(v, s);
}

// ---- lines ------------------------------------------------------------------------------
// A known difference from PyTorch's repr: torch's text, and attograd's in its place
// (every occurrence, applied in order). The runner checks that torch's text is there, so a
// difference fixed in the library fails its line until the mark is removed.
struct Diff {
  const char* torch;
  const char* ours;
};
enum class Grad { train, eval, none };  // gradcheck in training mode, in eval mode (dropout inside), or not
using Eval = std::function<Tensors(const Made&, const Tensors&)>;

struct Line {
  const char* name;                // the module's AG_MODULE name first; other words name the case
  std::function<Made()> make;      // a fresh module of the line's configuration
  std::vector<Shape> inputs = {};  // forward's inputs
  std::vector<Shape> outputs = {};
  std::vector<Init> init = {};                  // per input (normal when missing or null)
  std::size_t grad_inputs = 99;                 // inputs [0, grad_inputs) that are f64 get gradients
  Grad grad = Grad::train;                      // gradcheck (say why beside Grad::none)
  std::function<Json()> defaults{};             // the options' defaults under torch's argument names
  std::vector<Diff> diffs = {};                 // printing: torch's repr with these applied is ours
  std::vector<const char*> default_diffs = {};  // defaults that differ from torch's (marked)
  bool order_differs = false;                   // same state-dict keys as torch's, another order (marked)
  Eval eval_ref{};                              // train/eval: the expected eval outputs (see below)
  // The entry of expected.json to compare with: "" for the line's own name; for a module
  // PyTorch lacks, a related torch module (a tensor-parallel stack: the full one), or
  // nullptr with the attograd-only expectations below.
  const char* torch = "";
  const char* repr = nullptr;                          // attograd-only: the printing
  std::vector<std::pair<std::string, Shape>> state{};  // attograd-only: keys and shapes
  std::function<Json()> torch_defaults{};              // attograd-only: PyTorch 2.x's defaults, where it has one
  const char* family = "";                             // set by the registry
};

// Registers a family's lines; test_module_table.cpp runs all of them.
struct Family {
  Family(const char* name, std::vector<Line> (*make)());
};
// AG_MODULE_TABLE(loss) { return {...lines...}; } in tests/nn/test_module_table/loss.cpp.
#define AG_MODULE_TABLE(family) \
  static std::vector<module_table::Line> module_table_##family(); \
  static const module_table::Family module_table_family_##family(#family, module_table_##family); \
  static std::vector<module_table::Line> module_table_##family()

// Every registered line, families in name order.
const std::vector<Line>& all();

// ---- train/eval references ----------------------------------------------------------------
// What the eval output must equal: the input itself (dropout).
inline Tensors identity(const Made&, const Tensors& x) { return {x[0]}; }
// The same computation without dropout: make_ref() (dropout 0, kept in training mode)
// loaded with the module's state, on the same inputs.
inline Eval without_dropout(std::function<Made()> make_ref) {
  return [make_ref](const Made& m, const Tensors& x) {
    Made r = make_ref();
    r.module->to(DType::f64);
    r.module->load_state_dict(m.module->state_dict());
    return r.forward(x);
  };
}
// (x - running_mean) / sqrt(running_var + eps) * weight + bias per channel (dim 1):
// BatchNorm's, SyncBatchNorm's and tracked InstanceNorm's eval.
template <class Impl>
Tensors running_stats_formula(const Made& m, const Tensors& x) {
  const auto* n = m.module->as<Impl>();
  std::vector<int64_t> dims(static_cast<std::size_t>(x[0].dim()), 1);
  dims[1] = x[0].size(1);
  const Shape s(dims);
  Tensor y = (x[0] - n->running_mean.reshape(s)) / sqrt(n->running_var.reshape(s) + n->options.eps());
  if (n->options.affine()) y = y * n->weight.reshape(s) + n->bias.reshape(s);
  return {y};
}

// ---- defaults -------------------------------------------------------------------------------
// A per-dim size as torch's default shows it: one value for every dim.
inline Json one(const std::vector<int64_t>& v) { return v.size() == 1 ? Json(v[0]) : Json(v); }
template <class T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}
inline Json opt(const Tensor& t) { return t.defined() ? Json("<tensor>") : Json(nullptr); }
inline const char* reduction(Reduction r) {
  return r == Reduction::mean ? "mean" : r == Reduction::sum ? "sum" : "none";
}

// PyTorch's repr differences that recur: attograd prints C++'s booleans, and its
// Dropout without `inplace`.
inline constexpr Diff kTrue{"True", "true"};
inline constexpr Diff kFalse{"False", "false"};
inline constexpr Diff kInplace{", inplace=False", ""};

}  // namespace module_table
