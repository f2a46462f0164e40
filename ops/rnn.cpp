// Recurrent layers: rnn_layer is one fused op per layer and direction (kernels/rnn.cpp
// runs the recurrence and its backward through time), recorded as one node whose
// create_graph backward differentiates rnn_layer_composite, the same recurrence step by
// step from primitives. The cell functions are rnn_layer over one step.
#include "attograd/ops/rnn.h"

#include <memory>
#include <utility>

#include "attograd/autocast.h"
#include "attograd/detail/error_context.h"
#include "attograd/ops/activation.h"
#include "attograd/ops/linalg.h"
#include "attograd/ops/shape.h"
#include "attograd/ops/unary.h"
#include "kernels/rnn.h"
#include "op_util.h"

namespace ag {
namespace {

const char* mode_name(RnnMode m) {
  switch (m) {
    case RnnMode::rnn_tanh: return "RNN_TANH";
    case RnnMode::rnn_relu: return "RNN_RELU";
    case RnnMode::lstm: return "LSTM";
    case RnnMode::gru: return "GRU";
  }
  return "?";
}

// The recurrence of kernels/rnn.cpp from differentiable primitives: in = {input_proj,
// w_hh, b_hh, h0, c0, w_hr} -> the flat result (output, h_n, c_n). Step t updates the
// first batch_sizes[t] rows of the states; the rest keep theirs.
Tensor rnn_layer_composite(RnnMode mode, const std::vector<Tensor>& in, const std::vector<int64_t>& bs, bool reverse) {
  const Tensor &x = in[0], &w_hh = in[1], &b_hh = in[2], &w_hr = in[5];
  Tensor h = in[3], c = in[4];
  const int64_t B = h.size(0), H = mode == RnnMode::lstm  ? w_hh.size(0) / 4
                                   : mode == RnnMode::gru ? w_hh.size(0) / 3
                                                          : w_hh.size(0);
  const int64_t T = static_cast<int64_t>(bs.size());
  std::vector<int64_t> offset(T);
  for (int64_t t = 0, o = 0; t < T; ++t) offset[t] = o, o += bs[t];
  std::vector<Tensor> outs(T);
  // rows [0, n) of s replaced by `rows`
  auto update = [B](const Tensor& s, const Tensor& rows, int64_t n) {
    return n == B ? rows : cat({rows, s.narrow(0, n, B - n)}, 0);
  };
  for (int64_t k = 0; k < T; ++k) {
    const int64_t t = reverse ? T - 1 - k : k, n = bs[t];
    const Tensor xt = x.narrow(0, offset[t], n), hp = h.narrow(0, 0, n);
    Tensor hh = matmul(hp, w_hh.t());
    if (b_hh.defined()) hh = hh + b_hh;
    Tensor hy;
    if (mode == RnnMode::lstm) {
      const Tensor gates = xt + hh;
      const Tensor i = sigmoid(gates.narrow(1, 0, H)), f = sigmoid(gates.narrow(1, H, H)),
                   g = tanh(gates.narrow(1, 2 * H, H)), o = sigmoid(gates.narrow(1, 3 * H, H));
      const Tensor cy = f * c.narrow(0, 0, n) + i * g;
      hy = o * tanh(cy);
      if (w_hr.defined()) hy = matmul(hy, w_hr.t());
      c = update(c, cy, n);
    } else if (mode == RnnMode::gru) {
      const Tensor r = sigmoid(hh.narrow(1, 0, H) + xt.narrow(1, 0, H));
      const Tensor z = sigmoid(hh.narrow(1, H, H) + xt.narrow(1, H, H));
      const Tensor nn = tanh(xt.narrow(1, 2 * H, H) + hh.narrow(1, 2 * H, H) * r);
      hy = (hp - nn) * z + nn;
    } else {
      hy = mode == RnnMode::rnn_tanh ? tanh(xt + hh) : relu(xt + hh);
    }
    h = update(h, hy, n);
    outs[t] = hy;
  }
  std::vector<Tensor> flat{cat(outs, 0).reshape({-1}), h.reshape({-1})};
  if (mode == RnnMode::lstm) flat.push_back(c.reshape({-1}));
  return cat(flat, 0);
}

void check_layer(RnnMode mode, const Tensor& x, const std::vector<int64_t>& bs, const Tensor& w_hh, const Tensor& b_hh,
                 const Tensor& h0, const Tensor& c0, const Tensor& w_hr) {
  const char* m = mode_name(mode);
  const int64_t G = mode == RnnMode::lstm ? 4 : mode == RnnMode::gru ? 3 : 1;
  AG_CHECK(x.dim() == 2 && w_hh.dim() == 2 && w_hh.size(0) % G == 0 && x.size(1) == w_hh.size(0), ShapeError,
           "rnn_layer (", m, "): input_proj ", x.shape(), " must be (N, G H) and w_hh ", w_hh.shape(),
           " (G H, P) with G = ", G);
  const int64_t H = w_hh.size(0) / G, P = w_hh.size(1);
  AG_CHECK(!bs.empty(), ValueError, "rnn_layer (", m, "): batch_sizes is empty (input_proj ", x.shape(), ")");
  int64_t sum = 0;
  for (size_t t = 0; t < bs.size(); ++t) {
    AG_CHECK(bs[t] > 0 && (t == 0 || bs[t] <= bs[t - 1]), ValueError, "rnn_layer (", m,
             "): batch_sizes must be positive and non-increasing, got ", list_str(bs));
    AG_CHECK(sum <= x.size(0) - bs[t], ValueError, "rnn_layer (", m, "): batch_sizes ", list_str(bs),
             " sum past input_proj's ", x.size(0), " rows");
    sum += bs[t];
  }
  AG_CHECK(sum == x.size(0), ValueError, "rnn_layer (", m, "): batch_sizes sum to ", sum, ", input_proj ", x.shape(),
           " has ", x.size(0), " rows");
  const int64_t B = bs[0];
  AG_CHECK(!b_hh.defined() || b_hh.shape() == Shape{G * H}, ShapeError, "rnn_layer (", m, "): b_hh ", b_hh.shape(),
           " must be (", G * H, ") for w_hh ", w_hh.shape());
  AG_CHECK(h0.shape() == (Shape{B, P}), ShapeError, "rnn_layer (", m, "): h0 ", h0.shape(), " must be (", B, ", ", P,
           ") for batch_sizes[0] = ", B, " and w_hh ", w_hh.shape());
  if (mode == RnnMode::lstm) {
    AG_CHECK(c0.defined() && c0.shape() == (Shape{B, H}), ShapeError, "rnn_layer (LSTM): c0 ", c0.shape(), " must be (",
             B, ", ", H, ") for batch_sizes[0] = ", B, " and w_hh ", w_hh.shape());
    AG_CHECK(w_hr.defined() ? w_hr.shape() == (Shape{P, H}) : P == H, ShapeError, "rnn_layer (LSTM): w_hh ",
             w_hh.shape(), " and w_hr ", w_hr.shape(), ": w_hr must be (P, H), or undefined with P = H");
  } else {
    AG_CHECK(!c0.defined() && !w_hr.defined(), ValueError, "rnn_layer (", m, "): c0 ", c0.shape(), " and w_hr ",
             w_hr.shape(), " are LSTM's only");
    AG_CHECK(P == H, ShapeError, "rnn_layer (", m, "): w_hh ", w_hh.shape(), " must be square (G H, H)");
  }
  for (const Tensor* t : {&w_hh, &b_hh, &h0, &c0, &w_hr})
    AG_CHECK(!t->defined() || t->dtype() == x.dtype(), DTypeError, "rnn_layer (", m, "): dtypes differ: input_proj ",
             x.dtype(), " ", x.shape(), ", a weight or state ", t->dtype(), " ", t->shape());
}

}  // namespace

RnnLayerOutput rnn_layer(RnnMode mode, const Tensor& x_in, const std::vector<int64_t>& bs, const Tensor& w_hh_in,
                         const Tensor& b_hh_in, const Tensor& h0_in, const Tensor& c0_in, const Tensor& w_hr_in,
                         bool reverse) try {
  const DType out_dtype = x_in.dtype();
  // bf16 / f16 (and autocast) compute in f32, as the other fused ops.
  auto f32 = [&](const Tensor& t) {
    const Tensor a = detail::autocast_f32(t);
    return a.defined() && is_reduced_float(a.dtype()) ? a.to(DType::f32) : a;
  };
  const Tensor x = f32(x_in), w_hh = f32(w_hh_in), b_hh = f32(b_hh_in), h0 = f32(h0_in), c0 = f32(c0_in),
               w_hr = f32(w_hr_in);
  check_float(x, "rnn_layer");
  check_layer(mode, x, bs, w_hh, b_hh, h0, c0, w_hr);
  const auto kind = static_cast<K::RnnKind>(mode);
  const bool need =
      wants_grad(x) || wants_grad(w_hh) || wants_grad(b_hh) || wants_grad(h0) || wants_grad(c0) || wants_grad(w_hr);
  auto fw = std::make_shared<K::RnnForward>(K::rnn_forward(kind, x, bs, w_hh, b_hh, h0, c0, w_hr, reverse, need));
  Tensor y = fw->y;
  fw->y = y.detach();  // the node's closure keeps the values, not the node's own output
  y = record(
      "rnn_layer", y, {x, w_hh, b_hh, h0, c0, w_hr},
      [fw, bs, kind, reverse, sw = save_if(need, w_hh), swr = save_if(need, w_hr), has_bias = b_hh.defined()](
          const Tensor& g, NeedsGrad needs) {
        K::RnnGrads r = K::rnn_backward(kind, *fw, g, bs, sw.get(), has_bias, swr.get(), reverse);
        Grads out{r.dxproj, r.dw_hh, r.db_hh, r.dh0, r.dc0, r.dw_hr};
        for (size_t i = 0; i < out.size(); ++i)
          if (!needs[i]) out[i] = Tensor{};
        return out;
      },
      [&] {
        return Composite{
            [mode, bs, reverse](const std::vector<Tensor>& in) { return rnn_layer_composite(mode, in, bs, reverse); },
            {Saved(x), Saved(w_hh), Saved(b_hh), Saved(h0), Saved(c0), Saved(w_hr)}};
      });
  const int64_t N = x.size(0), B = h0.size(0), P = h0.size(1);
  RnnLayerOutput out{y.narrow(0, 0, N * P).reshape({N, P}), y.narrow(0, N * P, B * P).reshape({B, P}), Tensor{}};
  if (mode == RnnMode::lstm) out.c_n = y.narrow(0, N * P + B * P, c0.numel()).reshape(c0.shape());
  if (is_reduced_float(out_dtype)) {
    out.output = out.output.to(out_dtype), out.h_n = out.h_n.to(out_dtype);
    if (out.c_n.defined()) out.c_n = out.c_n.to(out_dtype);
  }
  return out;
} catch (const Error& e) { detail::rethrow_in_op("rnn_layer", e); }

namespace {

// A cell: rnn_layer over one step of B rows.
RnnLayerOutput cell(RnnMode mode, const char* name, const Tensor& input, const Tensor& hx, const Tensor& cx,
                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  AG_CHECK(input.dim() == 2 && hx.dim() == 2 && w_ih.dim() == 2 && input.size(1) == w_ih.size(1) &&
               hx.size(0) == input.size(0),
           ShapeError, name, ": input ", input.shape(), " must be (B, I) for w_ih ", w_ih.shape(), " and hx ",
           hx.shape(), " (B, H)");
  AG_CHECK(input.size(0) > 0, ValueError, name, ": empty batch, input ", input.shape());
  return rnn_layer(mode, linear(input, w_ih, b_ih), {input.size(0)}, w_hh, b_hh, hx, cx);
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return cell(RnnMode::rnn_tanh, "rnn_tanh_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).h_n;
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return cell(RnnMode::rnn_relu, "rnn_relu_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).h_n;
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  AG_CHECK(hx.size() == 2, ValueError, "lstm_cell: hx must be {h, c}, got ", hx.size(), " tensors");
  RnnLayerOutput r = cell(RnnMode::lstm, "lstm_cell", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh);
  return {r.h_n, r.c_n};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return cell(RnnMode::gru, "gru_cell", input, hx, {}, w_ih, w_hh, b_ih, b_hh).h_n;
}

}  // namespace ag
