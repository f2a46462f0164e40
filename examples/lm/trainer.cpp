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
      scaler(examples::scaler_for(c.precision)),
      data_gen(c.seed * 7919 + 1) {}

Metadata checkpoint_extra(const Run& run) {
  Metadata extra{{"data_gen", run.data_gen.state()}};
  for (const auto& [key, value] : run.scaler.state_dict()) extra["grad_scaler." + key] = value;
  return extra;
}

void restore_checkpoint_extra(Run& run, const Metadata& extra) {
  const auto gen = extra.find("data_gen");  // .at() would leak std::out_of_range
  AG_CHECK(gen != extra.end(), ValueError, "lm: the checkpoint has no 'data_gen' metadata entry");
  run.data_gen.set_state(gen->second);
  const std::string prefix = "grad_scaler.";
  Metadata scaler_state;
  for (const auto& [key, value] : extra)
    if (key.rfind(prefix, 0) == 0) scaler_state[key.substr(prefix.size())] = value;
  if (!scaler_state.empty()) run.scaler.load_state_dict(scaler_state);
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

std::pair<int64_t, int64_t> quantize_for_inference(GPT& model, const std::string& format) {
  AG_CHECK(format == "int8" || format == "int4", ValueError, "lm: --quantize takes int8 or int4, got '", format, "'");
  const quant::QuantConfig qc = format == "int8" ? quant::int8_weight_only() : quant::int4_weight_only(32);
  int64_t kept = 0;
  const int64_t done = quant::quantize_(model, qc, [&](nn::Module& m, const std::string&) {
    const auto* lin = m.as<nn::LinearImpl>();
    const bool ok = lin != nullptr && (qc.group_size == 0 || lin->options.in_features() % qc.group_size == 0);
    kept += lin != nullptr && !ok;
    return ok;
  });
  return {done, kept};
}

double evaluate(GPT& model, const std::vector<Batch>& batches, DType precision) {
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
