// Training for the character-level LM: see trainer.h.
#include "trainer.h"

#include <algorithm>

namespace lm {

std::vector<optim::ParamGroup<optim::AdamWOptions>> param_groups(const GPT& model, const Config& c) {
  optim::ParamGroup<optim::AdamWOptions> decay{
      {}, optim::AdamWOptions(c.lr).betas({0.9, c.beta2}).weight_decay(c.weight_decay)};
  optim::ParamGroup<optim::AdamWOptions> no_decay{{},
                                                  optim::AdamWOptions(c.lr).betas({0.9, c.beta2}).weight_decay(0.0)};
  for (auto& [name, p] : model->named_parameters()) {
    // Matrices that multiply activations decay; embeddings are tables looked up, and
    // biases and norm gains are 1-D.
    bool embedding = name.rfind("tok_emb.", 0) == 0 || name.rfind("pos_emb.", 0) == 0;
    (p.dim() >= 2 && !embedding ? decay : no_decay).params.emplace_back(name, p);
  }
  return {decay, no_decay};
}

Run::Run(const Config& c, int64_t vocab)
    : config(c),
      model([&] {
        manual_seed(c.seed);
        return GPT(c.model_options(vocab));
      }()),
      opt(param_groups(model, c)),
      // A run shorter than its warm-up warms up over all but its last step.
      sched(opt, std::max<int64_t>(c.steps, 1), c.lr / 10, std::min(c.warmup, std::max<int64_t>(c.steps, 1) - 1)),
      data_gen(c.seed * 7919 + 1) {}

StepStats train_step(Run& r, const std::vector<int64_t>& train_ids) {
  const Config& c = r.config;
  r.model->train();
  const double lr = r.opt.lr();
  double loss_sum = 0;
  for (int64_t a = 0; a < c.accum; ++a) {
    Batch b = random_windows(train_ids, c.batch, c.context, r.data_gen);
    Tensor logits = r.model(b.x);  // (B, T, V)
    Tensor loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), b.y.reshape({-1}));
    (loss / static_cast<double>(c.accum)).backward();  // gradients add up over micro-batches
    loss_sum += loss.item<double>();
  }
  const double norm = optim::clip_grad_norm_(r.model->parameters(), c.clip);
  r.opt.step();
  r.opt.zero_grad();
  r.sched.step();
  return {r.sched.last_step(), loss_sum / static_cast<double>(c.accum), lr, norm, c.accum * c.batch * c.context};
}

double evaluate(GPT& model, const std::vector<Batch>& batches) {
  NoGradGuard no_grad;
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
