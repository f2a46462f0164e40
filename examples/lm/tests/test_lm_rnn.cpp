// The recurrent models of the lm example (--arch lstm / gru): the loss falls, a resumed
// run continues exactly, and decoding with the carried state equals recomputing the
// whole prefix.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lm/sample.h"
#include "lm/trainer.h"
#include "lm_test_util.h"
#include "test_util.h"

using namespace lm;

TEST_CASE("--arch lstm / gru: the loss falls, a resumed run continues exactly, carried-state decoding") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  const int64_t V = corpus.vocab.size();
  const std::vector<Batch> val = sequential_windows(corpus.val, 64, 16);
  const std::string path = std::string(AG_TMP_DIR) + "/test_lm_rnn_checkpoint.safetensors";
  for (Arch arch : {Arch::lstm, Arch::gru}) {
    const std::string name = arch_name(arch);
    CAPTURE(name);
    Config c;
    c.arch = arch, c.context = 16, c.embed = 16, c.hidden = 32, c.rnn_layers = 2, c.batch = 16, c.steps = 80;
    c.warmup = 10, c.dropout = 0.1, c.seed = 9;  // dropout between the layers: a resumed run must draw the same masks
    Run a(c, V);
    // Embedding, two layers of G gates (weight_ih, weight_hh, two biases each), head with bias.
    const int64_t G = arch == Arch::lstm ? 4 : 3, E = 16, H = 32;
    CHECK(a.model->num_parameters() == V * E + G * H * (E + H + 2) + G * H * (2 * H + 2) + H * V + V);
    auto groups = param_groups(a.model, c);  // decay: weight_ih_l0, weight_hh_l0, weight_ih_l1, weight_hh_l1, head
    CHECK(groups[0].params.size() == 5);
    CHECK(groups[1].params.size() == 6);  // tok_emb, the four recurrent biases, head.bias
    CHECK_THROWS_AS(a.gpt(), ValueError);

    // 40 steps, a checkpoint, 40 more; a second run resumed from the checkpoint ends bit for bit equal.
    const double before = evaluate(a.model, val);
    std::vector<StepStats> sa, sb;
    for (int i = 0; i < 40; ++i) sa.push_back(train_step(a, corpus.train));
    save_checkpoint(path, *a.model, &a.opt, &a.sched, checkpoint_extra(a));
    for (int i = 0; i < 40; ++i) sa.push_back(train_step(a, corpus.train));
    const double after = evaluate(a.model, val);
    MESSAGE(name << ": held-out " << before << " -> " << after << " nats/char, train " << sa.front().loss << " -> "
                 << sa.back().loss);
    CHECK(sa.back().loss < sa.front().loss - 0.4);
    CHECK(after < before - 0.4);
    Run b(c, V);
    restore_checkpoint_extra(b, load_checkpoint(path, *b.model, &b.opt, &b.sched));
    CHECK(b.sched.last_step() == 40);
    for (int i = 0; i < 40; ++i) sb.push_back(train_step(b, corpus.train));
    for (int i = 0; i < 40; ++i) CHECK(sb[i].loss == sa[40 + i].loss);
    for (std::size_t i = 0; i < a.model->parameters().size(); ++i)
      CHECK(allclose(a.model->parameters()[i], b.model->parameters()[i], 0.0, 0.0));

    // Decoding: a prefill of 5 characters, then 3 one at a time, give the full forward's rows.
    a.model->eval();
    NoGradGuard no_grad;
    Tensor ids = Tensor::from_vector(std::vector<int64_t>(corpus.val.begin(), corpus.val.begin() + 8), {1, 8});
    Tensor full = a.model(ids);  // (1, 8, V)
    std::unique_ptr<Decoder> dec = a.model->decoder();
    CHECK(allclose(dec->step(ids.narrow(1, 0, 5)), full.narrow(1, 0, 5), 1e-4, 1e-5));
    for (int64_t t = 5; t < 8; ++t) CHECK(allclose(dec->step(ids.narrow(1, t, 1)), full.narrow(1, t, 1), 1e-4, 1e-5));
    CHECK(dec->length() == 8);
    // Greedy: 60 characters with the carried state are those of re-running the whole text
    // each step, far past the 16-character training windows (no context limit).
    SamplingOptions greedy;
    greedy.temperature = 0;
    Generator g1(1), g2(1);
    const std::vector<int64_t> prompt(corpus.val.begin(), corpus.val.begin() + 8);
    CHECK(generate(a.model, prompt, 60, greedy, g1, true) == generate(a.model, prompt, 60, greedy, g2, false));
  }
}
