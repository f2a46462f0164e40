// End to end: a tiny character-level GPT, trained for a few hundred steps with the lm
// example's own model, data and training step on a built-in English paragraph, must
// beat a bigram model's held-out loss on the same split; sampling filters behave
// (the recurrent models: test_lm_rnn.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lm/sample.h"
#include "lm/trainer.h"
#include "lm_test_util.h"
#include "test_util.h"

using namespace lm;

namespace {

// Held-out loss before and after c.steps training steps, with the bigram baseline.
struct Trained {
  double before, after, bigram;
  StepStats last;
};
Trained train_and_evaluate(Run& run, const Corpus& corpus, const Config& c) {
  const int64_t V = corpus.vocab.size();
  const std::vector<Batch> val = sequential_windows(corpus.val, 64, c.context);
  Trained t{evaluate(run.model, val), 0.0, bigram_loss(corpus.train, corpus.val, V, c.context), StepStats{}};
  for (int64_t i = 0; i < c.steps; ++i) t.last = train_step(run, corpus.train);
  t.after = evaluate(run.model, val);
  return t;
}

// The two model styles, set explicitly (the example's defaults may change).
Config gpt2_style(Config c) {
  c.norm = Norm::layer, c.pos = Position::learned, c.kv_heads = 0, c.mlp = MlpKind::gelu, c.tie = false;
  c.dropout = 0.0;
  return c;
}
Config llama_style(Config c) {
  c.norm = Norm::rms, c.pos = Position::rope, c.kv_heads = 2, c.mlp = MlpKind::swiglu, c.tie = true;
  c.dropout = 0.0;
  return c;
}

// How many nodes named "checkpoint" the graph of t has.
int64_t checkpoint_nodes(const Tensor& t) {
  std::set<const Node*> seen;
  std::vector<const Node*> stack;
  if (t.grad_fn()) stack.push_back(t.grad_fn().get());
  int64_t n = 0;
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    n += std::string(node->name) == "checkpoint";
    for (const Edge& e : node->inputs)
      if (e.node) stack.push_back(e.node.get());
  }
  return n;
}

// A model of either style over 20 tokens: 16 positions, width 32, 4 heads.
Run tiny_run(bool llama, int64_t layers, uint64_t seed) {
  Config c;
  c.context = 16, c.d_model = 32, c.heads = 4, c.layers = layers, c.seed = seed;
  return Run(llama ? llama_style(c) : gpt2_style(c), 20);
}

}  // namespace

TEST_CASE("a tiny GPT beats the bigram baseline on held-out text") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  Config c;
  c.context = 32, c.d_model = 32, c.heads = 2, c.layers = 2, c.batch = 16, c.warmup = 20;
  c.steps = test_util::training_steps(250);
  c.lr = 3e-3, c.seed = 3;
  c = gpt2_style(c);
  const int64_t V = corpus.vocab.size();
  Run run(c, V);
  const auto [before, after, bigram, s] = train_and_evaluate(run, corpus, c);
  MESSAGE("held-out loss " << before << " -> " << after << " nats/char (bigram " << bigram << ", last train " << s.loss
                           << ")");
  CHECK(std::abs(before - std::log(static_cast<double>(V))) < 0.3);  // ~uniform at init
  CHECK(s.step == c.steps);
  if (!test_util::kSanitized) {  // trained in full
    CHECK(after < bigram);
    CHECK(after < 0.5 * bigram);  // the context pins down most characters of this text
  }
}

TEST_CASE("gradient accumulation: two micro-batches of B match one batch of 2B") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 17);
  Config c;
  c.context = 16, c.d_model = 16, c.heads = 2, c.layers = 1, c.batch = 8, c.steps = 10, c.seed = 5;
  c = gpt2_style(c);  // no dropout: the two runs draw their masks differently
  Config wide = c;
  wide.batch = 16;
  c.accum = 2;
  Run a(c, corpus.vocab.size()), b(wide, corpus.vocab.size());
  // Same data: b's single batch of 16 draws the same 16 window starts as a's two of 8.
  StepStats sa = train_step(a, corpus.train), sb = train_step(b, corpus.train);
  CHECK(sa.tokens == sb.tokens);
  CHECK(std::abs(sa.loss - sb.loss) < 1e-5);
  CHECK(std::abs(sa.grad_norm - sb.grad_norm) < 1e-4 * sb.grad_norm);
  for (std::size_t i = 0; i < a.model->parameters().size(); ++i)
    CHECK(allclose(a.model->parameters()[i], b.model->parameters()[i], 1e-4, 1e-6));
}

