// Training for the character-level LM: see trainer.h.
#include "trainer.h"

#include <algorithm>

namespace lm {

const char* arch_name(Arch a) { return a == Arch::lstm ? "lstm" : a == Arch::gru ? "gru" : "transformer"; }

Arch arch_from_name(const std::string& name) {
  for (Arch a : {Arch::transformer, Arch::lstm, Arch::gru})
    if (name == arch_name(a)) return a;
  AG_CHECK(false, ValueError, "lm: --arch must be transformer, lstm or gru, got '", name, "'");
  return Arch::transformer;
}

CharLM make_model(const Config& c, int64_t vocab) {
  manual_seed(c.seed);
  if (c.arch == Arch::transformer) return CharLM(GPT(c.model_options(vocab)).ptr());
  return CharLM(RnnLM(c.rnn_options(vocab)).ptr());
}

std::vector<optim::ParamGroup<optim::AdamWOptions>> param_groups(const CharLM& model, const Config& c) {
  optim::ParamGroup<optim::AdamWOptions> decay{
      {}, optim::AdamWOptions(c.lr).betas({0.9, c.beta2}).weight_decay(c.weight_decay)};
  optim::ParamGroup<optim::AdamWOptions> no_decay{{},
                                                  optim::AdamWOptions(c.lr).betas({0.9, c.beta2}).weight_decay(0.0)};
  for (auto& [name, p] : model->named_parameters()) {
    // Matrices that multiply activations decay: the Linear weights and, in an LSTM or
    // GRU, weight_ih and weight_hh (the head's weight is a Linear's in both). weight_hh
    // is applied once per step, so its scale compounds over a window's 128 steps: decay
    // keeps it in check as it does the Linear weights'. Embeddings are tables looked up
    // (a rare character's row would shrink between its few updates), and biases and norm
    // gains are 1-D offsets and scales (the LSTM's forget-gate bias among them, which
    // decay would pull toward forgetting): none of them decays.
    bool embedding = name.rfind("tok_emb.", 0) == 0 || name.rfind("pos_emb.", 0) == 0;
    (p.dim() >= 2 && !embedding ? decay : no_decay).params.emplace_back(name, p);
  }
  return {decay, no_decay};
}

Run::Run(const Config& c, int64_t vocab)
    : config(c),
      model(make_model(c, vocab)),
      opt(param_groups(model, c)),
      // A run shorter than its warm-up warms up over all but its last step.
      sched(opt, std::max<int64_t>(c.steps, 1), c.lr / 10, std::min(c.warmup, std::max<int64_t>(c.steps, 1) - 1)),
      scaler(examples::scaler_for(c.precision)),
      data_gen(c.seed * 7919 + 1) {}

GPT Run::gpt() const {
  auto p = std::dynamic_pointer_cast<GPTImpl>(model.ptr());
  AG_CHECK(p != nullptr, ValueError, "lm: the model is ", model->name(), ", not a GPT");
  return GPT(p);
}

RnnLM Run::rnn() const {
  auto p = std::dynamic_pointer_cast<RnnLMImpl>(model.ptr());
  AG_CHECK(p != nullptr, ValueError, "lm: the model is ", model->name(), ", not a recurrent one");
  return RnnLM(p);
}

Metadata checkpoint_extra(const Run& run) {
  Metadata extra{{"data_gen", run.data_gen.state()}};
  examples::save_scaler_state(run.scaler, extra);
  return extra;
}

void restore_checkpoint_extra(Run& run, const Metadata& extra) {
  const auto gen = extra.find("data_gen");  // .at() would leak std::out_of_range
  AG_CHECK(gen != extra.end(), ValueError, "lm: the checkpoint has no 'data_gen' metadata entry");
  run.data_gen.set_state(gen->second);
  examples::load_scaler_state(run.scaler, extra);
}

StepStats train_step(Run& r, const std::vector<int64_t>& train_ids) {
  const Config& c = r.config;
  r.model->train();
  const double lr = r.opt.lr();
  double loss_sum = 0;
  for (int64_t a = 0; a < c.accum; ++a) {
    Batch b = random_windows(train_ids, c.batch, c.context, r.data_gen);
    Tensor loss;
    {
      // The forward and the loss only: backward runs outside autocast (its ops follow
      // the forward's dtypes), as PyTorch recommends.
      const autocast amp = examples::autocast_for(c.precision);
      Tensor logits = r.model(b.x);  // (B, T, V): bf16 / f16 under autocast
      // cross_entropy is on autocast's f32 list: the loss is f32.
      loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), b.y.reshape({-1}));
    }
    // Gradients add up over micro-batches; with f16 they are of loss * scale.
    r.scaler.scale(loss / static_cast<double>(c.accum)).backward();
    loss_sum += loss.item<double>();
  }
  r.scaler.unscale_(r.opt);  // clip the true gradients, not the scaled ones
  const double norm = optim::clip_grad_norm_(r.model->parameters(), c.clip);
  const bool stepped = r.scaler.step(r.opt);
  r.scaler.update();
  r.opt.zero_grad();
  r.sched.step();
  return {
      r.sched.last_step(), loss_sum / static_cast<double>(c.accum), lr, norm, c.accum * c.batch * c.context, !stepped};
}

double evaluate(const CharLM& model, const std::vector<Batch>& batches, DType precision) {
  NoGradGuard no_grad;
  const autocast amp = examples::autocast_for(precision);
  const bool was_training = model->is_training();
  model->eval();
  double total = 0;
  int64_t n = 0;
  CrossEntropyOptions sum;
  sum.reduction = Reduction::sum;
  for (const Batch& b : batches) {
    Tensor logits = model(b.x);  // (B, T, V)
    total += cross_entropy(logits.reshape({-1, logits.size(-1)}), b.y.reshape({-1}), sum).item<double>();
    n += b.y.numel();
  }
  model->train(was_training);
  return total / static_cast<double>(n);
}

}  // namespace lm
