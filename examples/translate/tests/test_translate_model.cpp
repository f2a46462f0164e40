// The translate example's model (examples/translate/model.h): tied embeddings, cached
// greedy decoding equal to full recomputation, and a tiny model that learns a toy
// "translation" (each word mapped to another, order kept) from padded batches; the
// training history kept in the checkpoint.
#include <doctest/doctest.h>

#include <string>

#include "translate/batching.h"
#include "translate/history.h"
#include "translate/model.h"

using namespace translate;

namespace {

const bool single_thread = [] {
  set_num_threads(1);
  return true;
}();

// Sentences of 2..6 words from ids 4..13; the "translation" maps id w to 4 + (w - 4 + 3) % 10.
std::vector<TokenPair> toy(int64_t n, uint64_t seed) {
  Generator g(seed);
  std::vector<TokenPair> out;
  for (int64_t k = 0; k < n; ++k) {
    TokenPair p;
    const int64_t L = 2 + g.integer(0, 5);
    for (int64_t i = 0; i < L; ++i) {
      const int64_t w = 4 + g.integer(0, 10);
      p.src.push_back(w);
      p.tgt.push_back(4 + (w - 4 + 3) % 10);
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("Translator: the output projection is the embedding table") {
  manual_seed(1);
  Translator m(TranslatorOptions(20).d_model(16).heads(2).layers(1).d_ff(32));
  CHECK(m->generator->weight.impl() == m->embed->weight.impl());
  auto sd = m->state_dict();
  CHECK(sd.contains("embed.weight"));
  CHECK(sd.contains("generator.weight"));  // PyTorch keeps both names of a tied tensor
  int64_t n = 0;
  for (const auto& p : m->parameters()) n += p.impl() == m->embed->weight.impl();
  CHECK(n == 1);  // listed once: the optimizer updates it once
  Tensor long_ids = zeros({1, 300}, DType::i64);
  CHECK_THROWS_WITH_AS(m->embed_at(long_ids), doctest::Contains("Translator: length 300 exceeds max_len 256"),
                       ShapeError);
}

TEST_CASE("Translator: cached greedy decoding equals argmax over full recomputation") {
  manual_seed(2);
  Translator m(TranslatorOptions(14).d_model(16).heads(2).layers(2).d_ff(32).dropout(0.0));
  m->eval();
  auto pairs = toy(3, 5);
  Batch b = make_batch(pairs, {0, 1, 2});
  Tensor got = m->greedy(b.src, 6, 2, 3);
  NoGradGuard no_grad;
  auto g = got.to_vector<int64_t>();
  const int64_t n = got.size(1);
  for (int64_t r = 0; r < 3; ++r) {
    std::vector<int64_t> prefix = {2};
    for (int64_t t = 0; t < n; ++t) {
      Tensor logits = m->forward(b.src.narrow(0, r, 1), Tensor::from_vector(prefix, {1, int64_t(prefix.size())}));
      const int64_t want = argmax(logits.select(1, t), -1).item<int64_t>();
      CHECK(g[size_t(r * n + t)] == want);
      if (want == 3) break;
      prefix.push_back(want);
    }
  }
}

TEST_CASE("Translator: a tiny model learns a toy word mapping from padded batches") {
  manual_seed(3);
  Translator m(TranslatorOptions(14).d_model(32).heads(2).layers(1).d_ff(64).dropout(0.0));
  optim::Adam opt(m->named_parameters(), optim::AdamOptions(3e-3));
  auto train = toy(400, 11), test = toy(50, 12);
  CrossEntropyOptions ce;
  ce.ignore_index = 0;
  ce.label_smoothing = 0.1;
  double last = 0;
  int64_t steps = 0;
  for (int64_t epoch = 0; epoch < 40; ++epoch)
    for (const auto& idx : bucket_batches(train, 300, 1, epoch)) {
      Batch b = make_batch(train, idx);
      Tensor loss = cross_entropy(m(b.src, b.tgt_in).reshape({-1, 14}), b.tgt_out.reshape({-1}), ce);
      opt.zero_grad();
      loss.backward();
      opt.step();
      last = loss.item<double>(), ++steps;
    }
  MESSAGE(steps << " steps, last loss " << last);
  m->eval();
  std::vector<int64_t> all(test.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  Batch b = make_batch(test, all);
  auto got = m->greedy(b.src, 8, 2, 3).to_vector<int64_t>();
  const int64_t n = static_cast<int64_t>(got.size()) / 50;
  int64_t exact = 0;
  for (int64_t r = 0; r < 50; ++r) {
    std::vector<int64_t> want = test[size_t(r)].tgt;
    want.push_back(3);
    bool ok = n >= static_cast<int64_t>(want.size());
    for (std::size_t t = 0; ok && t < want.size(); ++t) ok = got[size_t(r * n) + t] == want[t];
    exact += ok;
  }
  MESSAGE("toy translation: " << exact << " of 50 exact");
  CHECK(exact >= 40);
}

TEST_CASE("History: the whole run's figures survive the checkpoint (--resume)") {
  History h;
  h.step = {1, 2, 3}, h.loss = {7.5, 6.25, 5.125};
  h.val_step = {2}, h.val_loss = {6.5}, h.val_bleu = {1.25};
  h.seconds = 12.5, h.tokens = 9000, h.process_seconds = {10.0, 2.5};
  manual_seed(1);
  Translator m(TranslatorOptions(20).d_model(16).heads(2).layers(1).d_ff(32));
  const std::string path = std::string(AG_TMP_DIR) + "/translate_history.safetensors";
  save_checkpoint(path, *m, nullptr, nullptr, {{"epoch", "0"}, {"cursor", "0"}, {"history", h.to_json()}});
  const Metadata extra = load_checkpoint(path, *m);
  const History back = History::from_json(extra.at("history"));
  CHECK(back.step == h.step);
  CHECK(back.loss == h.loss);
  CHECK(back.val_step == h.val_step);
  CHECK(back.val_loss == h.val_loss);
  CHECK(back.val_bleu == h.val_bleu);
  CHECK(back.seconds == h.seconds);
  CHECK(back.tokens == h.tokens);
  CHECK(back.process_seconds == h.process_seconds);
  CHECK_THROWS_AS(History::from_json("{\"step\": [1]}"), ValueError);
  CHECK_THROWS_AS(History::from_json("not json"), ValueError);
  h.loss.pop_back();
  CHECK_THROWS_AS(History::from_json(h.to_json()), ValueError);
}