TEST_CASE("data: vocabulary from the training split, unknown characters, windows") {
  Corpus corpus = make_corpus("abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab~~~", 0.1, 4);
  CHECK(corpus.vocab.size() == 4);  // a, b, c and the reserved unknown id
  CHECK(corpus.vocab.decode(corpus.vocab.encode("cab~")) == "cab?");
  CHECK(corpus.val.back() == CharVocab::kUnknown);
  Generator g(1);
  Batch b = random_windows(corpus.train, 5, 6, g);
  auto x = b.x.to_vector<int64_t>(), y = b.y.to_vector<int64_t>();
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == x[i] % 3 + 1);  // a->b->c->a
  CHECK_THROWS_AS(make_corpus("abc", 0.1, 4), ValueError);
  CHECK_THROWS_AS(read_texts({"/nonexistent/file"}), IOError);
}

TEST_CASE("sampling filters: temperature 0, top-k and top-p") {
  Tensor logits =
      Tensor::from_vector(std::vector<float>{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)});
  SamplingOptions o;
  o.temperature = 0;
  CHECK(next_token_probs(logits, o).to_vector<double>() == std::vector<double>{1, 0, 0, 0});
  o.temperature = 1, o.top_p = 1, o.top_k = 2;
  auto k2 = next_token_probs(logits, o).to_vector<double>();
  CHECK(k2[0] == doctest::Approx(0.625));  // 0.5 / 0.8
  CHECK(k2[2] == 0.0);
  CHECK(k2[3] == 0.0);
  o.top_k = 0, o.top_p = 0.9;  // 0.5 + 0.3 < 0.9 <= 0.95: three classes kept
  auto p9 = next_token_probs(logits, o).to_vector<double>();
  CHECK(p9[2] == doctest::Approx(0.15 / 0.95));
  CHECK(p9[3] == 0.0);
  o.top_p = 0.4;  // the most likely class alone
  CHECK(next_token_probs(logits, o).to_vector<double>() == std::vector<double>{1, 0, 0, 0});
}

TEST_CASE("a run resumed from a checkpoint continues exactly (model, optimizer, schedule, data, dropout)") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 17);
  Config c;
  c.context = 16, c.d_model = 16, c.heads = 2, c.layers = 1, c.batch = 4, c.steps = 12, c.warmup = 3;
  c.dropout = 0.1, c.seed = 9;
  const int64_t V = corpus.vocab.size();
  const std::string path = std::string(AG_TMP_DIR) + "/test_lm_checkpoint.safetensors";
  Run a(c, V);
  for (int i = 0; i < 6; ++i) train_step(a, corpus.train);
  save_checkpoint(path, *a.model, &a.opt, &a.sched, {{"data_gen", a.data_gen.state()}});
  for (int i = 0; i < 6; ++i) train_step(a, corpus.train);
  Run b(c, V);
  Metadata extra = load_checkpoint(path, *b.model, &b.opt, &b.sched);
  b.data_gen.set_state(extra.at("data_gen"));
  CHECK(b.sched.last_step() == 6);
  for (int i = 0; i < 6; ++i) train_step(b, corpus.train);
  for (std::size_t i = 0; i < a.model->parameters().size(); ++i)
    CHECK(allclose(a.model->parameters()[i], b.model->parameters()[i], 0.0, 0.0));
}

