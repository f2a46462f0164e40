// The translate example's results: see report.h.
#include "report.h"

#include <attograd/log.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/cross_attention.h"
#include "common/plot.h"
#include "metrics.h"

namespace translate {

namespace plot = examples::plot;

namespace {

struct Scored {
  std::string name;
  BleuScore bleu;
  ChrfScore chrf;
  double seconds;
};

void draw_attention(const std::string& path, Translator& model, const Subword& sw, const TokenPair& p) {
  NoGradGuard no_grad;
  model->eval();
  Batch b = make_batch({p}, {0});
  auto maps = examples::cross_attention_maps(*model->transformer->decoder, model->embed_at(b.tgt_in),
                                             model->encode(b.src), ne(b.src, 0));
  auto piece = [&](int64_t id) { return id == Subword::kEos ? std::string("</s>") : sw.decode({id}); };
  std::vector<std::string> rows, cols;
  for (int64_t id : b.tgt_out.to_vector<int64_t>()) rows.push_back(piece(id));
  for (int64_t id : b.src.to_vector<int64_t>()) cols.push_back(piece(id));
  examples::draw_cross_attention(path, "Cross-attention per head (English -> French)", maps, rows, cols);
}

}  // namespace

void report(const std::string& out, Run& run, const Subword& sw, const std::vector<Pair>& test_text,
            const std::vector<TokenPair>& test, const History& h, const ReportOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Config& c = run.config;
  std::vector<std::string> refs, sources;
  for (const Pair& p : test_text) refs.push_back(p.target), sources.push_back(p.source);
  std::vector<Scored> rows;
  auto score = [&](const std::string& name, const std::vector<std::string>& hyps, double secs) {
    rows.push_back({name, corpus_bleu_single(hyps, refs), corpus_chrf_single(hyps, refs), secs});
  };
  score("copy the source (baseline)", sources, 0.0);
  auto t = Clock::now();
  const auto greedy = translate_greedy(run.model, sw, test, c.max_len, c.max_tokens);
  score("greedy", greedy, std::chrono::duration<double>(Clock::now() - t).count());
  std::vector<std::string> beamed;
  if (o.beam > 1) {
    t = Clock::now();
    beamed = translate_beam(run.model, sw, test, c.max_len, c.max_tokens, o.beam, o.length_penalty);
    score("beam " + std::to_string(o.beam) + ", length penalty " + plot::fmt(o.length_penalty, 1), beamed,
          std::chrono::duration<double>(Clock::now() - t).count());
  }

  std::cout << "\nEnglish -> " << o.lang << ", " << test.size() << " test sentences, after "
            << plot::fmt(o.train_seconds / 60, 1) << " minutes of training (" << run.sched.last_step() << " steps):\n";
  for (const auto& r : rows)
    std::cout << "  " << r.name << ": BLEU " << plot::fmt(r.bleu.score, 2) << ", chrF " << plot::fmt(r.chrf.score, 2)
              << (r.seconds > 0 ? " (" + plot::fmt(r.seconds, 1) + " s)" : "") << "\n    " << r.bleu.to_string()
              << "\n";
  std::ofstream samples(out + "/samples.txt");
  for (std::size_t i = 0; i < std::min<std::size_t>(test.size(), 8); ++i) {
    std::ostringstream s;
    s << "  source     " << sources[i] << "\n  reference  " << refs[i] << "\n  greedy     " << greedy[i] << "\n";
    if (!beamed.empty()) s << "  beam       " << beamed[i] << "\n";
    std::cout << "\n" << s.str();
    samples << s.str() << "\n";
  }

  nlohmann::json m;
  for (const auto& r : rows)
    m["test"][r.name] = {{"bleu", r.bleu.score}, {"chrf", r.chrf.score}, {"signature", r.bleu.to_string()}};
  m["test_sentences"] = test.size();
  m["train_seconds"] = o.train_seconds;
  m["train_target_tokens"] = o.train_tokens;
  m["steps"] = run.sched.last_step();
  m["validation"] = {{"step", h.val_step}, {"loss", h.val_loss}, {"bleu", h.val_bleu}};
  m["config"] = {{"d_model", c.d_model},     {"heads", c.heads},           {"layers", c.layers},
                 {"d_ff", c.d_ff},           {"dropout", c.dropout},       {"label_smoothing", c.label_smoothing},
                 {"vocab", sw.vocab_size()}, {"max_tokens", c.max_tokens}, {"step_tokens", c.step_tokens},
                 {"warmup", c.warmup},       {"lr_factor", c.lr_factor},   {"seed", c.seed}};
  if (o.corpus) {
    for (const auto& [pkg, n] : o.corpus->kept_per_package) m["data"]["pairs_per_package"][pkg] = n;
    m["data"]["raw"] = o.corpus->raw, m["data"]["cleaned"] = o.corpus->cleaned, m["data"]["unique"] = o.corpus->unique;
  }
  std::ofstream(out + "/metrics.json") << m.dump(2) << "\n";
  // Pictures last: a drawing failure loses none of the results above.
  std::vector<plot::Series> curves;
  if (!h.step.empty()) curves.push_back({"train", h.step, h.loss, {31, 119, 180}});
  if (!h.val_step.empty()) curves.push_back({"validation", h.val_step, h.val_loss, {214, 39, 40}});
  if (!curves.empty())
    plot::line_chart(out + "/loss.png", "Translation loss (English -> " + o.lang + ")", curves, "step",
                     "loss (nats/token)");
  if (!h.val_step.empty())
    plot::line_chart(out + "/bleu.png", "Validation BLEU (greedy decoding)", h.val_step, h.val_bleu, "step", "BLEU");
  if (!test.empty()) draw_attention(out + "/attention.png", run.model, sw, test[0]);

  std::cout << "\n  pictures: " << out << "/loss.png, " << out << "/bleu.png, " << out << "/attention.png\n"
            << "  model:    " << out << "/model.safetensors (metrics.json, samples.txt beside it)\n";
}

}  // namespace translate
