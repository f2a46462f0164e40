// The optimizers refuse what torch.optim refuses (issue 23): a tensor listed twice (it
// was stepped twice per step()), invalid learning rates, epsilons, betas and weight
// decays (set_lr(-1) and set_lr(NaN) were accepted), and a group index out of range
// (std::out_of_range escaped). Schedulers cannot set an invalid lr either.
#include <doctest/doctest.h>

#include <attograd/attograd.h>
#include <attograd/optim.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Shape;
using ag::Tensor;
namespace optim = ag::optim;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();

Tensor param(std::vector<double> v = {2.0, -4.0}) { return Tensor::from_vector(v).requires_grad_(); }

}  // namespace

TEST_CASE("a tensor listed twice is refused, under two names or in two groups") {
  Tensor w = param(), b = param({1.0});
  SUBCASE("same tensor under two names in one list: it would be stepped twice") {
    CHECK_THROWS_MSG(optim::SGD({{"w", w}, {"w_tied", w}}, optim::SGDOptions(0.1)), ag::ValueError,
                     "SGD: parameter group 0 lists the same tensor twice, as 'w' and 'w_tied'");
    CHECK_THROWS_MSG(optim::Adam(std::vector<Tensor>{w, b, w}), ag::ValueError,
                     "optimizer contains a parameter group with duplicate parameters");
  }
  SUBCASE("in two groups, at construction or through add_param_group") {
    CHECK_THROWS_MSG(
        optim::AdamW({{{{"w", w}}, optim::AdamWOptions()}, {{{"w2", w}}, optim::AdamWOptions()}}), ag::ValueError,
        "AdamW: some parameters appear in more than one parameter group ('w' in group 0, 'w2' in group 1)");
    optim::SGD sgd({{"w", w}}, optim::SGDOptions(0.1));
    CHECK_THROWS_MSG(sgd.add_param_group({{{"b", b}, {"again", w}}, optim::SGDOptions(0.5)}), ag::ValueError,
                     "some parameters appear in more than one parameter group");
    CHECK(sgd.num_groups() == 1);  // nothing added
    sgd.add_param_group({{{"b", b}}, optim::SGDOptions(0.5)});
    CHECK(sgd.num_groups() == 2);
  }
  SUBCASE("two handles of one tensor, or overlapping views of one buffer, are the same memory") {
    Tensor same = w;  // a copy of the handle
    CHECK_THROWS_MSG(optim::SGD({{"a", w}, {"b", same}}, optim::SGDOptions(0.1)), ag::ValueError,
                     "SGD: parameter group 0 lists the same tensor twice, as 'a' and 'b'");
    Tensor flat = ag::zeros(Shape{6});
    Tensor lo = Tensor(flat.storage(), Shape{4}, ag::Strides{1}, 0, DType::f32).requires_grad_();
    Tensor hi = Tensor(flat.storage(), Shape{3}, ag::Strides{1}, 3, DType::f32).requires_grad_();
    Tensor rest = Tensor(flat.storage(), Shape{2}, ag::Strides{1}, 4, DType::f32).requires_grad_();
    CHECK_THROWS_MSG(optim::SGD({{"lo", lo}, {"hi", hi}}, optim::SGDOptions(0.1)), ag::ValueError,
                     "SGD: parameter group 0 lists the same tensor twice, as 'lo' and 'hi'");
    optim::SGD ok({{"lo", lo}, {"rest", rest}}, optim::SGDOptions(0.1));  // disjoint parts: fine
    CHECK(ok.group_params(0).size() == 2);
  }
}