TEST_CASE("--checkpoint-activations: the same training steps, dropout masks and generator state") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 17);
  for (bool llama : {false, true}) {
    CAPTURE(llama);
    Config c;
    c.context = 16, c.d_model = 16, c.heads = 2, c.layers = 2, c.batch = 4, c.steps = 3, c.warmup = 1, c.seed = 4;
    c = llama ? llama_style(c) : gpt2_style(c);
    c.dropout = 0.2;  // the recomputation must draw the forward's masks
    Config ck = c;
    ck.checkpoint_activations = true;
    const int64_t V = corpus.vocab.size();
    std::vector<StepStats> sa, sb;
    Run a(c, V);
    manual_seed(77);
    for (int i = 0; i < 3; ++i) sa.push_back(train_step(a, corpus.train));
    const std::string gen_a = default_generator().state();
    Run b(ck, V);
    manual_seed(77);
    for (int i = 0; i < 3; ++i) sb.push_back(train_step(b, corpus.train));
    CHECK(default_generator().state() == gen_a);
    for (int i = 0; i < 3; ++i) {
      CHECK(sa[i].loss == sb[i].loss);
      CHECK(sa[i].grad_norm == sb[i].grad_norm);
    }
    for (std::size_t i = 0; i < a.model->parameters().size(); ++i)
      CHECK(allclose(a.model->parameters()[i], b.model->parameters()[i], 0.0, 0.0));
    // Training records one "checkpoint" node per block; eval runs the plain forward.
    Tensor ids = arange(0, 8).reshape({1, 8});
    CHECK(checkpoint_nodes(b.model(ids)) == c.layers);
    b.model->eval();
    CHECK(checkpoint_nodes(b.model(ids)) == 0);
  }
}

TEST_CASE("a tiny LLaMA-style GPT (rms, rope, 2 of 4 kv heads, swiglu, tied head) beats the bigram baseline") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  Config c;
  c.context = 32, c.d_model = 32, c.heads = 4, c.layers = 2, c.batch = 16, c.warmup = 20;
  c.steps = test_util::training_steps(250);
  c.lr = 3e-3, c.seed = 3;
  c = llama_style(c);
  const int64_t V = corpus.vocab.size();
  Run run(c, V);
  CHECK(run.gpt()->pos_emb.is_empty());
  CHECK(run.gpt()->blocks->at<BlockImpl>(0)->attn->k_proj->weight.size(0) == 16);  // g*d = 2*8
  const auto [before, after, bigram, s] = train_and_evaluate(run, corpus, c);
  MESSAGE("LLaMA-style held-out loss " << before << " -> " << after << " nats/char (bigram " << bigram << ")");
  CHECK(std::abs(before - std::log(static_cast<double>(V))) < 0.3);
  if (!test_util::kSanitized) {
    CHECK(after < bigram);
    CHECK(after < 0.5 * bigram);
  }
  // The tie survives training: one tensor, updated once per step.
  CHECK(run.gpt()->head->weight.impl() == run.gpt()->tok_emb->weight.impl());
}

TEST_CASE("tied head: one tensor, in exactly one AdamW group (no decay); SwiGLU's size is near GELU's") {
  Config c;
  c.context = 16, c.d_model = 32, c.heads = 4, c.layers = 1;
  c = gpt2_style(c);
  Config tied = llama_style(c);
  Run r(tied, 20);
  CHECK(r.gpt()->head->weight.impl() == r.gpt()->tok_emb->weight.impl());
  auto groups = param_groups(r.model, tied);
  int64_t listed = 0, tied_in_decay = 0, tied_in_no_decay = 0;
  for (auto& p : groups[0].params) tied_in_decay += (p.second.impl() == r.gpt()->tok_emb->weight.impl()), ++listed;
  for (auto& p : groups[1].params) tied_in_no_decay += (p.second.impl() == r.gpt()->tok_emb->weight.impl()), ++listed;
  CHECK(tied_in_decay == 0);
  CHECK(tied_in_no_decay == 1);
  CHECK(listed == static_cast<int64_t>(r.model->parameters().size()));
  auto names = r.model->named_parameters();
  CHECK(std::none_of(names.begin(), names.end(), [](auto& p) { return p.first == "head.weight"; }));
  // Untied, the head is its own decayed matrix and the model is V*E larger.
  Config untied = tied;
  untied.tie = false;
  Run u(untied, 20);
  CHECK(u.model->num_parameters() == r.model->num_parameters() + 20 * 32);
  // SwiGLU (3 * E * 88, 2/3 of 4E rounded up to 8) vs GELU (2 * E * 4E + biases).
  Config gelu = c, swiglu = c;
  swiglu.mlp = MlpKind::swiglu;
  Run g(gelu, 20), sw(swiglu, 20);
  CHECK(swiglu_hidden(sw.gpt()->options) == 88);
  const double ratio = static_cast<double>(sw.model->num_parameters()) / static_cast<double>(g.model->num_parameters());
  CHECK(ratio > 0.97);
  CHECK(ratio < 1.05);
}

