// nn::RNNCell / LSTMCell / GRUCell: PyTorch's parameters, one step through the cell
// functions of attograd/ops/rnn.h, unbatched inputs as PyTorch (a batch of one inside).
#include <cmath>

#include "attograd/nn/rnn.h"

namespace ag::nn {

RNNCellImplBase::RNNCellImplBase(const char* name, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates)
    : Module(name), name_(name), input_size_(input_size), hidden_size_(hidden_size) {
  AG_CHECK(input_size > 0 && hidden_size > 0, ValueError, name, ": input_size ", input_size, " and hidden_size ",
           hidden_size, " must be positive");
  weight_ih = empty({gates * hidden_size, input_size});
  register_parameter("weight_ih", &weight_ih);
  weight_hh = empty({gates * hidden_size, hidden_size});
  register_parameter("weight_hh", &weight_hh);
  if (bias) {
    bias_ih = empty({gates * hidden_size});
    register_parameter("bias_ih", &bias_ih);
    bias_hh = empty({gates * hidden_size});
    register_parameter("bias_hh", &bias_hh);
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  NoGradGuard no_grad;
  for (Tensor* t : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (t->defined()) init::uniform_(*t, -stdv, stdv);
}

void RNNCellImplBase::pretty_print(std::ostream& os) const {
  os << name_ << '(' << input_size_ << ", " << hidden_size_;
  if (!bias_ih.defined()) os << ", bias=False";
  if (const auto* c = dynamic_cast<const RNNCellImpl*>(this); c && c->options.nonlinearity() == kReLU)
    os << ", nonlinearity=relu";
  os << ')';
}

std::tuple<Tensor, Tensor, bool> RNNCellImplBase::prepare(const Tensor& input, const Tensor& hx,
                                                          const char* hx_name) const {
  AG_CHECK((input.dim() == 1 || input.dim() == 2) && input.size(-1) == input_size_, ShapeError, name_, ": input ",
           input.shape(), " must be (B, ", input_size_, ") or (", input_size_, ")");
  const bool batched = input.dim() == 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  AG_CHECK(x.size(0) > 0, ValueError, name_, ": input ", input.shape(), " holds no sequence");
  const Shape want = batched ? Shape{x.size(0), hidden_size_} : Shape{hidden_size_};
  if (!hx.defined()) return {x, zeros({x.size(0), hidden_size_}, x.dtype()), batched};
  AG_CHECK(hx.shape() == want, ShapeError, name_, ": ", hx_name, " ", hx.shape(), " must be ", want, " for input ",
           input.shape());
  return {x, batched ? hx : hx.unsqueeze(0), batched};
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase("RNNCell", o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {
  AG_CHECK(o.nonlinearity() == kTanh || o.nonlinearity() == kReLU, ValueError,
           "RNNCell: nonlinearity must be kTanh or kReLU");
}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [x, h, batched] = prepare(input, hx, "hx");
  const Tensor y = options.nonlinearity() == kReLU ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                                                   : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return batched ? y : y.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase("LSTMCell", o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  auto [x, h, batched] = prepare(input, hx ? std::get<0>(*hx) : Tensor{}, "h");
  const Tensor c = std::get<1>(prepare(input, hx ? std::get<1>(*hx) : Tensor{}, "c"));
  auto [hy, cy] = lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (batched) return {hy, cy};
  return {hy.squeeze(0), cy.squeeze(0)};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase("GRUCell", o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [x, h, batched] = prepare(input, hx, "hx");
  const Tensor y = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return batched ? y : y.squeeze(0);
}

}  // namespace ag::nn
