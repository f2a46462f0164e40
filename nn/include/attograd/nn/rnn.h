#pragma once
/// \file
/// Recurrent modules with LibTorch's options and forward signatures and PyTorch's
/// semantics, state-dict names and initialization: nn::RNN (tanh or relu), nn::LSTM
/// (proj_size), nn::GRU and the cells nn::RNNCell, LSTMCell, GRUCell.
///
/// Parameters per layer k and direction (suffix "" or "_reverse"), in PyTorch's order:
/// weight_ih_l{k} (G H, in), weight_hh_l{k} (G H, P), bias_ih_l{k}, bias_hh_l{k} (G H),
/// weight_hr_l{k} (P, H) with proj_size; G = 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n),
/// 1 (RNN); P = proj_size or H; in = input_size for layer 0, else P times the number of
/// directions. All start U(-1/sqrt(H), 1/sqrt(H)).
///
/// Each layer and direction runs as one op (ag::rnn_layer, attograd/ops/rnn.h): the input
/// projection of all steps is one GEMM, each step one GEMM plus a fused gate pass, and
/// the backward through time one tape node. nn/README.md has the layout and an example.
#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include "attograd/nn/init.h"
#include "attograd/nn/module.h"
#include "attograd/nn/packed_sequence.h"
#include "attograd/ops.h"

namespace ag {
/// torch::kTanh / torch::kReLU: `nn::RNNOptions(8, 16).nonlinearity(ag::kReLU)`.
using nn::init::kReLU;
using nn::init::kTanh;  ///< the default nonlinearity of RNN and RNNCell
}  // namespace ag

namespace ag::nn {

/// The nonlinearity of RNN and RNNCell: kTanh or kReLU.
using init::NonlinearityType;

/// The options every recurrent module shares (LibTorch's detail::RNNOptionsBase).
struct RNNOptionsBase {
  /// The recurrence, the input width and the hidden width.
  RNNOptionsBase(RnnMode mode, int64_t input_size, int64_t hidden_size)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(RnnMode, mode);                ///< RNN_TANH, RNN_RELU, LSTM or GRU
  AG_ARG(int64_t, input_size);          ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);         ///< features of the hidden state (H)
  AG_ARG(int64_t, num_layers) = 1;      ///< stacked layers
  AG_ARG(bool, bias) = true;            ///< bias_ih and bias_hh
  AG_ARG(bool, batch_first) = false;    ///< input and output (B, T, *) instead of (T, B, *)
  AG_ARG(double, dropout) = 0.0;        ///< dropout on each layer's output but the last, in training
  AG_ARG(bool, bidirectional) = false;  ///< a second direction from the last step to the first
  AG_ARG(int64_t, proj_size) = 0;       ///< LSTM: h projected to this width (0: none)
};

/// nn::RNN's options: `.nonlinearity(ag::kReLU)` for relu (default ag::kTanh).
struct RNNOptions {
  /// The required options.
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(int64_t, input_size);                     ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);                    ///< features of the hidden state (H)
  AG_ARG(int64_t, num_layers) = 1;                 ///< stacked layers
  AG_ARG(NonlinearityType, nonlinearity) = kTanh;  ///< kTanh or kReLU
  AG_ARG(bool, bias) = true;                       ///< bias_ih and bias_hh
  AG_ARG(bool, batch_first) = false;               ///< (B, T, *) instead of (T, B, *)
  AG_ARG(double, dropout) = 0.0;                   ///< between layers, in training
  AG_ARG(bool, bidirectional) = false;             ///< two directions
};

/// nn::LSTM's options.
struct LSTMOptions {
  /// The required options.
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(int64_t, input_size);          ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);         ///< features of the cell state (H)
  AG_ARG(int64_t, num_layers) = 1;      ///< stacked layers
  AG_ARG(bool, bias) = true;            ///< bias_ih and bias_hh
  AG_ARG(bool, batch_first) = false;    ///< (B, T, *) instead of (T, B, *)
  AG_ARG(double, dropout) = 0.0;        ///< between layers, in training
  AG_ARG(bool, bidirectional) = false;  ///< two directions
  AG_ARG(int64_t, proj_size) = 0;       ///< h = (o tanh c) W_hr^T of this width (0: none, h has H)
};

