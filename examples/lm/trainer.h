#pragma once
// Training for the character-level LM, shared by the lm binary and lm/examples/lm/tests/test_lm.cpp:
// a Transformer (gpt.h) or a recurrent model (rnn_lm.h), both behind model.h's CharLM;
// AdamW (decoupled weight decay on the weight matrices of Linear and recurrent layers
// only: biases, norms and embeddings form a group without decay), linear warm-up then
// cosine decay to lr/10, global gradient clipping, gradient accumulation over `accum` micro-batches, and the
// held-out loss over every window of the validation split. `precision` bf16 or f16
// runs the forward and the loss under ag::autocast (f32 master weights and optimizer
// state, as torch.autocast); f16 also scales the loss with amp::GradScaler.
#include <string>
#include <vector>

#include "../common/precision.h"
#include "data.h"
#include "gpt.h"
#include "rnn_lm.h"

namespace lm {

enum class Arch { transformer, lstm, gru };

struct Config {
  Arch arch = Arch::transformer;
  int64_t context = 128, d_model = 128, heads = 4, layers = 4;
  int64_t kv_heads = 0;  // 0: heads
  // Defaults: a LLaMA-style block (RMSNorm, rotary positions, SwiGLU) with dropout 0.1;
  // at equal steps it reached a held-out loss 0.3 nats/char lower than the GPT-2-style
  // block (LayerNorm, learned positions, GELU) on the license texts (README).
  Norm norm = Norm::rms;
  Position pos = Position::rope;
  MlpKind mlp = MlpKind::swiglu;
  bool tie = false;
  bool checkpoint_activations = false;  // recompute each block's forward in backward
  DType precision = DType::f32;         // f32, or bf16 / f16 autocast (mixed precision)
  double dropout = 0.1;                 // lstm, gru: between the recurrent layers
  // The recurrent models (arch lstm or gru): embedding width, hidden width (0:
  // default_hidden, sized to the Transformer's parameter count) and layers.
  int64_t embed = 64, hidden = 0, rnn_layers = 2;
  int64_t batch = 32, accum = 1, steps = 600, warmup = 100;
  double lr = 3e-3, weight_decay = 0.1, clip = 1.0, beta2 = 0.99;
  uint64_t seed = 1;

  GPTOptions model_options(int64_t vocab) const {
    return GPTOptions(vocab)
        .context(context)
        .d_model(d_model)
        .heads(heads)
        .kv_heads(kv_heads > 0 ? kv_heads : heads)
        .layers(layers)
        .norm(norm)
        .pos(pos)
        .mlp(mlp)
        .tie(tie)
        .checkpoint_activations(checkpoint_activations)
        .dropout(dropout);
  }
  RnnLMOptions rnn_options(int64_t vocab) const {
    return RnnLMOptions(vocab, arch == Arch::gru ? RnnMode::gru : RnnMode::lstm)
        .embed(embed)
        .hidden(hidden)
        .layers(rnn_layers)
        .dropout(dropout);
  }
};

// "transformer", "lstm", "gru" and back (ValueError naming --arch otherwise).
const char* arch_name(Arch a);
Arch arch_from_name(const std::string& name);

// The model config.arch asks for, initialized from config.seed.
CharLM make_model(const Config& c, int64_t vocab);

// The two AdamW groups: weight matrices of Linear and recurrent layers (decay) and
// everything else (none). A tied head weight is the token embedding (listed once, as
// tok_emb.weight): no decay.
std::vector<optim::ParamGroup<optim::AdamWOptions>> param_groups(const CharLM& model, const Config& c);

// Everything a run owns, so that a checkpoint captures and restores all of it.
struct Run {
  Config config;
  CharLM model;  // a GPT or an RnnLM, by config.arch
  optim::AdamW opt;
  optim::CosineAnnealingLR sched;
  amp::GradScaler scaler;  // enabled for f16 only; a pass-through otherwise
  Generator data_gen;
  Run(const Config& c, int64_t vocab);
  // The model as what it is (ValueError for the other kind), for their own APIs.
  GPT gpt() const;
  RnnLM rnn() const;
};

// A checkpoint's extra entries: the data stream ("data_gen") and, with f16, the
// GradScaler's state (PyTorch's keys under "grad_scaler."); and their restore
// (ValueError without "data_gen"; a checkpoint of another precision has no scale).
Metadata checkpoint_extra(const Run& run);
void restore_checkpoint_extra(Run& run, const Metadata& extra);

struct StepStats {
  int64_t step;  // optimizer steps taken, this one included (a skipped f16 step counts)
  double loss;   // mean over the accumulated micro-batches (nats per character)
  double lr, grad_norm;
  int64_t tokens;  // characters predicted
  bool skipped;    // f16: the GradScaler found an inf/NaN gradient and skipped the update
};

// One optimizer step over config.accum micro-batches of random training windows.
StepStats train_step(Run& r, const std::vector<int64_t>& train_ids);

// Mean cross-entropy (nats per character) over the batches, in eval mode, no graph,
// the forward in `precision` (autocast for bf16 / f16).
double evaluate(const CharLM& model, const std::vector<Batch>& batches, DType precision = DType::f32);

}  // namespace lm
