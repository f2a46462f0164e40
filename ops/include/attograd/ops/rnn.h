#pragma once
/// \file
/// Recurrent layers as ops (ops/rnn.cpp): `rnn_layer`, one layer in one direction over
/// a whole (packed) sequence as one fused op, and PyTorch's cell functions
/// (`torch.lstm_cell`, `gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`). The modules
/// (attograd/nn/rnn.h) stack them; nn/README.md ("Recurrent networks") describes the
/// layout. Gate order and formulas are PyTorch's:
///   RNN   h = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)   (or relu)
///   LSTM  i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the 4H gate pre-activations;
///         c = f c_prev + i g;  h = o tanh(c)  (then h W_hr^T with proj_size)
///   GRU   r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z);  n = tanh(x_n + r (h W_hn^T + b_hn));
///         h = (1 - z) n + z h_prev
#include <cstdint>
#include <tuple>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// The recurrence a layer runs (PyTorch's mode strings "RNN_TANH", "RNN_RELU", "LSTM", "GRU").
enum class RnnMode { rnn_tanh, rnn_relu, lstm, gru };

/// What rnn_layer returns: views of one recorded result.
struct RnnLayerOutput {
  Tensor output;  ///< (N, P): every step's hidden state, in input_proj's packed row order
  Tensor h_n;     ///< (B, P): each sequence's last hidden state (first in time when reversed)
  Tensor c_n;     ///< (B, H): LSTM's last cell state; undefined for the others
};

/// One recurrent layer in one direction over a packed sequence, as one op: the tape
/// holds one node for the whole sequence, whose backward runs backpropagation through
/// time in one pass (one GEMM per step, the weights' gradients one GEMM each); under
/// create_graph it differentiates the step-by-step composite instead, so second
/// derivatives work.
///   input_proj   (N, G H): x W_ih^T + b_ih for every packed row (G = 4 LSTM, 3 GRU, 1 RNN)
///   batch_sizes  rows per time step, non-increasing, summing to N (PackedSequence's);
///                a padded batch of T steps is {B, ..., B}
///   w_hh (G H, P), b_hh (G H) or undefined, h0 (B, P) with B = batch_sizes[0],
///   c0 (B, H) for LSTM, w_hr (P, H) for LSTM with proj_size (else undefined, P = H).
/// `reverse` runs from the last step to the first (a bidirectional layer's second
/// direction). f32 or f64 (bf16 / f16 compute in f32, results rounded back); ShapeError
/// naming every shape for sizes that do not fit, ValueError for bad batch_sizes.
RnnLayerOutput rnn_layer(RnnMode mode, const Tensor& input_proj, const std::vector<int64_t>& batch_sizes,
                         const Tensor& w_hh, const Tensor& b_hh, const Tensor& h0, const Tensor& c0 = {},
                         const Tensor& w_hr = {}, bool reverse = false);

/// torch.rnn_tanh_cell: input (B, I), hx (B, H), w_ih (H, I), w_hh (H, H), biases (H)
/// or undefined -> h (B, H) = tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// torch.rnn_relu_cell: rnn_tanh_cell with relu.
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// torch.lstm_cell: input (B, I), hx = {h (B, H), c (B, H)}, w_ih (4H, I), w_hh (4H, H),
/// biases (4H) or undefined -> (h, c).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// torch.gru_cell: input (B, I), hx (B, H), w_ih (3H, I), w_hh (3H, H), biases (3H) or
/// undefined -> h (B, H).
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih = {},
                const Tensor& b_hh = {});

}  // namespace ag
