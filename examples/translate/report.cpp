// The translate example's results: see report.h.
#include "report.h"

#include <attograd/log.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/cross_attention.h"
#include "common/plot.h"
#include "common/provenance.h"
#include "metrics.h"
#include "split.h"

namespace translate {

namespace plot = examples::plot;

namespace {

struct Scored {
  std::string key, name;  // key: metrics.json's name for the row
  BleuScore bleu;
  ChrfScore chrf;
  double seconds;
  std::vector<std::string> hypotheses;
};

// A test sentence is "near" training when a training source is within 2 words of it
// (nearest_word_distances on the normalized texts) or at a 3-gram similarity of 0.7 or
// more: the messages a lookup can half-answer. 1 for near, 0 otherwise.
std::vector<int> near_training(const std::vector<Pair>& train, const std::vector<std::string>& sources) {
  std::vector<std::string> pool, pool_normalized, normalized;
  for (const Pair& p : train) pool.push_back(p.source), pool_normalized.push_back(normalize_source(p.source));
  for (const std::string& s : sources) normalized.push_back(normalize_source(s));
  const auto words = nearest_word_distances(normalized, pool_normalized, 3);
  const auto chars = nearest_neighbours(sources, pool);
  std::vector<int> near;
  for (std::size_t i = 0; i < sources.size(); ++i) near.push_back(words[i] <= 2 || chars[i].similarity >= 0.7);
  return near;
}

std::vector<std::string> subset(const std::vector<std::string>& v, const std::vector<int>& near, int keep) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (near[i] == keep) out.push_back(v[i]);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const std::string& l : lines) f << l << "\n";
}

// The cross-attention of the model writing its own greedy translation of p: decoder input
// bos + the greedy pieces, so row t holds the weights with which piece t was chosen
// (causal masking makes this the attention of the decoding steps themselves).
void draw_attention(const std::string& path, Translator& model, const Subword& sw, const TokenPair& p,
                    int64_t max_len) {
  NoGradGuard no_grad;
  model->eval();
  Batch b = make_batch({p}, {0});
  // At most twice the source's pieces and 8 more: a model that never writes </s> still
  // gives a picture one can read.
  const int64_t max_new = std::min(max_len, 2 * static_cast<int64_t>(p.src.size()) + 8);
  std::vector<int64_t> out = model->greedy(b.src, max_new, Subword::kBos, Subword::kEos).to_vector<int64_t>();
  if (auto eos = std::find(out.begin(), out.end(), Subword::kEos); eos != out.end()) out.erase(eos + 1, out.end());
  std::vector<int64_t> in{Subword::kBos};
  in.insert(in.end(), out.begin(), out.end() - 1);
  const Tensor tgt_in = Tensor::from_vector(in, {1, static_cast<int64_t>(in.size())});
  auto maps = examples::cross_attention_maps(*model->transformer->decoder, model->embed_at(tgt_in),
                                             model->encode(b.src), ne(b.src, 0));
  auto piece = [&](int64_t id) { return id == Subword::kEos ? std::string("</s>") : sw.decode({id}); };
  std::vector<std::string> rows, cols;
  for (int64_t id : out) rows.push_back(piece(id));
  for (int64_t id : b.src.to_vector<int64_t>()) cols.push_back(piece(id));
  examples::draw_cross_attention(path, "Cross-attention per head, the model's own greedy translation", maps, rows,
                                 cols);
}

std::vector<std::string> side(const std::vector<Pair>& pairs, bool source) {
  std::vector<std::string> s;
  for (const Pair& p : pairs) s.push_back(source ? p.source : p.target);
  return s;
}

}  // namespace

