// End to end: a tiny copy-task Transformer, trained for a few hundred steps with the
// example's own model, data and training step, must learn to copy held-out sequences.
#include <doctest/doctest.h>

#include "copy/trainer.h"

using namespace copy_task;

TEST_CASE("a tiny Transformer learns the copy task end to end") {
  Config c;
  c.d_model = 32, c.heads = 2, c.layers = 1, c.d_ff = 64, c.dropout = 0.0;
  c.len = 8, c.min_len = 5;  // variable lengths, so padding masks are trained and evaluated
  c.batch = 32, c.steps = 600, c.warmup = 100, c.lr_factor = 2.0, c.seed = 7;
  Run run(c);
  double first = 0, last = 0;
  for (int64_t s = 0; s < c.steps; ++s) {
    StepStats st = train_step(run);
    if (s == 0) first = st.loss;
    last = s == 0 ? st.loss : 0.9 * last + 0.1 * st.loss;  // smoothed
  }
  MESSAGE("loss " << first << " -> " << last);
  CHECK(first > 1.5);  // ln(9) ~ 2.2 at the start
  CHECK(last < 0.15);
  EvalResult ev = evaluate(run.model, c, 300);
  MESSAGE("held-out exact " << ev.exact << ", token " << ev.token);
  CHECK(ev.exact >= 0.9);
  CHECK(ev.token >= 0.98);
  // Greedy decoding without the cache gives the same tokens.
  Tensor src = ev.batch.src.narrow(0, 0, 20);
  CHECK(allclose(run.model->greedy_decode(src, c.len - 1, 1, false).to(DType::f64),
                 run.model->greedy_decode(src, c.len - 1, 1, true).to(DType::f64)));
}

TEST_CASE("--precision f16 with --tp is refused by name; bf16 with --tp and f16 alone are accepted") {
  Config c;
  c.steps = 1;
  c.tensor_parallel = true;
  c.precision = DType::f16;
  CHECK_THROWS_WITH_AS(Run{c}, doctest::Contains("copy_task: --precision f16 with --tp needs a GradScaler"),
                       ValueError);
  c.precision = DType::bf16;
  CHECK_NOTHROW(Run{c});
  c.tensor_parallel = false;
  c.precision = DType::f16;
  Run r(c);
  CHECK(r.scaler.is_enabled());
}
