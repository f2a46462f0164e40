// AdamW's weight decay defaults to 1e-2 on every construction path, as in PyTorch and
// LibTorch (it used to be 0 for AdamW(params, 1e-3) and AdamW(params, AdamOptions(lr))).
// The effective decay is measured: with a zero gradient Adam's step is 0, so one step
// leaves p * (1 - lr * weight_decay).
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/optim.h>

#include <type_traits>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Tensor;
namespace optim = ag::optim;

namespace {

Tensor param() { return Tensor::from_vector(std::vector<double>{2.0, -4.0}).requires_grad_(); }

// p after one step with a zero gradient, divided by p before: 1 - lr * wd (AdamW), 1 (Adam).
double shrink(optim::Optimizer& opt, Tensor& p) {
  p.set_grad(ag::zeros_like(p));
  opt.step();
  return p.to_vector<double>()[0] / 2.0;
}

}  // namespace

static_assert(!std::is_constructible_v<optim::AdamW, std::vector<Tensor>, optim::AdamOptions>,
              "AdamW takes AdamWOptions (AdamOptions' weight_decay default of 0 would be ambiguous)");
static_assert(std::is_constructible_v<optim::AdamW, std::vector<Tensor>, double>);

TEST_CASE("AdamW: weight_decay defaults to 1e-2 however it is built") {
  CHECK(optim::AdamWOptions().weight_decay() == 1e-2);
  CHECK(optim::AdamWOptions().lr() == 1e-3);
  CHECK(optim::AdamWOptions(0.5).betas() == optim::Betas{0.9, 0.999});
  CHECK(optim::AdamWOptions().eps() == 1e-8);
  CHECK_FALSE(optim::AdamWOptions().amsgrad());
  {
    Tensor p = param();
    optim::AdamW opt(std::vector<Tensor>{p});  // AdamW(params)
    CHECK(opt.options().weight_decay() == 1e-2);
    CHECK(shrink(opt, p) == doctest::Approx(1 - 1e-3 * 1e-2).epsilon(1e-15));
  }
  {
    Tensor p = param();
    optim::AdamW opt(std::vector<Tensor>{p}, 0.1);  // AdamW(params, lr)
    CHECK(opt.options().weight_decay() == 1e-2);
    CHECK(shrink(opt, p) == doctest::Approx(1 - 0.1 * 1e-2).epsilon(1e-15));
  }
  {
    Tensor p = param();
    optim::AdamW opt({{"w", p}}, optim::AdamWOptions(0.1).betas({0.8, 0.9}));  // named, options
    CHECK(opt.options().weight_decay() == 1e-2);
    CHECK(shrink(opt, p) == doctest::Approx(1 - 0.1 * 1e-2).epsilon(1e-15));
  }
  {
    Tensor p = param(), q = param();
    optim::AdamW opt(std::vector<optim::ParamGroup<optim::AdamWOptions>>{{{{"p", p}}, optim::AdamWOptions(0.1)}});
    opt.add_param_group({{{"q", q}}, optim::AdamWOptions(0.2)});  // groups
    CHECK(opt.options(1).weight_decay() == 1e-2);
    p.set_grad(ag::zeros_like(p));
    q.set_grad(ag::zeros_like(q));
    opt.step();
    CHECK(p.to_vector<double>()[0] / 2.0 == doctest::Approx(1 - 0.1 * 1e-2).epsilon(1e-15));
    CHECK(q.to_vector<double>()[0] / 2.0 == doctest::Approx(1 - 0.2 * 1e-2).epsilon(1e-15));
  }
  {
    Tensor p = param();
    optim::AdamW opt(std::vector<Tensor>{p}, optim::AdamWOptions(0.1).weight_decay(0));  // explicit 0
    CHECK(shrink(opt, p) == 1.0);
  }
  {
    Tensor p = param();
    optim::Adam opt(std::vector<Tensor>{p}, 0.1);  // Adam keeps 0 (torch.optim.Adam)
    CHECK(opt.options().weight_decay() == 0.0);
    CHECK(shrink(opt, p) == 1.0);
  }
}

TEST_CASE("AdamW: invalid options are ValueErrors naming AdamW") {
  Tensor p = param();
  CHECK_THROWS_MSG(optim::AdamW(std::vector<Tensor>{p}, optim::AdamWOptions(-1.0)), ag::ValueError,
                   "AdamW: Invalid learning rate: -1");
  CHECK_THROWS_MSG(optim::AdamW(std::vector<Tensor>{p}, optim::AdamWOptions().betas({1.0, 0.9})), ag::ValueError,
                   "AdamW: Invalid beta parameter at index 0: 1");
}