void report(const std::string& out, Run& run, const Subword& sw, const std::vector<Pair>& test_text,
            const std::vector<TokenPair>& test, const History& h, const ReportOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Config& c = run.config;
  const std::vector<std::string> refs = side(test_text, false), sources = side(test_text, true);
  const std::vector<Pair> no_pairs;
  const std::vector<Pair>& train = o.corpus ? o.corpus->splits.train : no_pairs;
  std::vector<Scored> rows;
  auto score = [&](const std::string& key, const std::string& name, const std::vector<std::string>& hyps, double secs) {
    rows.push_back({key, name, corpus_bleu_single(hyps, refs), corpus_chrf_single(hyps, refs), secs, hyps});
  };
  score("copy_source", "copy the source (baseline)", sources, 0.0);
  auto t = Clock::now();
  const auto memory = translation_memory(train, sources);
  score("translation_memory", "translation memory: the nearest training source's French (baseline)", memory,
        std::chrono::duration<double>(Clock::now() - t).count());
  t = Clock::now();
  const auto greedy = translate_greedy(run.model, sw, test, c.max_len, c.max_tokens);
  score("greedy", "greedy", greedy, std::chrono::duration<double>(Clock::now() - t).count());
  std::vector<std::string> beamed;
  if (o.beam > 1) {
    t = Clock::now();
    beamed = translate_beam(run.model, sw, test, c.max_len, c.max_tokens, o.beam, o.length_penalty);
    score("beam", "beam " + std::to_string(o.beam) + ", length penalty " + plot::fmt(o.length_penalty, 1), beamed,
          std::chrono::duration<double>(Clock::now() - t).count());
  }
  const Scored& tm = rows[1];
  const Scored& best = rows.back();  // beam when run, else greedy

  std::cout << "\nEnglish -> " << o.lang << ", " << test.size() << " test sentences, after "
            << plot::fmt(h.seconds / 60, 1) << " minutes of training in all (" << run.sched.last_step() << " steps";
  if (h.process_seconds.size() > 1) std::cout << ", " << h.process_seconds.size() << " processes (--resume)";
  std::cout << "):\n";
  for (const auto& r : rows)
    std::cout << "  " << r.name << ": BLEU " << plot::fmt(r.bleu.score, 2) << ", chrF " << plot::fmt(r.chrf.score, 2)
              << (r.seconds > 0 ? " (" + plot::fmt(r.seconds, 1) + " s)" : "") << "\n    " << r.bleu.to_string()
              << "\n";
  std::cout << "  " << best.key << " - translation memory: BLEU " << plot::fmt(best.bleu.score - tm.bleu.score, 2)
            << ", chrF " << plot::fmt(best.chrf.score - tm.chrf.score, 2) << "\n";
  // The same rows on the test sentences no training source is near (near_training).
  const std::vector<int> near = near_training(train, sources);
  const std::vector<std::string> far_refs = subset(refs, near, 0);
  std::vector<Scored> far_rows;
  for (const Scored& r : rows) {
    const auto hyps = subset(r.hypotheses, near, 0);
    far_rows.push_back(
        {r.key, r.name, corpus_bleu_single(hyps, far_refs), corpus_chrf_single(hyps, far_refs), 0.0, {}});
  }
  std::cout << "  without the " << refs.size() - far_refs.size()
            << " test sentences near a training source (within 2 words, or 3-gram similarity >= 0.7), "
            << far_refs.size() << " sentences:\n";
  for (const auto& r : far_rows)
    std::cout << "    " << r.name << ": BLEU " << plot::fmt(r.bleu.score, 2) << ", chrF " << plot::fmt(r.chrf.score, 2)
              << "\n";
  // The test set and every row's output, one sentence per line, for any sacreBLEU-compatible
  // scorer: `sacrebleu test.reference.fr -i test.beam.fr -m bleu chrf`.
  write_lines(out + "/test.source.en", sources);
  write_lines(out + "/test.reference." + o.lang, refs);
  for (const Scored& r : rows) write_lines(out + "/test." + r.key + "." + o.lang, r.hypotheses);
  {
    std::ofstream f(out + "/test.near");
    for (int v : near) f << v << "\n";
  }
  std::ofstream samples(out + "/samples.txt");
  for (std::size_t i = 0; i < std::min<std::size_t>(test.size(), 8); ++i) {
    std::ostringstream s;
    s << "  source     " << sources[i] << "\n  reference  " << refs[i] << "\n  memory     " << memory[i]
      << "\n  greedy     " << greedy[i] << "\n";
    if (!beamed.empty()) s << "  beam       " << beamed[i] << "\n";
    std::cout << "\n" << s.str();
    samples << s.str() << "\n";
  }

  // Validation baselines on the sentences of the BLEU curve, for bleu.png.
  const std::vector<std::string> val_refs = side(o.validation, false), val_sources = side(o.validation, true);
  const double val_copy = corpus_bleu_single(val_sources, val_refs).score;
  const double val_memory = corpus_bleu_single(translation_memory(train, val_sources), val_refs).score;

  nlohmann::json m;
  for (const auto& r : rows)
    m["test"][r.key] = {{"name", r.name},
                        {"bleu", r.bleu.score},
                        {"chrf", r.chrf.score},
                        {"seconds", r.seconds},
                        {"signature", r.bleu.to_string()}};
  for (const Scored* r : {&rows[2], &rows.back()})
    m["margin_over_translation_memory"][r->key] = {{"bleu", r->bleu.score - tm.bleu.score},
                                                   {"chrf", r->chrf.score - tm.chrf.score}};
  m["test_sentences"] = test.size();
  for (const auto& r : far_rows)
    m["test_without_near"]["rows"][r.key] = {{"bleu", r.bleu.score}, {"chrf", r.chrf.score}};
  m["test_without_near"]["sentences"] = far_refs.size();
  m["test_without_near"]["near_sentences"] = refs.size() - far_refs.size();
  m["test_without_near"]["definition"] =
      "test sentences with no training source within 2 words (normalized) nor at 3-gram similarity >= 0.7";
  for (const Scored* r : {&far_rows[2], &far_rows.back()})
    m["test_without_near"]["margin_over_translation_memory"][r->key] = {
        {"bleu", r->bleu.score - far_rows[1].bleu.score}, {"chrf", r->chrf.score - far_rows[1].chrf.score}};
  m["steps"] = run.sched.last_step();
  m["train_seconds"] = h.seconds;
  m["train_minutes"] = h.seconds / 60;
  m["process_seconds"] = h.process_seconds;
  m["train_target_tokens"] = h.tokens;
  m["threads"] = o.threads;
  m["command"] = o.command;
  m["provenance"] = examples::provenance(o.command);
  m["validation"] = {{"step", h.val_step},           {"loss", h.val_loss},
                     {"bleu", h.val_bleu},           {"sentences", o.validation.size()},
                     {"bleu_copy_source", val_copy}, {"bleu_translation_memory", val_memory}};
  m["config"] = {{"d_model", c.d_model},
                 {"heads", c.heads},
                 {"layers", c.layers},
                 {"d_ff", c.d_ff},
                 {"dropout", c.dropout},
                 {"label_smoothing", c.label_smoothing},
                 {"vocab", sw.vocab_size()},
                 {"max_tokens", c.max_tokens},
                 {"step_tokens", c.step_tokens},
                 {"warmup", c.warmup},
                 {"lr_factor", c.lr_factor},
                 {"seed", c.seed},
                 {"steps", c.steps},
                 {"minutes", c.minutes},
                 {"beam", o.beam},
                 {"length_penalty", o.length_penalty}};
  if (o.corpus) {
    const Corpus& k = *o.corpus;
    const SplitStats& st = k.split;
    for (const auto& [pkg, n] : k.kept_per_package) m["data"]["pairs_per_package"][pkg] = n;
    m["data"]["raw"] = k.raw, m["data"]["cleaned"] = k.cleaned, m["data"]["unique"] = k.unique;
    m["split"] = {{"similarity_threshold", st.threshold},
                  {"messages", {{"train", st.messages[0]}, {"validation", st.messages[1]}, {"test", st.messages[2]}}},
                  {"clusters", {{"train", st.clusters[0]}, {"validation", st.clusters[1]}, {"test", st.clusters[2]}}},
                  {"largest_cluster", st.largest_cluster},
                  {"max_test_train_similarity", st.max_test_train_similarity},
                  {"test_with_train_neighbour_at_threshold", st.test_near_train},
                  {"test_with_train_normalized_twin", st.test_with_train_normalized_twin},
                  {"test_nearest_train_similarity_deciles",
                   std::vector<int64_t>(std::begin(st.test_nearest_histogram), std::end(st.test_nearest_histogram))},
                  {"test_nearest_train_words_0_1_2_3_4plus",
                   std::vector<int64_t>(std::begin(st.test_nearest_words), std::end(st.test_nearest_words))},
                  {"max_held_out_cluster", st.max_held_out_cluster},
                  {"kept_in_train_for_size", st.kept_in_train_for_size}};
  }
  std::ofstream(out + "/metrics.json") << m.dump(2) << "\n";
  // Pictures last: a drawing failure loses none of the results above.
  // Two different losses on one axis, each named: training is label-smoothed (its floor
  // is above 0), validation is the plain cross-entropy.
  const std::string smoothing = plot::fmt(c.label_smoothing, 1);
  if (!h.step.empty() || !h.val_step.empty())
    plot::line_chart(out + "/loss.png", "Loss (English -> " + o.lang + ")",
                     {{"train (label smoothing " + smoothing + ")", h.step, h.loss, {31, 119, 180}},
                      {"validation (no smoothing)", h.val_step, h.val_loss, {214, 39, 40}}},
                     "step", "nats per target token");
  // The curve with the two baselines on the same validation sentences (test figures: the
  // printed table and metrics.json).
  if (!h.val_step.empty()) {
    const std::vector<double> span{h.val_step.front(), h.val_step.back()};
    auto level = [&](double v) { return std::vector<double>{v, v}; };
    plot::linear_chart(out + "/bleu.png", "Validation BLEU (" + std::to_string(o.validation.size()) + " sentences)",
                       {{"model (greedy)", h.val_step, h.val_bleu, {31, 119, 180}},
                        {"translation memory", span, level(val_memory), {214, 39, 40}},
                        {"copy source", span, level(val_copy), {127, 127, 127}}},
                       "step", "BLEU");
  }
  // The first test sentence of 5 to 16 pieces (a longer one makes labels too small to read).
  if (!test.empty()) {
    auto it = std::find_if(test.begin(), test.end(),
                           [](const TokenPair& p) { return p.src.size() >= 5 && p.src.size() <= 16; });
    const std::size_t at = it == test.end() ? 0 : static_cast<std::size_t>(it - test.begin());
    ag::log().info("attention.png: test sentence {}: {}", at, sources[at]);
    draw_attention(out + "/attention.png", run.model, sw, test[at], c.max_len);
  }

  std::cout << "\n  pictures: " << out << "/loss.png, " << out << "/bleu.png, " << out << "/attention.png\n"
            << "  model:    " << out << "/model.safetensors (metrics.json, samples.txt beside it)\n";
}

}  // namespace translate
