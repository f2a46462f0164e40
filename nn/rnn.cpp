// nn::RNN / LSTM / GRU: PyTorch's parameters and the stack of layers and directions over
// packed rows, each layer and direction one ag::rnn_layer (attograd/ops/rnn.h) after one
// GEMM for the input projection of all its steps.
#include "attograd/nn/rnn.h"

#include <cmath>
#include <string>

#include "attograd/detail/error_context.h"

namespace ag::nn {
namespace {

using utils::rnn::PackedSequence;

const char* module_name(RnnMode m) { return m == RnnMode::lstm ? "LSTM" : m == RnnMode::gru ? "GRU" : "RNN"; }

int64_t gate_count(RnnMode m) { return m == RnnMode::lstm ? 4 : m == RnnMode::gru ? 3 : 1; }

RnnMode rnn_mode(NonlinearityType n) {
  AG_CHECK(n == NonlinearityType::Tanh || n == NonlinearityType::ReLU, ValueError,
           "RNN: nonlinearity must be kTanh or kReLU");
  return n == NonlinearityType::Tanh ? RnnMode::rnn_tanh : RnnMode::rnn_relu;
}

// The options RNN, LSTM and GRU share, copied into the base's.
template <class O>
RNNOptionsBase shared_options(RnnMode mode, const O& o) {
  return RNNOptionsBase(mode, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional());
}
RNNOptionsBase base_options(const RNNOptions& o) { return shared_options(rnn_mode(o.nonlinearity()), o); }
RNNOptionsBase base_options(const LSTMOptions& o) { return shared_options(RnnMode::lstm, o).proj_size(o.proj_size()); }
RNNOptionsBase base_options(const GRUOptions& o) { return shared_options(RnnMode::gru, o); }

// Parameters per layer and direction: w_ih, w_hh, then b_ih, b_hh with bias, then w_hr
// with proj_size.
int64_t per_direction(const RNNOptionsBase& o) { return 2 + (o.bias() ? 2 : 0) + (o.proj_size() > 0 ? 1 : 0); }

}  // namespace

RNNImplBase::RNNImplBase(const RNNOptionsBase& o) : Module(module_name(o.mode())), options_base(o) {
  const char* name = name_ = module_name(o.mode());
  AG_CHECK(o.input_size() > 0 && o.hidden_size() > 0 && o.num_layers() > 0, ValueError, name, ": input_size ",
           o.input_size(), ", hidden_size ", o.hidden_size(), " and num_layers ", o.num_layers(), " must be positive");
  AG_CHECK(o.dropout() >= 0 && o.dropout() <= 1, ValueError, name, ": dropout ", o.dropout(), " must lie in [0, 1]");
  AG_CHECK(o.proj_size() >= 0 && o.proj_size() < o.hidden_size() && (o.proj_size() == 0 || o.mode() == RnnMode::lstm),
           ValueError, name, ": proj_size ", o.proj_size(), " must be 0, or (LSTM only) in [1, hidden_size ",
           o.hidden_size(), ")");
  const int64_t G = gate_count(o.mode()), H = o.hidden_size(), P = o.proj_size() > 0 ? o.proj_size() : H;
  const int64_t D = o.bidirectional() ? 2 : 1;
  flat_.resize(o.num_layers() * D * per_direction(o));  // registered by address: never resized again
  size_t k = 0;
  for (int64_t l = 0; l < o.num_layers(); ++l)
    for (int64_t d = 0; d < D; ++d) {
      const std::string s = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in = l == 0 ? o.input_size() : P * D;
      auto add = [&](const std::string& n, Shape shape) {
        flat_[k] = empty(shape);
        register_parameter(n + s, &flat_[k++]);
      };
      add("weight_ih", {G * H, in});
      add("weight_hh", {G * H, P});
      if (o.bias()) add("bias_ih", {G * H}), add("bias_hh", {G * H});
      if (o.proj_size() > 0) add("weight_hr", {P, H});
    }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  NoGradGuard no_grad;
  for (Tensor& w : flat_) init::uniform_(w, -stdv, stdv);
}

std::vector<Tensor> RNNImplBase::flat_weights() const { return flat_; }

std::vector<std::vector<Tensor>> RNNImplBase::all_weights() const {
  const int64_t n = per_direction(options_base);
  std::vector<std::vector<Tensor>> r;
  for (size_t i = 0; i < flat_.size(); i += n) r.emplace_back(flat_.begin() + i, flat_.begin() + i + n);
  return r;
}

void RNNImplBase::pretty_print(std::ostream& os) const {
  const RNNOptionsBase& o = options_base;
  os << name_ << '(' << o.input_size() << ", " << o.hidden_size();
  if (o.proj_size() > 0) os << ", proj_size=" << o.proj_size();
  if (o.num_layers() != 1) os << ", num_layers=" << o.num_layers();
  if (o.mode() == RnnMode::rnn_relu) os << ", nonlinearity=relu";
  if (!o.bias()) os << ", bias=False";
  if (o.batch_first()) os << ", batch_first=True";
  if (o.dropout() != 0) os << ", dropout=" << o.dropout();
  if (o.bidirectional()) os << ", bidirectional=True";
  os << ')';
}

RnnLayerOutput RNNImplBase::run(const Tensor& data, const std::vector<int64_t>& bs, const Tensor& hx,
                                const Tensor& cx) {
  const RNNOptionsBase& o = options_base;
  const int64_t D = o.bidirectional() ? 2 : 1, n = per_direction(o);
  const bool lstm = o.mode() == RnnMode::lstm;
  Tensor layer_in = data;
  std::vector<Tensor> h_n, c_n;
  for (int64_t l = 0; l < o.num_layers(); ++l) {
    if (l > 0 && o.dropout() > 0 && is_training()) layer_in = dropout(layer_in, o.dropout(), true);
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const Tensor* w = &flat_[(l * D + d) * n];
      const Tensor b_ih = o.bias() ? w[2] : Tensor{}, b_hh = o.bias() ? w[3] : Tensor{};
      const Tensor w_hr = o.proj_size() > 0 ? w[n - 1] : Tensor{};
      const int64_t s = l * D + d;
      RnnLayerOutput r = rnn_layer(o.mode(), linear(layer_in, w[0], b_ih), bs, w[1], b_hh, hx.select(0, s),
                                   lstm ? cx.select(0, s) : Tensor{}, w_hr, d == 1);
      outs.push_back(r.output);
      h_n.push_back(r.h_n);
      if (lstm) c_n.push_back(r.c_n);
    }
    layer_in = D == 1 ? outs[0] : cat(outs, 1);
  }
  return {layer_in, stack(h_n, 0), lstm ? stack(c_n, 0) : Tensor{}};
}

