// The table of method checks for tests/ops/test_tensor_methods.cpp: for each method name
// (a torch.Tensor method), the method form and the free function it forwards to are called
// on the same inputs and compared (values; for pow, softmax, max, add, gather and
// masked_fill also gradients).
#include "tensor_method_checks.h"

namespace tm_checks {

// One entry per method name (the name a torch.Tensor method has).
#define UNARY(name) \
  { \
#name, [] { same(X().name(), ag::name(X())); } \
  }
#define BINARY(name) \
  { \
#name, [] { same(X().name(Y()), ag::name(X(), Y())); same(X().name(0.5), ag::name(X(), 0.5)); } \
  }

const std::map<std::string, Check>& checks() {
  static const std::map<std::string, Check> table = {
      // pointwise
      UNARY(abs),
      UNARY(neg),
      UNARY(sign),
      UNARY(square),
      UNARY(sqrt),
      UNARY(rsqrt),
      UNARY(exp),
      UNARY(exp2),
      UNARY(expm1),
      UNARY(log),
      UNARY(log2),
      UNARY(log10),
      UNARY(log1p),
      UNARY(sin),
      UNARY(cos),
      UNARY(tan),
      UNARY(asin),
      UNARY(acos),
      UNARY(atan),
      UNARY(sinh),
      UNARY(cosh),
      UNARY(tanh),
      UNARY(asinh),
      UNARY(atanh),
      UNARY(erf),
      UNARY(floor),
      UNARY(ceil),
      UNARY(trunc),
      UNARY(frac),
      UNARY(relu),
      UNARY(sigmoid),
      UNARY(isfinite),
      UNARY(isinf),
      UNARY(isnan),
      UNARY(logical_not),
      {"acosh", [] { same(ag::add(X(), 1.0).acosh(), ag::acosh(ag::add(X(), 1.0))); }},
      {"round",
       [] {
         same(ag::mul(X(), 10.0).round(), ag::round(ag::mul(X(), 10.0)));
         same(X().round(1), ag::round(X(), 1));
       }},
      {"clamp",
       [] {
         same(X().clamp(0.3, 0.6), ag::clamp(X(), 0.3, 0.6));
         same(X().clamp(0.3), ag::clamp(X(), 0.3, std::nullopt));
         same(X().clamp(std::nullopt, 0.6), ag::clamp(X(), std::nullopt, 0.6));
         same(X().clamp(Y(), ag::add(Y(), 0.1)), ag::clamp(X(), Y(), ag::add(Y(), 0.1)));
         same(X().clamp_min(0.3), ag::clamp(X(), 0.3, std::nullopt));
         same(X().clamp_max(0.3), ag::clamp(X(), std::nullopt, 0.3));
       }},
      // arithmetic
      {"add",
       [] {
         same(X().add(Y()), ag::add(X(), Y()));
         same(X().add(Y(), 2), ag::add(X(), ag::mul(Y(), 2)));
         same(X().add(0.5, 2), ag::add(X(), 1.0));
         Tensor i = i64({1, 2, 3}, {3});
         same(i.add(2, 3), ag::add(i, 6));  // stays i64, as LibTorch's
         same_grad([](const Tensor& x) { return x.add(x, 3); },
                   [](const Tensor& x) { return ag::add(x, ag::mul(x, 3)); });
       }},
      {"sub",
       [] {
         same(X().sub(Y()), ag::sub(X(), Y()));
         same(X().sub(Y(), 0.5), ag::sub(X(), ag::mul(Y(), 0.5)));
         same(X().sub(1, 2), ag::sub(X(), 2));
       }},
      BINARY(mul),
      BINARY(div),
      BINARY(fmod),
      BINARY(remainder),
      BINARY(eq),
      BINARY(ne),
      BINARY(lt),
      BINARY(le),
      BINARY(gt),
      BINARY(ge),
      {"floor_divide",
       [] {
         same(X().floor_divide(Y()), ag::floor_divide(X(), Y()));
         same(X().floor_divide(0.2), ag::floor_divide(X(), 0.2));
       }},
      {"pow",
       [] {
         same(X().pow(Y()), ag::pow(X(), Y()));
         same(X().pow(2), ag::pow(X(), 2));
         same_grad([](const Tensor& x) { return x.pow(2); }, [](const Tensor& x) { return ag::pow(x, 2); });
       }},
      {"div_rounding",  // not a name: div's rounding_mode overloads
       [] {
         same(X().div(Y(), "floor"), ag::div(X(), Y(), "floor"));
         same(X().div(0.3, "trunc"), ag::div(X(), 0.3, "trunc"));
       }},
      {"maximum", [] { same(X().maximum(Y()), ag::maximum(X(), Y())); }},
      {"minimum", [] { same(X().minimum(Y()), ag::minimum(X(), Y())); }},
      {"atan2", [] { same(X().atan2(Y()), ag::atan2(X(), Y())); }},
      {"copysign", [] { same(X().copysign(ag::neg(Y())), ag::copysign(X(), ag::neg(Y()))); }},
      {"logaddexp", [] { same(X().logaddexp(Y()), ag::logaddexp(X(), Y())); }},
      {"lerp",
       [] {
         same(X().lerp(Y(), 0.25), ag::lerp(X(), Y(), 0.25));
         same(X().lerp(Y(), X()), ag::lerp(X(), Y(), X()));
       }},
      {"matmul", [] { same(X().matmul(ag::transpose(Y(), 0, 1)), ag::matmul(X(), ag::transpose(Y(), 0, 1))); }},
      // comparison, selection
      {"isclose", [] { same(X().isclose(Y(), 0.0, 0.3), ag::isclose(X(), Y(), 0.0, 0.3)); }},
      {"logical_and", [] { same(mask().logical_and(ag::lt(Y(), 0.5)), ag::logical_and(mask(), ag::lt(Y(), 0.5))); }},
      {"logical_or", [] { same(mask().logical_or(ag::lt(Y(), 0.5)), ag::logical_or(mask(), ag::lt(Y(), 0.5))); }},
      {"logical_xor", [] { same(mask().logical_xor(ag::lt(Y(), 0.5)), ag::logical_xor(mask(), ag::lt(Y(), 0.5))); }},
      {"bitwise_and", [] { same(mask().bitwise_and(ag::lt(Y(), 0.5)), ag::bitwise_and(mask(), ag::lt(Y(), 0.5))); }},
      {"bitwise_or", [] { same(mask().bitwise_or(ag::lt(Y(), 0.5)), ag::bitwise_or(mask(), ag::lt(Y(), 0.5))); }},
      {"bitwise_xor", [] { same(mask().bitwise_xor(ag::lt(Y(), 0.5)), ag::bitwise_xor(mask(), ag::lt(Y(), 0.5))); }},
      {"bitwise_not", [] { same(mask().bitwise_not(), ag::bitwise_not(mask())); }},
      {"nonzero", [] { same(mask().nonzero(), ag::nonzero(mask())); }},
      {"argwhere", [] { same(X().argwhere(), ag::argwhere(X())); }},
      {"index_put",
       [] {
         const ag::Tensor i = ag::Tensor::from_vector(std::vector<int64_t>{1, 0, 1});
         same(X().index_put({i}, ag::ones({4}, ag::DType::f64), true),
              ag::index_put(X(), {i}, ag::ones({4}, ag::DType::f64), true));
       }},
      {"where", [] { same(X().where(mask(), Y()), ag::where(mask(), X(), Y())); }},
      // softmax
      {"softmax",
       [] {
         same(X().softmax(-1), ag::softmax(X(), -1));
         same(X().to(ag::DType::f32).softmax(0, ag::DType::f64),
              ag::softmax(ag::to(X(), ag::DType::f32).to(ag::DType::f64), 0));
         same_grad([](const Tensor& x) { return x.softmax(-1); }, [](const Tensor& x) { return ag::softmax(x, -1); });
       }},
      {"log_softmax", [] { same(X().log_softmax(1), ag::log_softmax(X(), 1)); }},
      // reductions
      {"sum",
       [] {
         same(X().sum(), ag::sum(X()));
         same(X().sum(0), ag::sum(X(), {0}));
         same(X().sum(int64_t{-1}, true), ag::sum(X(), {-1}, true));
         same(X().sum({0, 1}), ag::sum(X(), {0, 1}));
         same(X().sum({}, true), ag::sum(X(), {}, true));  // {} is every dim, not dim 0
       }},
      {"mean",
       [] {
         same(X().mean(), ag::mean(X()));
         same(X().mean(1), ag::mean(X(), {1}));
         same(X().mean({0}, true), ag::mean(X(), {0}, true));
       }},
      {"var",
       [] {
         same(X().var(), ag::var(X()));
         same(X().var(false), ag::var(X(), {}, 0));
         same(X().var(0), ag::var(X(), {0}));    // a dim, as LibTorch's var(int dim)
         same(X().var({0}), ag::var(X(), {0}));  // a dim list, not unbiased = false
         same(X().var({0, 1}, false, true), ag::var(X(), {0, 1}, 0, true));
       }},
      {"std",
       [] {
         same(X().std(), ag::std(X()));
         same(X().std(false), ag::std(X(), {}, 0));
         same(X().std(1), ag::std(X(), {1}));
         same(X().std({1}, false), ag::std(X(), {1}, 0));
       }},
      {"logsumexp",
       [] {
         same(X().logsumexp(1), ag::logsumexp(X(), {1}));
         same(X().logsumexp({0, 1}, true), ag::logsumexp(X(), {0, 1}, true));
       }},
      {"amax",
       [] {
         same(X().amax(), ag::amax(X()));
         same(X().amax(1, true), ag::amax(X(), {1}, true));
       }},
      {"amin",
       [] {
         same(X().amin(), ag::amin(X()));
         same(X().amin(0), ag::amin(X(), {0}));
       }},
      {"max",
       [] {
         same(X().max(), ag::max(X()));
         same(X().max(1), ag::max(X(), 1));
         same(X().max(Y()), ag::maximum(X(), Y()));
         auto [values, indices] = X().max(0, true);  // structured bindings, as with LibTorch's tuple
         same(values, ag::amax(X(), {0}, true));
         same(indices, ag::argmax(X(), 0, true));
         same_grad([](const Tensor& x) { return x.max(1).first; }, [](const Tensor& x) { return ag::max(x, 1).first; });
       }},
      {"min",
       [] {
         same(X().min(), ag::min(X()));
         same(X().min(0, true), ag::min(X(), 0, true));
         same(X().min(Y()), ag::minimum(X(), Y()));
       }},
      {"argmax",
       [] {
         same(X().argmax(-1), ag::argmax(X(), -1));
         same(X().argmax(), ag::argmax(ag::reshape(X(), {-1}), 0));  // flattened
         CHECK(X().argmax(std::nullopt, true).shape() == ag::Shape{1, 1});
       }},
      {"argmin",
       [] {
         same(X().argmin(0, true), ag::argmin(X(), 0, true));
         same(X().argmin(), ag::argmin(ag::reshape(X(), {-1}), 0));
       }},
      {"prod",
       [] {
         same(X().prod(), ag::prod(X()));
         same(X().prod(1, true), ag::prod(X(), 1, true));
       }},
      {"any",
       [] {
         same(mask().any(), ag::any(mask()));
         same(mask().any(1), ag::any(mask(), 1));
       }},
      {"all",
       [] {
         same(mask().all(), ag::all(mask()));
         same(mask().all(0, true), ag::all(mask(), 0, true));
       }},
      {"norm",
       [] {
         same(X().norm(), ag::norm(X()));
         same(X().norm(1), ag::norm(X(), 1));
         same(X().norm(3, 1), ag::norm(X(), 3, {1}));
         same(X().norm(std::nullopt, {0, 1}, true), ag::norm(X(), 2, {0, 1}, true));
       }},
      // scans and sorting
      {"cumsum",
       [] {
         same(X().cumsum(1), ag::cumsum(X(), 1));
         same(mask().cumsum(0, ag::DType::f64), ag::cumsum(ag::to(mask(), ag::DType::f64), 0));
       }},
      {"cumprod", [] { same(X().cumprod(0), ag::cumprod(X(), 0)); }},
      {"logcumsumexp", [] { same(X().logcumsumexp(1), ag::logcumsumexp(X(), 1)); }},
      {"cummax", [] { same(X().cummax(1), ag::cummax(X(), 1)); }},
      {"cummin", [] { same(X().cummin(-1), ag::cummin(X(), -1)); }},
      {"sort",
       [] {
         same(X().sort(), ag::sort(X()));
         same(X().sort(0, true), ag::sort(X(), 0, true));
         same(X().sort(true, 0), ag::sort(X(), 0, false, true));
         same(X().sort(std::optional<bool>(false), 1, true), ag::sort(X(), 1, true));
         same(X().sort(true), ag::sort(X(), -1));
       }},
      {"argsort", [] { same(X().argsort(0, true), ag::argsort(X(), 0, true)); }},
      {"topk",
       [] {
         same(X().topk(2), ag::topk(X(), 2));
         same(X().topk(2, 0, false), ag::topk(X(), 2, 0, false));
       }},
      // shape
      {"repeat",
       [] {
         same(X().repeat({2, 1, 3}), ag::repeat(X(), {2, 1, 3}));
       }},
      {"tile", [] { same(X().tile({2}), ag::tile(X(), {2})); }},
      {"repeat_interleave",
       [] {
         same(X().repeat_interleave(2, 1), ag::repeat_interleave(X(), 2, 1));
         same(X().repeat_interleave(i64({1, 0, 2}, {3}), 0), ag::repeat_interleave(X(), i64({1, 0, 2}, {3}), 0));
       }},
      {"flip",
       [] {
         same(X().flip({0, 1}), ag::flip(X(), {0, 1}));
         same(X().flip(1), ag::flip(X(), {1}));
       }},
      {"roll",
       [] {
         same(X().roll({1, -1}, {0, 1}), ag::roll(X(), {1, -1}, {0, 1}));
         same(X().roll(2), ag::roll(X(), 2));
         same(X().roll(1, 0), ag::roll(X(), 1, 0));
       }},
      {"tril",
       [] {
         same(X().tril(), ag::tril(X()));
         same(X().tril(1), ag::tril(X(), 1));
       }},
      {"triu", [] { same(X().triu(-1), ag::triu(X(), -1)); }},
      {"diag", [] { same(X().diag(1), ag::diag(X(), 1)); }},
      {"diagonal", [] { same(X().diagonal(1), ag::diagonal(X(), 1)); }},
      {"movedim",
       [] {
         same(X().movedim(0, 1), ag::movedim(X(), 0, 1));
         same(X().movedim({0, 1}, {1, 0}), ag::movedim(X(), {0, 1}, {1, 0}));
       }},
      {"unflatten",
       [] {
         same(X().unflatten(1, {2, 2}), ag::unflatten(X(), 1, {2, 2}));
       }},
      {"split",
       [] {
         same(X().split(3, 1), ag::split(X(), 3, 1));
         same(X().split(std::vector<int64_t>{1, 2}), ag::split(X(), std::vector<int64_t>{1, 2}));
         same(X().split_with_sizes({3, 1}, 1), ag::split(X(), std::vector<int64_t>{3, 1}, 1));
       }},
      {"chunk", [] { same(X().chunk(2, 1), ag::chunk(X(), 2, 1)); }},
      // the views and copies that were methods before
      {"reshape",
       [] {
         same(X().reshape({4, 3}), ag::reshape(X(), {4, 3}));
       }},
      {"view",
       [] {
         same(X().view({2, 6}), ag::view(X(), {2, 6}));
       }},
      {"transpose", [] { same(X().transpose(0, 1), ag::transpose(X(), 0, 1)); }},
      {"permute",
       [] {
         same(X().permute({1, 0}), ag::permute(X(), {1, 0}));
       }},
      {"unsqueeze", [] { same(X().unsqueeze(1), ag::unsqueeze(X(), 1)); }},
      {"squeeze",
       [] {
         same(X().unsqueeze(0).squeeze(), X());
         same(X().unsqueeze(0).squeeze(0), X());
       }},
      {"expand",
       [] {
         same(X().unsqueeze(0).expand({2, 3, 4}), ag::expand(ag::unsqueeze(X(), 0), {2, 3, 4}));
       }},
      {"narrow", [] { same(X().narrow(1, 1, 2), ag::narrow(X(), 1, 1, 2)); }},
      {"select", [] { same(X().select(1, 2), ag::select(X(), 1, 2)); }},
      {"flatten", [] { same(X().flatten(), ag::flatten(X())); }},
      {"contiguous", [] { same(X().transpose(0, 1).contiguous(), ag::contiguous(ag::transpose(X(), 0, 1))); }},
      {"clone", [] { same(X().clone(), ag::clone(X())); }},
      {"to", [] { same(X().to(ag::DType::f32), ag::to(X(), ag::DType::f32)); }},
      // indexing
      {"index_select",
       [] {
         same(X().index_select(1, i64({3, 0}, {2})), ag::index_select(X(), 1, i64({3, 0}, {2})));
       }},
      {"gather",
       [] {
         Tensor idx = i64({0, 2, 1, 1, 0, 0}, {3, 2});
         same(X().gather(1, idx), ag::gather(X(), 1, idx));
         same_grad([&idx](const Tensor& x) { return x.gather(1, idx); },
                   [&idx](const Tensor& x) { return ag::gather(x, 1, idx); });
       }},
      {"scatter",
       [] {
         Tensor idx = i64({0, 2, 1, 3, 3, 0}, {3, 2});
         same(X().scatter(1, idx, Y()), ag::scatter(X(), 1, idx, Y()));
         same(X().scatter(1, idx, 7), ag::scatter(X(), 1, idx, 7.0));
       }},
      {"scatter_add",
       [] {
         Tensor idx = i64({0, 2, 2, 3, 3, 0}, {3, 2});
         same(X().scatter_add(1, idx, Y()), ag::scatter_add(X(), 1, idx, Y()));
       }},
      {"index_add",
       [] {
         Tensor idx = i64({2, 0}, {2});
         Tensor src = ag::narrow(Y(), 0, 0, 2);
         same(X().index_add(0, idx, src), ag::index_add(X(), 0, idx, src));
         same(X().index_add(0, idx, src, 2), ag::index_add(X(), 0, idx, src, 2.0));
       }},
      {"masked_fill",
       [] {
         same(X().masked_fill(mask(), -1), ag::masked_fill(X(), mask(), -1));
         same_grad([](const Tensor& x) { return x.masked_fill(mask(), 0.0); },
                   [](const Tensor& x) { return ag::masked_fill(x, mask(), 0.0); });
       }},
      {"masked_select", [] { same(X().masked_select(mask()), ag::masked_select(X(), mask())); }},
      {"masked_scatter", [] { same(X().masked_scatter(mask(), Y()), ag::masked_scatter(X(), mask(), Y())); }},
      // random: the same stream through both forms
      {"multinomial",
       [] {
         ag::Generator g1(7), g2(7);
         same(X().multinomial(3, false, &g1), ag::multinomial(X(), 3, false, &g2));
       }},
  };
  return table;
}
#undef UNARY
#undef BINARY

}  // namespace tm_checks