/// nn::GRU's options.
struct GRUOptions {
  /// The required options.
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(int64_t, input_size);          ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);         ///< features of the hidden state (H)
  AG_ARG(int64_t, num_layers) = 1;      ///< stacked layers
  AG_ARG(bool, bias) = true;            ///< bias_ih and bias_hh
  AG_ARG(bool, batch_first) = false;    ///< (B, T, *) instead of (T, B, *)
  AG_ARG(double, dropout) = 0.0;        ///< between layers, in training
  AG_ARG(bool, bidirectional) = false;  ///< two directions
};

/// The body shared by RNN, LSTM and GRU (LibTorch's RNNImplBase).
class RNNImplBase : public Module {
 public:
  /// Registers the parameters in PyTorch's order and initializes them.
  explicit RNNImplBase(const RNNOptionsBase& options);
  /// U(-1/sqrt(H), 1/sqrt(H)) for every parameter, as PyTorch.
  void reset_parameters();
  /// Nothing to do (the weights are used where they are); kept for ports.
  void flatten_parameters() {}
  /// Every parameter in registration order (PyTorch's _flat_weights).
  std::vector<Tensor> flat_weights() const;
  /// Per layer and direction: {w_ih, w_hh[, b_ih, b_hh][, w_hr]} (PyTorch's all_weights).
  std::vector<std::vector<Tensor>> all_weights() const;
  void pretty_print(std::ostream& os) const override;  ///< PyTorch's repr, e.g. LSTM(10, 20, num_layers=2)

  RNNOptionsBase options_base;  ///< the options it was built with

 protected:
  /// The stack over packed rows: data (N, I), batch_sizes, hx (L D, B, P) and cx
  /// (L D, B, H) for LSTM (both already in the packed column order) -> output (N, D P),
  /// h_n, c_n.
  RnnLayerOutput run(const Tensor& data, const std::vector<int64_t>& batch_sizes, const Tensor& hx, const Tensor& cx);
  /// A padded input (T, B, I), (B, T, I) or unbatched (T, I) -> its packed rows and
  /// batch sizes; hx / cx given or zeros, checked -> output and states in the input's
  /// layout.
  RnnLayerOutput run_padded(const Tensor& input, const Tensor& hx, const Tensor& cx);
  /// The same for a PackedSequence (hx / cx in the caller's batch order).
  RnnLayerOutput run_packed(const utils::rnn::PackedSequence& input, const Tensor& hx, const Tensor& cx);
  const char* name_;          ///< "RNN", "LSTM", "GRU" in errors
  std::vector<Tensor> flat_;  ///< the parameters, registered by address (sized once)
};

/// torch.nn.RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).
class RNNImpl : public RNNImplBase {
 public:
  /// Builds the module from its options.
  explicit RNNImpl(const RNNOptions& options);
  /// Shorthand for RNNOptions(input_size, hidden_size).
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  /// input (T, B, I) ((B, T, I) batch_first, (T, I) unbatched), hx (L D, B, H) or zeros
  /// -> (output (T, B, D H), h_n (L D, B, H)).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// A PackedSequence in -> (PackedSequence out, h_n); hx in the original batch order.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& input,
                                                                           const Tensor& hx = {});
  RNNOptions options;  ///< the options it was built with
};
/// The holder of RNNImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(RNN);

/// torch.nn.LSTM (with proj_size).
class LSTMImpl : public RNNImplBase {
 public:
  /// Builds the module from its options.
  explicit LSTMImpl(const LSTMOptions& options);
  /// Shorthand for LSTMOptions(input_size, hidden_size).
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  /// input (T, B, I) ((B, T, I) batch_first, (T, I) unbatched), hx = (h0 (L D, B, P),
  /// c0 (L D, B, H)) or zeros -> (output (T, B, D P), (h_n, c_n)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  /// A PackedSequence in -> (PackedSequence out, (h_n, c_n)); hx in the original batch order.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  LSTMOptions options;  ///< the options it was built with
};
/// The holder of LSTMImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LSTM);