namespace {

// hx given: checked to be (L D, B, width); undefined: zeros of that shape.
Tensor state_or_zeros(const Tensor& s, const char* module, const char* which, const Shape& want, DType dtype,
                      const Shape& input) {
  if (!s.defined()) return zeros(want, dtype);
  AG_CHECK(s.shape() == want, ShapeError, module, ": ", which, " ", s.shape(), " must be ", want, " for input ", input);
  return s;
}

}  // namespace

RnnLayerOutput RNNImplBase::run_padded(const Tensor& input, const Tensor& hx_in, const Tensor& cx_in) {
  const RNNOptionsBase& o = options_base;
  const char* name = name_;
  AG_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError, name, ": input ", input.shape(),
           " must be (T, B, I), (B, T, I) with batch_first, or (T, I) unbatched");
  const bool batched = input.dim() == 3;
  AG_CHECK(input.size(-1) == o.input_size(), ShapeError, name, ": input ", input.shape(), " has ", input.size(-1),
           " features, input_size is ", o.input_size());
  const Tensor x = !batched ? input.unsqueeze(1) : o.batch_first() ? input.transpose(0, 1) : input;  // (T, B, I)
  const int64_t T = x.size(0), B = x.size(1), D = o.bidirectional() ? 2 : 1;
  AG_CHECK(T > 0 && B > 0, ValueError, name, ": input ", input.shape(), " has no time step or no sequence");
  const int64_t H = o.hidden_size(), P = o.proj_size() > 0 ? o.proj_size() : H;
  // An unbatched input takes unbatched states (L D, P), as PyTorch.
  auto state = [&](const Tensor& s, const char* which, int64_t width) {
    const Shape want = batched ? Shape{o.num_layers() * D, B, width} : Shape{o.num_layers() * D, width};
    const Tensor t = state_or_zeros(s, name, which, want, x.dtype(), input.shape());
    return batched ? t : t.unsqueeze(1);
  };
  const Tensor hx = state(hx_in, o.mode() == RnnMode::lstm ? "h0" : "hx", P);
  const Tensor cx = o.mode() == RnnMode::lstm ? state(cx_in, "c0", H) : Tensor{};
  RnnLayerOutput r = run(x.reshape({T * B, o.input_size()}), std::vector<int64_t>(T, B), hx, cx);
  Tensor out = r.output.reshape({T, B, D * P});
  if (!batched) {
    r.output = out.squeeze(1), r.h_n = r.h_n.squeeze(1);
    if (r.c_n.defined()) r.c_n = r.c_n.squeeze(1);
  } else {
    r.output = o.batch_first() ? out.transpose(0, 1) : out;
  }
  return r;
}

