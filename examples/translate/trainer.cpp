// Training and decoding for the translate example: see trainer.h.
#include "trainer.h"

#include <algorithm>

namespace translate {

Run::Run(const Config& c, int64_t vocab)
    : config(c),
      model([&] {
        manual_seed(c.seed);
        return Translator(TranslatorOptions(vocab)
                              .d_model(c.d_model)
                              .heads(c.heads)
                              .layers(c.layers)
                              .d_ff(c.d_ff)
                              .dropout(c.dropout)
                              .max_len(c.max_len + 2));
      }()),
      opt(model->named_parameters(), optim::AdamOptions(1.0).betas({0.9, 0.98}).eps(1e-9)),
      sched(opt, c.d_model, c.lr_factor, c.warmup) {}

StepStats train_step(Run& r, const std::vector<TokenPair>& train) {
  const Config& c = r.config;
  r.model->train();
  const double lr = r.opt.lr();
  CrossEntropyOptions ce;
  ce.ignore_index = 0;
  ce.label_smoothing = c.label_smoothing;
  ce.reduction = Reduction::sum;
  // Micro-batches are summed, then the gradient is divided by the step's token count:
  // every target token weighs the same, however the buckets cut them.
  std::vector<Batch> micro;
  int64_t tokens = 0;
  while (tokens < c.step_tokens) {
    if (r.cursor >= static_cast<int64_t>(r.batches.size())) {
      if (!r.batches.empty()) ++r.epoch;
      r.batches = bucket_batches(train, c.max_tokens, c.seed, r.epoch);
      r.cursor = 0;
    }
    micro.push_back(make_batch(train, r.batches[static_cast<std::size_t>(r.cursor++)]));
    tokens += micro.back().tgt_tokens;
  }
  r.opt.zero_grad();
  double loss_sum = 0;
  for (const Batch& b : micro) {
    Tensor logits = r.model(b.src, b.tgt_in);
    Tensor loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), b.tgt_out.reshape({-1}), ce);
    (loss / static_cast<double>(tokens)).backward();
    loss_sum += loss.item<double>();
  }
  const double norm = optim::clip_grad_norm_(r.model->parameters(), c.clip);
  r.opt.step();
  r.sched.step();
  return {r.sched.last_step(), loss_sum / static_cast<double>(tokens), lr, norm, tokens};
}

double evaluate_loss(Translator& model, const std::vector<TokenPair>& pairs, int64_t max_tokens) {
  NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  CrossEntropyOptions ce;
  ce.ignore_index = 0;
  ce.reduction = Reduction::sum;
  double total = 0;
  int64_t n = 0;
  for (const auto& idx : ordered_batches(pairs, max_tokens)) {
    Batch b = make_batch(pairs, idx);
    Tensor logits = model(b.src, b.tgt_in);
    total += cross_entropy(logits.reshape({-1, logits.size(-1)}), b.tgt_out.reshape({-1}), ce).item<double>();
    n += b.tgt_tokens;
  }
  model->train(was_training);
  return n ? total / static_cast<double>(n) : 0.0;
}

std::vector<std::string> translate_greedy(Translator& model, const Subword& sw, const std::vector<TokenPair>& pairs,
                                          int64_t max_new, int64_t max_tokens) {
  const bool was_training = model->is_training();
  model->eval();
  std::vector<std::string> out(pairs.size());
  for (const auto& idx : ordered_batches(pairs, max_tokens)) {
    Batch b = make_batch(pairs, idx);
    Tensor ys = model->greedy(b.src, max_new, Subword::kBos, Subword::kEos);  // (B, n)
    const int64_t n = ys.size(1);
    auto ids = ys.to_vector<int64_t>();
    for (std::size_t r = 0; r < idx.size(); ++r) {
      std::vector<int64_t> row;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t id = ids[r * static_cast<std::size_t>(n) + static_cast<std::size_t>(t)];
        if (id == Subword::kEos || id == Subword::kPad) break;
        row.push_back(id);
      }
      out[static_cast<std::size_t>(idx[r])] = sw.decode(row);
    }
  }
  model->train(was_training);
  return out;
}

std::vector<std::string> translate_beam(Translator& model, const Subword& sw, const std::vector<TokenPair>& pairs,
                                        int64_t max_new, int64_t max_tokens, int64_t beam, double length_penalty) {
  NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const auto opts = nn::BeamSearchOptions()
                        .beam_size(beam)
                        .max_length(max_new)
                        .bos_id(Subword::kBos)
                        .eos_id(Subword::kEos)
                        .pad_id(Subword::kPad)
                        .length_penalty(length_penalty);
  std::vector<std::string> out(pairs.size());
  // Beam rows multiply the batch: keep the decoded rows within the token budget.
  for (const auto& idx : ordered_batches(pairs, std::max<int64_t>(1, max_tokens / beam))) {
    Batch b = make_batch(pairs, idx);
    auto hyps = nn::beam_search(
        *model->transformer->decoder, model->encode(b.src), ne(b.src, 0),
        [&](const Tensor& tokens, int64_t position) { return model->embed_at(tokens, position); },
        [&](const Tensor& h) { return model->generator(h); }, opts);
    for (std::size_t r = 0; r < idx.size(); ++r) {
      std::vector<int64_t> ids = hyps[r].empty() ? std::vector<int64_t>{} : hyps[r][0].tokens;
      if (!ids.empty() && ids.back() == Subword::kEos) ids.pop_back();
      out[static_cast<std::size_t>(idx[r])] = sw.decode(ids);
    }
  }
  model->train(was_training);
  return out;
}

}  // namespace translate
