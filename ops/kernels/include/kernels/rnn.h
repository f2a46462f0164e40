#pragma once
// The recurrence of one recurrent layer in one direction (rnn.cpp), f32 or f64: the
// forward over all time steps, saving what the backward needs, and the backward
// through time. Internal header; the op and its autograd node are ops/rnn.cpp.
//
// Layout (PyTorch's PackedSequence): the input projection xproj (N, G H) holds the
// time steps one after another, step t's batch_sizes[t] active rows first (batch_sizes
// non-increasing, N their sum). A padded batch is the case batch_sizes = {B, ..., B}.
// The states h (B, P) and c (B, H) are updated in their first batch_sizes[t] rows at
// step t, so a shorter sequence keeps its last state to the end (forward), or starts
// from h0 when its first (last in time) step comes (reverse). P = H, or proj_size.
#include <vector>

#include "kernels/kernels.h"

namespace ag::kernels {

enum class RnnKind { rnn_tanh, rnn_relu, lstm, gru };

// The gates per hidden unit: 4 (LSTM), 3 (GRU), 1 (RNN).
inline int64_t rnn_gates(RnnKind k) { return k == RnnKind::lstm ? 4 : k == RnnKind::gru ? 3 : 1; }

struct RnnForward {
  // One flat tensor: output (N, P), then h_n (B, P), then c_n (B, H) for LSTM. One
  // tensor, so that the op is one autograd node with one gradient.
  Tensor y;
  // Saved for the backward (undefined unless asked for):
  Tensor hprev;  // (N, P): the hidden state each row entered its step with
  Tensor cprev;  // (N, H): LSTM, the cell state likewise
  Tensor acts;   // (N, G H): the gates after their nonlinearities (LSTM, GRU)
  Tensor aux;    // LSTM: tanh(c) (N, H); GRU: h_prev W_hh^T + b_hh (N, 3H)
  Tensor r;      // LSTM with proj_size: o tanh(c) (N, H), before weight_hr
};

// w_hh (G H, P); b_hh (G H) or undefined; h0 (B, P); c0 (B, H) for LSTM; w_hr (P, H)
// or undefined. All of xproj's dtype, contiguous or not. `reverse` walks the steps
// from the last to the first.
RnnForward rnn_forward(RnnKind kind, const Tensor& xproj, const std::vector<int64_t>& batch_sizes, const Tensor& w_hh,
                       const Tensor& b_hh, const Tensor& h0, const Tensor& c0, const Tensor& w_hr, bool reverse,
                       bool save);

struct RnnGrads {
  Tensor dxproj, dw_hh, db_hh, dh0, dc0, dw_hr;  // shaped as their inputs
};

// gy has y's shape; fw holds the forward's saved tensors (and y). Every gradient is
// computed (the GEMMs of the weights run once per layer, over all steps).
RnnGrads rnn_backward(RnnKind kind, const RnnForward& fw, const Tensor& gy, const std::vector<int64_t>& batch_sizes,
                      const Tensor& w_hh, bool has_bias, const Tensor& w_hr, bool reverse);

}  // namespace ag::kernels
