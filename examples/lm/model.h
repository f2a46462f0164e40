#pragma once
// What the trainer and the sampler need of a character-level language model, so that
// both work for the Transformer (gpt.h) and the recurrent models (rnn_lm.h) alike:
//   forward     ids (B, T) -> next-character logits (B, T, V), every window from scratch
//   decoder     incremental decoding: a KV cache (GPT) or the recurrent state (LSTM, GRU)
//   max_length  the longest sequence forward takes (the GPT's context), 0: no limit
// Legend: B batch, T sequence length, n new tokens, V vocab.
#include <attograd/attograd.h>

#include <memory>
#include <string>

namespace lm {

using namespace ag;

// The state of one generation: the tokens fed so far, kept in whatever form lets the
// next token cost one position (a GPT's keys and values, an LSTM's h and c).
class Decoder {
 public:
  virtual ~Decoder() = default;
  // ids (1, n): the n tokens after those fed so far -> logits (1, n, V), equal to the
  // last n rows of forward over all length() + n tokens.
  virtual Tensor step(const Tensor& ids) = 0;
  virtual int64_t length() const = 0;  // tokens fed so far
};

class CharLMImpl : public nn::Module {
 public:
  explicit CharLMImpl(const std::string& name) : nn::Module(name) {}
  virtual Tensor forward(const Tensor& ids) = 0;  // (B, T) i64 -> (B, T, V)
  virtual int64_t max_length() const = 0;         // 0: any length
  // A fresh decoding state over this model (which must outlive it).
  virtual std::unique_ptr<Decoder> decoder() = 0;
};
// A handle to either model: `CharLM m(GPT(...).ptr()); Tensor logits = m(ids);`.
AG_MODULE(CharLM);

}  // namespace lm