RnnLayerOutput RNNImplBase::run_packed(const PackedSequence& input, const Tensor& hx_in, const Tensor& cx_in) {
  const RNNOptionsBase& o = options_base;
  const char* name = name_;
  const Tensor& data = input.data();
  AG_CHECK(data.dim() == 2 && data.size(1) == o.input_size(), ShapeError, name, ": packed data ", data.shape(),
           " must be (N, input_size ", o.input_size(), ")");
  const std::vector<int64_t> bs = input.batch_sizes_vector();
  AG_CHECK(!bs.empty(), ValueError, name, ": an empty PackedSequence");
  const int64_t B = bs[0], D = o.bidirectional() ? 2 : 1, H = o.hidden_size();
  const int64_t P = o.proj_size() > 0 ? o.proj_size() : H;
  // The states follow the packed (sorted) column order inside, the caller's outside.
  const Tensor& sorted = input.sorted_indices();
  auto state = [&](const Tensor& s, const char* which, int64_t width) {
    const Tensor t = state_or_zeros(s, name, which, {o.num_layers() * D, B, width}, data.dtype(), data.shape());
    return s.defined() && sorted.defined() ? index_select(t, 1, sorted) : t;
  };
  const Tensor hx = state(hx_in, o.mode() == RnnMode::lstm ? "h0" : "hx", P);
  const Tensor cx = o.mode() == RnnMode::lstm ? state(cx_in, "c0", H) : Tensor{};
  RnnLayerOutput r = run(data, bs, hx, cx);
  if (sorted.defined()) {
    r.h_n = index_select(r.h_n, 1, input.unsorted_indices());
    if (r.c_n.defined()) r.c_n = index_select(r.c_n, 1, input.unsorted_indices());
  }
  return r;
}

// ---- the three modules ----

RNNImpl::RNNImpl(const RNNOptions& o) : RNNImplBase(base_options(o)), options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  RnnLayerOutput r = run_padded(input, hx, {});
  return {r.output, r.h_n};
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& input, const Tensor& hx) {
  RnnLayerOutput r = run_packed(input, hx, {});
  return {PackedSequence(r.output, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()), r.h_n};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o) : RNNImplBase(base_options(o)), options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx) {
  RnnLayerOutput r = hx ? run_padded(input, std::get<0>(*hx), std::get<1>(*hx)) : run_padded(input, {}, {});
  return {r.output, {r.h_n, r.c_n}};
}

std::tuple<PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const PackedSequence& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  RnnLayerOutput r = hx ? run_packed(input, std::get<0>(*hx), std::get<1>(*hx)) : run_packed(input, {}, {});
  return {PackedSequence(r.output, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()),
          {r.h_n, r.c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& o) : RNNImplBase(base_options(o)), options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  RnnLayerOutput r = run_padded(input, hx, {});
  return {r.output, r.h_n};
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& input, const Tensor& hx) {
  RnnLayerOutput r = run_packed(input, hx, {});
  return {PackedSequence(r.output, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()), r.h_n};
}

}  // namespace ag::nn
