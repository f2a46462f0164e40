// Module table lines: recurrent modules (attograd/nn/rnn.h) on a (T 5, B 2, I 3) sequence,
// and the cells on a (B 2, I 3) step; every result (output, h_n, c_n) is checked.
#include "module_table.h"

namespace module_table {
namespace {
template <class Options>
Json rnn_defaults(const Options& o) {
  Json j{{"num_layers", o.num_layers()},
         {"bias", o.bias()},
         {"batch_first", o.batch_first()},
         {"dropout", o.dropout()},
         {"bidirectional", o.bidirectional()}};
  if constexpr (requires { o.proj_size(); }) j["proj_size"] = o.proj_size();
  return j;
}
Json cell_defaults() { return Json{{"bias", nn::RNNCellOptionsBase(3, 4).bias()}}; }
}  // namespace

AG_MODULE_TABLE(rnn) {
  return {
      // Dropout between the two layers in training: eval is the stack without it.
      {.name = "RNN num_layers 2 dropout",
       .make = [] { return unary(nn::RNN(nn::RNNOptions(3, 4).num_layers(2).dropout(0.5))); },
       .inputs = {{5, 2, 3}},
       .outputs = {{5, 2, 4}, {2, 2, 4}},
       .grad = Grad::eval,
       .defaults = [] { return rnn_defaults(nn::RNNOptions(3, 4)); },
       .eval_ref = without_dropout([] { return unary(nn::RNN(nn::RNNOptions(3, 4).num_layers(2))); }),
       .torch = "RNN"},
      {.name = "LSTM",
       .make = [] { return unary(nn::LSTM(3, 4)); },
       .inputs = {{5, 2, 3}},
       .outputs = {{5, 2, 4}, {1, 2, 4}, {1, 2, 4}},
       .defaults = [] { return rnn_defaults(nn::LSTMOptions(3, 4)); }},
      {.name = "GRU bidirectional",
       .make = [] { return unary(nn::GRU(nn::GRUOptions(3, 4).bidirectional(true))); },
       .inputs = {{5, 2, 3}},
       .outputs = {{5, 2, 8}, {2, 2, 4}},
       .defaults = [] { return rnn_defaults(nn::GRUOptions(3, 4)); },
       .torch = "GRU"},
      {.name = "RNNCell",
       .make = [] { return unary(nn::RNNCell(3, 4)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 4}},
       .defaults =
           [] {
             nn::RNNCellOptions o(3, 4);
             return Json{{"bias", o.bias()}, {"nonlinearity", o.nonlinearity() == kTanh ? "tanh" : "relu"}};
           }},
      {.name = "LSTMCell",
       .make = [] { return unary(nn::LSTMCell(3, 4)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 4}, {2, 4}},
       .defaults = cell_defaults},
      {.name = "GRUCell",
       .make = [] { return unary(nn::GRUCell(3, 4)); },
       .inputs = {{2, 3}},
       .outputs = {{2, 4}},
       .defaults = cell_defaults},
  };
}

}  // namespace module_table