/// torch.nn.GRU.
class GRUImpl : public RNNImplBase {
 public:
  /// Builds the module from its options.
  explicit GRUImpl(const GRUOptions& options);
  /// Shorthand for GRUOptions(input_size, hidden_size).
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  /// input (T, B, I) ((B, T, I) batch_first, (T, I) unbatched), hx (L D, B, H) or zeros
  /// -> (output (T, B, D H), h_n (L D, B, H)).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
  /// A PackedSequence in -> (PackedSequence out, h_n); hx in the original batch order.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& input,
                                                                           const Tensor& hx = {});
  GRUOptions options;  ///< the options it was built with
};
/// The holder of GRUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(GRU);

/// Options of nn::RNNCell.
struct RNNCellOptions {
  /// The required options.
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(int64_t, input_size);                     ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);                    ///< features of the hidden state (H)
  AG_ARG(bool, bias) = true;                       ///< bias_ih and bias_hh
  AG_ARG(NonlinearityType, nonlinearity) = kTanh;  ///< kTanh or kReLU
};
/// Options of nn::LSTMCell and nn::GRUCell.
struct RNNCellOptionsBase {
  /// The required options.
  RNNCellOptionsBase(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  AG_ARG(int64_t, input_size);   ///< features of the input (I)
  AG_ARG(int64_t, hidden_size);  ///< features of the hidden state (H)
  AG_ARG(bool, bias) = true;     ///< bias_ih and bias_hh
};
using LSTMCellOptions = RNNCellOptionsBase;  ///< nn::LSTMCell's options
using GRUCellOptions = RNNCellOptionsBase;   ///< nn::GRUCell's options

/// The parameters every cell has: weight_ih (G H, I), weight_hh (G H, H), bias_ih,
/// bias_hh (G H), U(-1/sqrt(H), 1/sqrt(H)) as PyTorch.
class RNNCellImplBase : public Module {
 public:
  /// Registers and initializes the parameters for `gates` gates.
  RNNCellImplBase(const char* name, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  void reset_parameters();                             ///< PyTorch's initialization
  void pretty_print(std::ostream& os) const override;  ///< e.g. LSTMCell(10, 20)

  Tensor weight_ih;  ///< (G H, I)
  Tensor weight_hh;  ///< (G H, H)
  Tensor bias_ih;    ///< (G H) or undefined
  Tensor bias_hh;    ///< (G H) or undefined

 protected:
  /// input (B, I) or (I) and hx (B, H) / (H) (zeros when undefined), checked; `batched`
  /// tells whether the input had a batch dim.
  std::tuple<Tensor, Tensor, bool> prepare(const Tensor& input, const Tensor& hx, const char* hx_name) const;
  const char* name_;     ///< in errors and printing
  int64_t input_size_;   ///< I
  int64_t hidden_size_;  ///< H
};

/// torch.nn.RNNCell: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).
class RNNCellImpl : public RNNCellImplBase {
 public:
  /// Builds the cell from its options.
  explicit RNNCellImpl(const RNNCellOptions& options);
  /// Shorthand for RNNCellOptions(input_size, hidden_size).
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  /// input (B, I) or (I), hx (B, H) / (H) or zeros -> h' of hx's shape.
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  RNNCellOptions options;  ///< the options it was built with
};
/// The holder of RNNCellImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(RNNCell);

/// torch.nn.LSTMCell.
class LSTMCellImpl : public RNNCellImplBase {
 public:
  /// Builds the cell from its options.
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  /// Shorthand for LSTMCellOptions(input_size, hidden_size).
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  /// input (B, I) or (I), hx = (h, c) (B, H) / (H) or zeros -> (h', c').
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx = std::nullopt);
  LSTMCellOptions options;  ///< the options it was built with
};
/// The holder of LSTMCellImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LSTMCell);

/// torch.nn.GRUCell.
class GRUCellImpl : public RNNCellImplBase {
 public:
  /// Builds the cell from its options.
  explicit GRUCellImpl(const GRUCellOptions& options);
  /// Shorthand for GRUCellOptions(input_size, hidden_size).
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  /// input (B, I) or (I), hx (B, H) / (H) or zeros -> h' of hx's shape.
  Tensor forward(const Tensor& input, const Tensor& hx = {});
  GRUCellOptions options;  ///< the options it was built with
};
/// The holder of GRUCellImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(GRUCell);

}  // namespace ag::nn
