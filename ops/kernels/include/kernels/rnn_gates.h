#pragma once
// The fused gate steps of the recurrent layers (rnn.cpp), float and double: one pass over
// a step's n active rows of hidden size H does the gates' nonlinearities and the state
// update, forward, and the same rows' pre-activation gradients, backward. Rows are
// contiguous (gates 4H or 3H wide, states H wide). Gate order is PyTorch's: LSTM i, f, g,
// o; GRU r, z, n. sigmoid(x) = 1 / (1 + exp(-x)); special values (inf, NaN) go through
// as through the scalar formulas.
#include <cstdint>

#include "kernels/dispatch.h"

namespace ag::kernels {

// LSTM forward. acts (n, 4H): in the pre-activations, out i, f, g, o; c (n, H): in the
// previous cell state, out c = f c_prev + i g; tanh_c = tanh(c); r = o tanh_c (the
// hidden state, or what proj_size's weight_hr projects).
template <class T>
using LstmCellRowsFn = void (*)(T* acts, T* c, T* tanh_c, T* r, int64_t n, int64_t H);
AG_DECLARE_FLOAT_DISPATCH(LstmCellRowsFn, lstm_cell_rows);

// LSTM backward. From acts, tanh_c, c_prev (n, H) and dr (n, H): dgates (n, 4H), the
// pre-activation gradients; dc (n, H): in dL/dc from the next step, out dL/dc_prev.
template <class T>
using LstmCellBackwardRowsFn = void (*)(const T* acts, const T* tanh_c, const T* c_prev, const T* dr, T* dc, T* dgates,
                                        int64_t n, int64_t H);
AG_DECLARE_FLOAT_DISPATCH(LstmCellBackwardRowsFn, lstm_cell_backward_rows);

// GRU forward. xg (n, 3H) the input projection, hg (n, 3H) = h_prev W_hh^T + b_hh,
// h_prev (n, H): acts (n, 3H) = r, z, n and h = (h_prev - n) z + n (PyTorch's order).
template <class T>
using GruCellRowsFn = void (*)(const T* xg, const T* hg, const T* h_prev, T* acts, T* h, int64_t n, int64_t H);
AG_DECLARE_FLOAT_DISPATCH(GruCellRowsFn, gru_cell_rows);

// GRU backward. From acts, hg, h_prev and dh (n, H): dxg (n, 3H) and dhg (n, 3H), the
// gradients of the input projection and of h_prev W_hh^T + b_hh, and dh_prev (n, H),
// the direct part dh z (the caller adds dhg W_hh).
template <class T>
using GruCellBackwardRowsFn = void (*)(const T* acts, const T* hg, const T* h_prev, const T* dh, T* dxg, T* dhg,
                                       T* dh_prev, int64_t n, int64_t H);
AG_DECLARE_FLOAT_DISPATCH(GruCellBackwardRowsFn, gru_cell_backward_rows);

// Elman RNN forward, in place: a (count) pre-activations -> tanh(a), or relu(a) (NaN kept).
template <class T>
using RnnCellRowsFn = void (*)(T* a, int64_t count, bool relu);
AG_DECLARE_FLOAT_DISPATCH(RnnCellRowsFn, rnn_cell_rows);

// Elman RNN backward: da = dh (1 - h^2), or dh where h > 0 (else 0), over count elements.
template <class T>
using RnnCellBackwardRowsFn = void (*)(const T* h, const T* dh, T* da, int64_t count, bool relu);
AG_DECLARE_FLOAT_DISPATCH(RnnCellBackwardRowsFn, rnn_cell_backward_rows);

}  // namespace ag::kernels
