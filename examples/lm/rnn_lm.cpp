// The recurrent language model: see rnn_lm.h.
#include "rnn_lm.h"

#include <tuple>

namespace lm {

int64_t default_hidden(RnnMode mode) {
  // parameters = V E + L-layer recurrence + V H + V; with G gates, E = 64, L = 2:
  // G H (E + H) + 2 G H (first layer) + G H (2 H) + 2 G H (second) = 3 G H^2 + G H (E + 4).
  AG_CHECK(mode == RnnMode::lstm || mode == RnnMode::gru, ValueError, "RnnLM: the cell must be an LSTM or a GRU");
  return mode == RnnMode::lstm ? 248 : 288;
}

RnnLMImpl::RnnLMImpl(const RnnLMOptions& o) : CharLMImpl(o.mode() == RnnMode::lstm ? "LSTMLM" : "GRULM"), options(o) {
  AG_CHECK(o.vocab() > 0 && o.embed() > 0 && o.hidden() >= 0 && o.layers() > 0, ValueError, "RnnLM: vocab ", o.vocab(),
           ", embed ", o.embed(), " and layers ", o.layers(), " must be positive and hidden ", o.hidden(),
           " non-negative");
  const int64_t H = hidden();  // checks the mode
  tok_emb = register_module("tok_emb", nn::Embedding(o.vocab(), o.embed()));
  if (o.mode() == RnnMode::lstm)
    lstm = register_module(
        "rnn", nn::LSTM(nn::LSTMOptions(o.embed(), H).num_layers(o.layers()).batch_first(true).dropout(o.dropout())));
  else
    gru = register_module(
        "rnn", nn::GRU(nn::GRUOptions(o.embed(), H).num_layers(o.layers()).batch_first(true).dropout(o.dropout())));
  head = register_module("head", nn::Linear(H, o.vocab()));
}

Tensor RnnLMImpl::forward(const Tensor& ids) {
  RnnState zero;
  return forward_step(ids, zero);
}

Tensor RnnLMImpl::forward_step(const Tensor& ids, RnnState& state) {
  AG_CHECK(ids.dim() == 2 && ids.size(1) >= 1, ShapeError, "RnnLM: ids must be (B, T) with T >= 1, got shape ",
           ids.shape());
  const Tensor x = tok_emb(ids);  // (B, T, E)
  Tensor y;                       // (B, T, H)
  if (!lstm.is_empty()) {
    std::optional<std::tuple<Tensor, Tensor>> hc;
    if (state.h.defined()) hc = std::make_tuple(state.h, state.c);
    std::tuple<Tensor, Tensor> hc_n;
    std::tie(y, hc_n) = lstm(x, hc);
    std::tie(state.h, state.c) = hc_n;  // (L, B, H) each
  } else {
    std::tie(y, state.h) = gru(x, state.h);  // undefined h: zeros
  }
  return head(y);  // (B, T, V)
}

namespace {

class RnnDecoder : public Decoder {
 public:
  explicit RnnDecoder(RnnLMImpl& model) : model_(model) {}
  Tensor step(const Tensor& ids) override {  // (1, n) -> (1, n, V)
    Tensor logits = model_.forward_step(ids, state_);
    length_ += ids.size(1);
    return logits;
  }
  int64_t length() const override { return length_; }

 private:
  RnnLMImpl& model_;
  RnnState state_;  // zeros until the first step
  int64_t length_ = 0;
};

}  // namespace

std::unique_ptr<Decoder> RnnLMImpl::decoder() { return std::make_unique<RnnDecoder>(*this); }

void RnnLMImpl::pretty_print(std::ostream& os) const {
  os << name() << "(vocab=" << options.vocab() << ", embed=" << options.embed() << ", hidden=" << hidden()
     << ", layers=" << options.layers() << ", dropout=" << options.dropout() << ')';
}

}  // namespace lm