TEST_CASE("KV-cached forward_step and generation match full recomputation") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  const int64_t V = corpus.vocab.size();
  Config base;
  base.context = 48, base.d_model = 32, base.heads = 4, base.layers = 2, base.seed = 4;
  base = gpt2_style(base);
  for (const Config& c : {base, llama_style(base)}) {
    CAPTURE(c.pos == Position::rope);
    Run run(c, V);
    run.model->eval();
    NoGradGuard no_grad;
    // Prefill 5 positions, then 3 one at a time: each step's logits are the full
    // forward's rows at those positions.
    Tensor ids = Tensor::from_vector(std::vector<int64_t>(corpus.val.begin(), corpus.val.begin() + 8), {1, 8});
    Tensor full = run.model(ids);  // (1, 8, V)
    nn::DecoderKVCache cache = run.gpt()->make_cache();
    Tensor rows = run.gpt()->forward_step(ids.narrow(1, 0, 5), cache);
    CHECK(allclose(rows, full.narrow(1, 0, 5), 1e-4, 1e-5));
    for (int64_t t = 5; t < 8; ++t)
      CHECK(allclose(run.gpt()->forward_step(ids.narrow(1, t, 1), cache), full.narrow(1, t, 1), 1e-4, 1e-5));
    CHECK(cache.length() == 8);
    // Greedy generation of 40 characters (8 + 40 = context): same tokens either way.
    SamplingOptions greedy;
    greedy.temperature = 0;
    Generator g1(1), g2(1);
    std::vector<int64_t> prompt = std::vector<int64_t>(corpus.val.begin(), corpus.val.begin() + 8);
    auto cached = generate(run.model, prompt, 40, greedy, g1, true);
    auto recomputed = generate(run.model, prompt, 40, greedy, g2, false);
    CHECK(cached == recomputed);
    // Past the context the cache refills from the last context/2 tokens and goes on.
    CHECK(generate(run.model, prompt, 100, greedy, g1, true).size() == 100);
    CHECK_THROWS_AS(run.gpt()->forward_step(Tensor::from_vector(std::vector<int64_t>(48, 0), {1, 48}), cache),
                    ShapeError);  // 8 + 48 positions > context
  }
}

