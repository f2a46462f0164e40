// The copy_task example's data-parallel step (examples/copy/trainer.h with ddp): every
// rank trains on its rows of each global batch, and after several steps the parameters
// equal one process trained on the whole batches, computed on every rank from the same
// seed. Variable lengths, so the ranks' token counts differ and the loss scaling counts.
#include <doctest/doctest.h>

#include "../../examples/copy/trainer.h"

using namespace copy_task;

TEST_CASE("copy_task --ddp: 2 ranks x half batches equal 1 process x whole batches") {
  Config c;
  c.d_model = 16, c.heads = 2, c.layers = 1, c.d_ff = 32, c.dropout = 0.0;
  c.len = 8, c.min_len = 4, c.batch = 8, c.steps = 6, c.warmup = 4, c.seed = 3;
  Run parallel(c, /*data_parallel=*/true);
  double loss_parallel = 0;
  for (int64_t s = 0; s < c.steps; ++s) loss_parallel = train_step(parallel).loss;

  Run single(c);  // the same seed: the same model and the same global batches
  double loss_single = 0;
  for (int64_t s = 0; s < c.steps; ++s) loss_single = train_step(single).loss;

  CHECK(loss_parallel == doctest::Approx(loss_single).epsilon(1e-5));
  auto a = parallel.model->named_parameters(), b = single.model->named_parameters();
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    Tensor pa = a[i].second, pb = b[i].second;
    if (a[i].first.find("in_proj_bias") != std::string::npos) {
      // The key bias's gradient is zero up to rounding (softmax ignores a constant added
      // to every score of a row), and Adam scales that rounding noise up to full-size
      // steps: compare the query and value thirds only.
      const int64_t E = c.d_model;
      pa = cat({pa.narrow(0, 0, E), pa.narrow(0, 2 * E, E)}, 0);
      pb = cat({pb.narrow(0, 0, E), pb.narrow(0, 2 * E, E)}, 0);
    }
    double d = amax(abs(pa - pb)).item<double>();
    if (d > 1e-5) MESSAGE(a[i].first << " differs by " << d);
    worst = std::max(worst, d);
  }
  MESSAGE("ranks " << dist::world_size() << ": max |parameter difference| " << worst);
  CHECK(worst < 1e-5);
}
