// Op table lines: the recurrent layer and cells (ops/rnn.cpp). A line returns every
// output flattened into one tensor (output, h_n, c_n), so that gradcheck sees them all;
// gradgradcheck differentiates the step-by-step composite the fused backward stands for.
// Packed lines use batch_sizes {3, 2, 2, 1}: rows that stop early (forward) or start late
// (reverse) keep or take h0 across steps.
#include "op_table.h"

namespace op_table {
namespace {

Tensor flat(const RnnLayerOutput& r) {
  std::vector<Tensor> parts{r.output.reshape({-1}), r.h_n.reshape({-1})};
  if (r.c_n.defined()) parts.push_back(r.c_n.reshape({-1}));
  return cat(parts, 0);
}

const std::vector<int64_t> kPacked{3, 2, 2, 1};  // 8 rows, B = 3

}  // namespace

AG_OP_TABLE(rnn) {
  // rnn_layer: input_proj (N, G H), w_hh (G H, P), b_hh (G H), h0 (B, P), c0 (B, H), w_hr (P, H).
  return {
      {"rnn_layer lstm",
       {{6, 8}, {8, 2}, {8}, {2, 2}, {2, 2}},
       [](auto& x) {
         return flat(rnn_layer(RnnMode::lstm, x[0], {2, 2, 2}, x[1], x[2], x[3], x[4]));
       }},
      {"rnn_layer lstm packed reverse",
       {{8, 8}, {8, 2}, {8}, {3, 2}, {3, 2}},
       [](auto& x) { return flat(rnn_layer(RnnMode::lstm, x[0], kPacked, x[1], x[2], x[3], x[4], {}, true)); }},
      {"rnn_layer lstm proj_size packed",
       {{8, 12}, {12, 2}, {12}, {3, 2}, {3, 3}, {2, 3}},
       [](auto& x) { return flat(rnn_layer(RnnMode::lstm, x[0], kPacked, x[1], x[2], x[3], x[4], x[5])); }},
      {"rnn_layer gru packed",
       {{8, 6}, {6, 2}, {6}, {3, 2}},
       [](auto& x) { return flat(rnn_layer(RnnMode::gru, x[0], kPacked, x[1], x[2], x[3])); }},
      {"rnn_layer gru reverse no bias",
       {{6, 9}, {9, 3}, {2, 3}},
       [](auto& x) {
         return flat(rnn_layer(RnnMode::gru, x[0], {2, 2, 2}, x[1], {}, x[2], {}, {}, true));
       }},
      {"rnn_layer rnn_tanh packed reverse",
       {{8, 3}, {3, 3}, {3}, {3, 3}},
       [](auto& x) { return flat(rnn_layer(RnnMode::rnn_tanh, x[0], kPacked, x[1], x[2], x[3], {}, {}, true)); }},
      // relu: small weights and a shifted input keep every pre-activation away from 0.
      {"rnn_layer rnn_relu",
       {{4, 2}, {2, 2}, {2, 2}},
       [](auto& x) {
         return flat(rnn_layer(RnnMode::rnn_relu, x[0] * 0.1 + 1.0, {2, 2}, x[1] * 0.01, {}, x[2] * 0.01));
       }},

      // The cells: input (B, I), hx (B, H), w_ih (G H, I), w_hh (G H, H), b_ih, b_hh (G H).
      {"lstm_cell",
       {{2, 3}, {2, 2}, {2, 2}, {8, 3}, {8, 2}, {8}, {8}},
       [](auto& x) {
         auto [h, c] = lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6]);
         return cat({h, c}, 1);
       }},
      {"gru_cell",
       {{2, 3}, {2, 2}, {6, 3}, {6, 2}, {6}, {6}},
       [](auto& x) { return gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"gru_cell no bias", {{1, 3}, {1, 2}, {6, 3}, {6, 2}}, [](auto& x) { return gru_cell(x[0], x[1], x[2], x[3]); }},
      {"rnn_tanh_cell",
       {{2, 3}, {2, 2}, {2, 3}, {2, 2}, {2}, {2}},
       [](auto& x) { return rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"rnn_relu_cell",
       {{2, 3}, {2, 2}, {2, 3}, {2, 2}, {2}},
       [](auto& x) { return rnn_relu_cell(x[0], x[1] * 0.01, x[2] * 0.01, x[3] * 0.01, x[4] * 0.1 + 1.0); }},
  };
}

}  // namespace op_table