TEST_CASE("causal: a position's logits do not depend on later tokens (both model styles)") {
  // A model that could see ahead would learn a train loss far below its held-out one;
  // this pins the causal alignment of the fused kernel, RoPE and the learned positions.
  for (bool llama : {false, true}) {
    CAPTURE(llama);
    Run run = tiny_run(llama, 2, 5);
    run.model->eval();
    std::vector<int64_t> ids(16);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(1 + (i * 7) % 19);
    Tensor a = run.model->forward(Tensor::from_vector(ids, Shape{1, 16}));
    for (std::size_t i = 10; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(1 + (i * 3) % 19);
    Tensor b = run.model->forward(Tensor::from_vector(ids, Shape{1, 16}));
    CHECK(allclose(a.narrow(1, 0, 10), b.narrow(1, 0, 10), 0.0, 0.0));  // positions 0..9: bit for bit
    CHECK_FALSE(allclose(a.narrow(1, 10, 6), b.narrow(1, 10, 6)));
  }
}

TEST_CASE("--precision bf16 / f16: autocast forward, f32 master weights, f16 loss scaling") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  const int64_t V = corpus.vocab.size();
  const std::vector<Batch> val = sequential_windows(corpus.val, 64, 32);
  for (bool llama : {false, true}) {
    for (DType precision : {DType::bf16, DType::f16}) {
      CAPTURE(llama);
      CAPTURE(precision);
      Config c;
      c.context = 32, c.d_model = 32, c.heads = 2, c.layers = 2, c.batch = 16, c.warmup = 10;
      c.steps = test_util::training_steps(120);
      c.lr = 3e-3, c.seed = 3;
      c = llama ? llama_style(c) : gpt2_style(c);
      c.precision = precision;
      Run run(c, V);
      CHECK(run.scaler.is_enabled() == (precision == DType::f16));
      {
        const autocast amp = examples::autocast_for(precision);
        CHECK(run.model(val.front().x).dtype() == precision);  // the head's matmul in the low dtype
      }
      int64_t skipped = 0;
      for (int64_t i = 0; i < c.steps; ++i) skipped += train_step(run, corpus.train).skipped;
      for (const Tensor& p : run.model->parameters()) CHECK(p.dtype() == DType::f32);  // master weights
      const double low = evaluate(run.model, val, precision), full = evaluate(run.model, val);
      MESSAGE("held-out " << low << " (" << full << " in f32), " << skipped << " skipped steps");
      if (!test_util::kSanitized) CHECK(low < 0.6 * bigram_loss(corpus.train, corpus.val, V, c.context));
      CHECK(std::abs(low - full) < 0.05);  // the same weights; the forward rounded to 8 or 11 bits
      // No growth in 120 steps (interval 2000): each skipped step halved the scale once.
      CHECK(run.scaler.get_scale() == (precision == DType::f16 ? std::ldexp(65536.0, -int(skipped)) : 1.0));
      if (precision == DType::bf16) CHECK(skipped == 0);
    }
  }
}

TEST_CASE("bf16 autocast: a block lets its f32 norm outputs go once they are cast") {
  // Under autocast only the norms' 16-bit casts are saved for backward, so nothing should
  // hold their f32 outputs by the block's last residual add (workload 7's live peak).
  for (bool llama : {false, true}) {
    CAPTURE(llama);
    Run run = tiny_run(llama, 1, 4);
    run.model->train();
    auto block = std::static_pointer_cast<BlockImpl>((*run.gpt()->blocks)[0]);
    std::vector<std::weak_ptr<Storage>> norm_outputs;
    auto keep = [&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>& out) {
      norm_outputs.push_back(out.at(0).storage());
      return nn::HookResult{};
    };
    std::vector<RemovableHandle> hooks;
    if (llama) {
      hooks.push_back(block->rms_1->register_forward_hook(keep));
      hooks.push_back(block->rms_2->register_forward_hook(keep));
    } else {
      hooks.push_back(block->ln_1->register_forward_hook(keep));
      hooks.push_back(block->ln_2->register_forward_hook(keep));
    }
    int drops = 0;
    std::size_t alive_at_last_drop = 99;
    hooks.push_back(
        block->drop->register_forward_hook([&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>&) {
          if (++drops == 2) {  // the MLP's dropout: right before the block's last add
            alive_at_last_drop = 0;
            for (const auto& w : norm_outputs) alive_at_last_drop += !w.expired();
          }
          return nn::HookResult{};
        }));
    Tensor x = randn({2, 16, 32}).requires_grad_(), y;
    {
      autocast amp(DType::bf16);
      y = block->forward(x);
    }
    CHECK(norm_outputs.size() == 2);
    CHECK(drops == 2);
    CHECK(alive_at_last_drop == 0);
    y.sum().backward();  // the graph is whole without them
    CHECK(x.grad().defined());
  }
}

