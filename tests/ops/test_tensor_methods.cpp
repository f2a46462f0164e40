// The method forms of ag::Tensor (attograd/detail/tensor_method_decls.inl): the table of
// checks (tests/ops/tensor_method_checks.cpp), one per method name, each calling the
// method and the free function it forwards to on the same inputs and comparing values
// (and for a few, gradients); the in-place forms; and the coverage check: every public op (tests/ops/public_ops.h) whose name is a torch.Tensor
// method (tests/fixtures/torch_tensor_methods.txt, tools/make_torch_method_list.py) has a
// line here, or a reason in kNotMethods. A new op that PyTorch has as a method fails
// that check until it gets its method form.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "public_ops.h"
#include "tensor_method_checks.h"

using ag::Tensor;

using tm_checks::checks;
using tm_checks::X;
using tm_checks::Y;

namespace {

// Public ops that torch.Tensor has as a method, but that have no method form here, and
// why. Empty for now: every one has its method (keep a reason per name when one is added).
const std::map<std::string, std::string> kNotMethods = {};

std::set<std::string> torch_tensor_methods() {
  std::ifstream in(std::string(AG_FIXTURES_DIR) + "/torch_tensor_methods.txt");
  REQUIRE_MESSAGE(in, "tests/fixtures/torch_tensor_methods.txt is missing (tools/make_torch_method_list.py)");
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.insert(line);
  return names;
}

}  // namespace

TEST_CASE("tensor methods: each method form agrees with its free function") {
  for (const auto& entry : checks()) {
    INFO("method ", entry.first);
    entry.second();
  }
}

TEST_CASE("tensor methods: every public op that is a torch.Tensor method has its method form") {
  const std::set<std::string> torch_methods = torch_tensor_methods();
  REQUIRE(torch_methods.size() > 500);  // the fixture was read (596 names with torch 1.13)
  REQUIRE(torch_methods.count("softmax"));
  const std::set<std::string> ops = test_ops::public_ops();
  REQUIRE(ops.count("matmul"));
  int needed = 0;
  for (const auto& op : ops) {
    if (!torch_methods.count(op)) continue;
    ++needed;
    CHECK_MESSAGE((checks().count(op) || kNotMethods.count(op)), "ag::", op,
                  " is a torch.Tensor method: add its method form to attograd/detail/tensor_method_decls.inl and a "
                  "line to checks() in tests/ops/tensor_method_checks.cpp (or a reason to kNotMethods)");
  }
  for (const auto& entry : kNotMethods) {  // no stale exclusions
    CHECK_MESSAGE(ops.count(entry.first), "kNotMethods: ", entry.first, " is not a public op");
    CHECK_MESSAGE(!checks().count(entry.first), "kNotMethods: ", entry.first, " has a method form after all");
  }
  // Every line but div's extra one names a torch.Tensor method.
  for (const auto& entry : checks())
    if (entry.first != "div_rounding")
      CHECK_MESSAGE(torch_methods.count(entry.first), entry.first, " is not a torch.Tensor method name");
  MESSAGE(ops.size(), " public ops, ", needed, " of them torch.Tensor methods; ", checks().size(),
          " method lines checked, ", kNotMethods.size(), " exclusions");
}

TEST_CASE("tensor methods: in-place forms agree with the out-of-place ops") {
  // Outside the graph: the value written equals the op's.
#define INPLACE(name) \
  { \
#name "_", [](Tensor & t) -> Tensor& { return t.name##_(); }, [](const Tensor& t) { return ag::name(t); } \
  }
  struct Case {
    const char* name;
    std::function<Tensor&(Tensor&)> inplace;
    std::function<Tensor(const Tensor&)> op;
  };
  const std::vector<Case> cases = {
      INPLACE(abs),
      INPLACE(sign),
      INPLACE(square),
      INPLACE(sqrt),
      INPLACE(rsqrt),
      INPLACE(exp2),
      INPLACE(expm1),
      INPLACE(log),
      INPLACE(log2),
      INPLACE(log10),
      INPLACE(log1p),
      INPLACE(sin),
      INPLACE(cos),
      INPLACE(tan),
      INPLACE(asin),
      INPLACE(acos),
      INPLACE(atan),
      INPLACE(sinh),
      INPLACE(cosh),
      INPLACE(asinh),
      INPLACE(atanh),
      INPLACE(erf),
      INPLACE(floor),
      INPLACE(ceil),
      INPLACE(round),
      INPLACE(trunc),
      INPLACE(frac),
      {"acosh_", [](Tensor& t) -> Tensor& { return t.add_(1.0).acosh_(); },
       [](const Tensor& t) { return ag::acosh(ag::add(t, 1.0)); }},
      {"pow_", [](Tensor& t) -> Tensor& { return t.pow_(3); }, [](const Tensor& t) { return ag::pow(t, 3); }},
      {"pow_ tensor", [](Tensor& t) -> Tensor& { return t.pow_(Y()); },
       [](const Tensor& t) { return ag::pow(t, Y()); }},
      {"tril_", [](Tensor& t) -> Tensor& { return t.tril_(1); }, [](const Tensor& t) { return ag::tril(t, 1); }},
      {"triu_", [](Tensor& t) -> Tensor& { return t.triu_(); }, [](const Tensor& t) { return ag::triu(t); }},
  };
#undef INPLACE
  for (const Case& c : cases) {
    INFO(c.name);
    Tensor t = X();
    Tensor& r = c.inplace(t);
    CHECK(&r == &t);
    CHECK(tc::diff(t, c.op(X())) == "");
  }
  // Inside the graph: self becomes the op's result, and the gradient flows through it.
  Tensor a = X().requires_grad_();
  Tensor h = ag::mul(a, 1.0);
  h.sqrt_().pow_(3);
  ag::sum(h).backward();
  Tensor b = X().requires_grad_();
  ag::sum(ag::pow(ag::sqrt(b), 3)).backward();
  CHECK(tc::diff(a.grad(), b.grad(), 1e-15) == "");
  CHECK_THROWS_AS(X().requires_grad_().sqrt_(), ag::AutogradError);  // a leaf that requires grad
}
