// gradcheck: analytic Jacobian (one backward per output element) against float64
// central differences, with PyTorch's test |a - n| <= atol + rtol * |n|.
#include <cmath>
#include <sstream>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/ops.h"

namespace ag {
namespace {

Shape unravel(int64_t k, const Shape& shape) {
  Shape idx = Dims::filled(shape.size(), 0);
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    idx[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
  return idx;
}

// Pointer to row-major element k of a (possibly strided) f64 tensor.
double* element(const Tensor& t, int64_t k) {
  Shape idx = unravel(k, t.shape());
  int64_t off = 0;
  for (int64_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  return t.data<double>() + off;
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<std::size_t> checked;
  std::vector<Tensor> wrt;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    AG_CHECK(inputs[i].dtype() == DType::f64, DTypeError, "gradcheck(", opt.name, "): input ", i, " has dtype ",
             inputs[i].dtype(), "; gradcheck needs f64 inputs");
    checked.push_back(i);
    wrt.push_back(inputs[i]);
  }
  AG_CHECK(!checked.empty(), ValueError, "gradcheck(", opt.name, "): no input requires grad");

  Tensor out = fn(inputs);
  AG_CHECK(out.dtype() == DType::f64, DTypeError, "gradcheck(", opt.name, "): output has dtype ", out.dtype(),
           "; expected f64");
  const int64_t m = out.numel();

  // analytic[c][j * n_c + k] = d out_j / d input_c[k]
  std::vector<std::vector<double>> analytic(wrt.size());
  for (std::size_t c = 0; c < wrt.size(); ++c) analytic[c].assign(m * wrt[c].numel(), 0.0);
  if (out.requires_grad()) {
    for (int64_t j = 0; j < m; ++j) {
      Tensor go = zeros(out.shape(), DType::f64);
      go.data<double>()[j] = 1.0;
      auto gs = grad({out}, wrt, {go}, /*retain_graph=*/true, /*create_graph=*/false,
                     /*allow_unused=*/true);
      for (std::size_t c = 0; c < wrt.size(); ++c) {
        if (!gs[c].defined()) continue;
        auto v = gs[c].to_vector<double>();
        std::copy(v.begin(), v.end(), analytic[c].begin() + j * wrt[c].numel());
      }
    }
  }

  GradcheckResult result;
  double worst = 0.0;
  NoGradGuard no_grad;
  for (std::size_t c = 0; c < wrt.size(); ++c) {
    const Tensor& x = wrt[c];
    for (int64_t k = 0; k < x.numel(); ++k) {
      double* p = element(x, k);
      const double orig = *p;
      *p = orig + opt.eps;
      auto plus = fn(inputs).to_vector<double>();
      *p = orig - opt.eps;
      auto minus = fn(inputs).to_vector<double>();
      *p = orig;
      for (int64_t j = 0; j < m; ++j) {
        double n = (plus[j] - minus[j]) / (2 * opt.eps);
        double a = analytic[c][j * x.numel() + k];
        double excess = std::abs(a - n) - (opt.atol + opt.rtol * std::abs(n));
        if (!(excess <= 0) && (result.ok || excess > worst || std::isnan(excess))) {
          worst = std::isnan(excess) ? INFINITY : excess;
          result.ok = false;
          std::ostringstream os;
          os << "gradcheck(" << opt.name << "): input " << checked[c] << " (shape " << x.shape() << ") element "
             << unravel(k, x.shape()) << " -> output element " << unravel(j, out.shape()) << ": analytic " << a
             << ", numeric " << n << " (|diff| " << std::abs(a - n) << " > atol " << opt.atol << " + rtol " << opt.rtol
             << " * |numeric|)";
          result.message = os.str();
        }
      }
    }
  }
  return result;
}

GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<std::size_t> wrt;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) wrt.push_back(i);
  AG_CHECK(!wrt.empty(), ValueError, "gradgradcheck(", opt.name, "): no input requires grad");
  Tensor out = [&] {
    EnableGradGuard grad_mode;
    return fn(inputs);
  }();
  AG_CHECK(out.dtype() == DType::f64, DTypeError, "gradgradcheck(", opt.name, "): output has dtype ", out.dtype(),
           "; expected f64");
  // A fixed upstream gradient v, an input of the checked map like the others.
  Generator rng(20240607);
  std::vector<Tensor> args = inputs;
  args.push_back(randn(out.shape(), DType::f64, &rng).requires_grad_());

  // (inputs, v) -> every input's gradient, flattened and concatenated.
  auto first_grads = [&fn, &wrt](const std::vector<Tensor>& xs) {
    EnableGradGuard grad_mode;  // gradcheck's numeric pass runs under NoGradGuard
    std::vector<Tensor> in(xs.begin(), xs.end() - 1), ins;
    for (std::size_t i : wrt) ins.push_back(in[i]);
    Tensor y = fn(in);
    std::vector<Tensor> flat;
    if (y.requires_grad()) {
      auto gs = grad({y}, ins, {xs.back()}, /*retain_graph=*/true, /*create_graph=*/true,
                     /*allow_unused=*/true);
      for (std::size_t c = 0; c < gs.size(); ++c)
        flat.push_back(gs[c].defined() ? gs[c].reshape({-1}) : zeros({ins[c].numel()}, DType::f64));
    } else {
      for (const Tensor& x : ins) flat.push_back(zeros({x.numel()}, DType::f64));
    }
    return cat(flat, 0);
  };
  std::string name = std::string("gradgrad ") + opt.name;
  GradcheckOptions o = opt;
  o.name = name.c_str();
  return gradcheck(first_grads, args, o);
}

}  // namespace ag