TEST_CASE("--precision f16: an overflowing step is skipped; a resumed run keeps the loss scale") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 17);
  Config c;
  c.context = 16, c.d_model = 16, c.heads = 2, c.layers = 1, c.batch = 4, c.steps = 12, c.warmup = 3, c.seed = 9;
  c = llama_style(c);
  c.precision = DType::f16;
  const int64_t V = corpus.vocab.size();
  // A scale of 2^100 overflows every f16 gradient: the step is skipped, nothing moves.
  Run big(c, V);
  big.scaler = amp::GradScaler(amp::GradScalerOptions().init_scale(std::ldexp(1.0, 100)));
  std::vector<Tensor> before;
  for (const Tensor& p : big.model->parameters()) before.push_back(p.clone());
  CHECK(train_step(big, corpus.train).skipped);
  CHECK(big.scaler.get_scale() == std::ldexp(1.0, 99));
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(allclose(big.model->parameters()[i], before[i], 0.0, 0.0));

  const std::string path = std::string(AG_TMP_DIR) + "/test_lm_f16_checkpoint.safetensors";
  Run a(c, V);
  a.scaler = amp::GradScaler(amp::GradScalerOptions().growth_interval(2));  // the scale changes every 2 steps
  for (int i = 0; i < 5; ++i) train_step(a, corpus.train);
  save_checkpoint(path, *a.model, &a.opt, &a.sched, checkpoint_extra(a));
  const double scale = a.scaler.get_scale();
  const int64_t tracker = a.scaler.growth_tracker();
  for (int i = 0; i < 5; ++i) train_step(a, corpus.train);
  Run b(c, V);
  restore_checkpoint_extra(b, load_checkpoint(path, *b.model, &b.opt, &b.sched));
  CHECK(b.scaler.get_scale() == scale);
  CHECK(b.scaler.growth_tracker() == tracker);
  for (int i = 0; i < 5; ++i) train_step(b, corpus.train);
  CHECK(b.scaler.get_scale() == a.scaler.get_scale());
  for (std::size_t i = 0; i < a.model->parameters().size(); ++i)
    CHECK(allclose(a.model->parameters()[i], b.model->parameters()[i], 0.0, 0.0));
  // A checkpoint without "data_gen" is refused by name.
  CHECK_THROWS_WITH_AS(restore_checkpoint_extra(b, Metadata{}), doctest::Contains("'data_gen'"), ValueError);
}

TEST_CASE(
    "--quantize int8 / int4 / dynamic-int8: a trained GPT's held-out loss within issue 26's bounds; inference only") {
  Corpus corpus = make_corpus(paragraph(), 0.1, 33);
  const int64_t V = corpus.vocab.size();
  const std::vector<Batch> val = sequential_windows(corpus.val, 64, 32);
  Config c;
  c.context = 32, c.d_model = 64, c.heads = 2, c.layers = 2, c.batch = 16, c.warmup = 10;
  c.steps = test_util::training_steps(150);
  c.lr = 3e-3, c.seed = 3;
  c = llama_style(c);
  Run run(c, V);
  for (int64_t i = 0; i < c.steps; ++i) train_step(run, corpus.train);
  const double f32_loss = evaluate(run.model, val);
  const std::string path = std::string(AG_TMP_DIR) + "/test_lm_quantize.safetensors";
  nn::save(*run.model, path);
  for (const std::string format : {"int8", "int4", "dynamic-int8"}) {
    CAPTURE(format);
    Run q(c, V);
    nn::load(*q.model, path);
    // Every Linear, SwiGLU's w2 included (in_features 176 at d_model 64: int4's last
    // group of 32 is zero-padded): 7 per block and the head.
    const int64_t done = quantize_for_inference(q.gpt(), format);
    CHECK(done == 7 * c.layers + 1);
    const double loss = evaluate(q.model, val);
    MESSAGE(format << ": held-out " << loss << " against f32 " << f32_loss << " (" << done << " Linears quantized)");
    if (!test_util::kSanitized) CHECK(std::abs(loss - f32_loss) < (format == "int4" ? 0.06 : 0.01));
    // Inference only: a gradient through a quantized layer is refused by name.
    Tensor out = q.model(val.front().x);
    CHECK_THROWS_WITH_AS(out.sum().backward(), doctest::Contains("quantized modules are inference-only"),
                         AutogradError);
  }
  CHECK_THROWS_WITH_AS(quantize_for_inference(run.gpt(), "int3"),
                       doctest::Contains("lm: --quantize takes int8, int4 or dynamic-int8, got 'int3'"), ValueError);
  CHECK_THROWS_WITH_AS(examples::precision_from_name("f8"),
                       doctest::Contains("--precision must be f32, bf16 or f16, got 'f8'"), ValueError);
}
