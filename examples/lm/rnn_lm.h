#pragma once
// A recurrent character-level language model, the lm example's alternative to the
// Transformer (--arch lstm | gru), written with the public nn API:
//   tok_emb   Embedding(V, E)                                 ids (B, T) -> (B, T, E)
//   rnn       nn::LSTM or nn::GRU (E -> H), L layers, batch_first, dropout between
//             layers (in training)                            -> (B, T, H)
//   head      Linear(H, V) with a bias                        -> logits (B, T, V)
// Parameter names are those of a PyTorch module with the attributes tok_emb, rnn and
// head (tools/check_lm_model.py rebuilds it): tok_emb.weight, rnn.weight_ih_l<k>,
// rnn.weight_hh_l<k>, rnn.bias_ih_l<k>, rnn.bias_hh_l<k>, head.weight, head.bias. Each
// module keeps PyTorch's default initialization (embedding N(0, 1), recurrent weights
// and biases U(-1/sqrt(H), 1/sqrt(H)), head U(-1/sqrt(H), 1/sqrt(H))).
// forward starts each window from a zero state, as training and the held-out loss use
// it; decoding carries the state from one character to the next, so a prompt and its
// continuation have no length limit (max_length() is 0).
// Legend: B batch, T sequence length, E embedding width, H hidden width, L layers, V vocab.
#include <memory>
#include <ostream>

#include "model.h"

namespace lm {

// The recurrent state between calls: h (L, B, H) and, for an LSTM, c (L, B, H).
// Undefined tensors stand for zeros (the start of a text).
struct RnnState {
  Tensor h, c;
};

// The hidden width that brings a 2-layer model with E = 64 on the default data's 84
// characters close to the default Transformer's 818,496 parameters: 248 for an LSTM
// (831,796), 288 for a GRU (834,900); multiples of 8, both within 2%.
int64_t default_hidden(RnnMode mode);

struct RnnLMOptions {
  RnnLMOptions(int64_t vocab, RnnMode mode) : vocab_(vocab), mode_(mode) {}
  AG_ARG(int64_t, vocab);
  AG_ARG(RnnMode, mode);          // RnnMode::lstm or RnnMode::gru
  AG_ARG(int64_t, embed) = 64;    // E
  AG_ARG(int64_t, hidden) = 0;    // H; 0: default_hidden(mode)
  AG_ARG(int64_t, layers) = 2;    // L
  AG_ARG(double, dropout) = 0.0;  // between recurrent layers, in training
};

class RnnLMImpl : public CharLMImpl {
 public:
  explicit RnnLMImpl(const RnnLMOptions& o);
  // ids (B, T) i64 -> logits (B, T, V), from a zero state.
  Tensor forward(const Tensor& ids) override;
  // ids (B, T) after `state` -> logits (B, T, V); state becomes the state after the
  // last of them (h, c (L, B, H)).
  Tensor forward_step(const Tensor& ids, RnnState& state);
  int64_t max_length() const override { return 0; }
  std::unique_ptr<Decoder> decoder() override;  // forward_step over a carried state
  int64_t hidden() const { return options.hidden() > 0 ? options.hidden() : default_hidden(options.mode()); }
  void pretty_print(std::ostream& os) const override;

  RnnLMOptions options;
  nn::Embedding tok_emb{nullptr};
  nn::LSTM lstm{nullptr};  // exactly one of the two is registered, as "rnn", by options.mode
  nn::GRU gru{nullptr};
  nn::Linear head{nullptr};
};
AG_MODULE(RnnLM);

}  // namespace lm