TEST_CASE("invalid options and learning rates are ValueErrors with torch.optim's wording") {
  Tensor p = param();
  const std::vector<Tensor> ps{p};
  CHECK_THROWS_MSG(optim::SGD(ps, optim::SGDOptions(-1)), ag::ValueError, "SGD: Invalid learning rate: -1");
  CHECK_THROWS_MSG(optim::SGD(ps, optim::SGDOptions(kNaN)), ag::ValueError, "SGD: Invalid learning rate: nan");
  CHECK_THROWS_MSG(optim::SGD(ps, optim::SGDOptions(0.1).momentum(-0.5)), ag::ValueError,
                   "SGD: Invalid momentum value: -0.5");
  CHECK_THROWS_MSG(optim::SGD(ps, optim::SGDOptions(0.1).weight_decay(-1)), ag::ValueError,
                   "SGD: Invalid weight_decay value: -1");
  CHECK_THROWS_MSG(optim::SGD(ps, optim::SGDOptions(0.1).nesterov(true)), ag::ValueError,
                   "SGD: Nesterov momentum requires a momentum and zero dampening");
  CHECK_THROWS_MSG(optim::Adam(ps, optim::AdamOptions(kInf)), ag::ValueError, "Adam: Invalid learning rate: inf");
  CHECK_THROWS_MSG(optim::Adam(ps, optim::AdamOptions().eps(-1e-8)), ag::ValueError,
                   "Adam: Invalid epsilon value: -1e-08");
  CHECK_THROWS_MSG(optim::Adam(ps, optim::AdamOptions().betas({1.0, 0.9})), ag::ValueError,
                   "Adam: Invalid beta parameter at index 0: 1");
  CHECK_THROWS_MSG(optim::AdamW(ps, optim::AdamWOptions().betas({0.9, kNaN})), ag::ValueError,
                   "AdamW: Invalid beta parameter at index 1: nan");
  CHECK_THROWS_MSG(optim::AdamW(ps, optim::AdamWOptions().weight_decay(-0.01)), ag::ValueError,
                   "AdamW: Invalid weight_decay value: -0.01");

  optim::Adam adam(ps, optim::AdamOptions(0.01));
  // add_param_group checks its options as the constructor does (it checked none).
  CHECK_THROWS_MSG(adam.add_param_group({{{"q", param()}}, optim::AdamOptions(-1)}), ag::ValueError,
                   "Adam: Invalid learning rate: -1");
  CHECK(adam.num_groups() == 1);
  CHECK_THROWS_MSG(adam.set_lr(-1), ag::ValueError, "Adam.set_lr: Invalid learning rate: -1");
  CHECK_THROWS_MSG(adam.set_lr(kNaN, 0), ag::ValueError, "Adam.set_lr: Invalid learning rate: nan");
  CHECK(adam.lr() == 0.01);
  adam.set_lr(0.0);  // 0 is valid (a frozen phase)
  CHECK(adam.lr() == 0.0);
}

TEST_CASE("a group index out of range is an IndexError naming it and the group count") {
  optim::SGD sgd(std::vector<Tensor>{param()}, optim::SGDOptions(0.1));
  CHECK_THROWS_MSG(sgd.set_lr(0.1, 5), ag::IndexError, "SGD.set_lr: parameter group 5 is out of range for 1 group");
  CHECK_THROWS_MSG(sgd.lr(3), ag::IndexError, "SGD.lr: parameter group 3 is out of range for 1 group");
  CHECK_THROWS_MSG(sgd.options(1), ag::IndexError, "SGD.options: parameter group 1 is out of range for 1 group");
  CHECK_THROWS_MSG(sgd.group_params(1), ag::IndexError,
                   "SGD.group_params: parameter group 1 is out of range for 1 group");
}

TEST_CASE("a scheduler cannot set an invalid learning rate, and a refused step changes nothing") {
  optim::SGD sgd(std::vector<Tensor>{param()}, optim::SGDOptions(0.1));
  CHECK_THROWS_MSG(optim::LambdaLR(sgd, [](int64_t) { return -1.0; }), ag::ValueError,
                   "LambdaLR: after 0 steps group 0 (base lr 0.1) gets Invalid learning rate: -0.1");
  CHECK(sgd.lr() == 0.1);
  optim::LambdaLR sched(sgd, [](int64_t s) { return s < 2 ? 1.0 : std::nan(""); });
  sched.step();
  CHECK_THROWS_MSG(sched.step(), ag::ValueError, "LambdaLR: after 2 steps group 0 (base lr 0.1) gets Invalid");
  CHECK(sched.last_step() == 1);
  CHECK(sgd.lr() == 0.1);
}
