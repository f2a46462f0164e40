// nn::DistributedDataParallel on the ranks of the job (one process: world of one; np2:
// two ranks). Every rank runs the same cases in the same order, and each case computes
// its reference on every rank in one process from the same seeds: the model trained on
// the whole global batch, or each rank's local gradients worked out by hand.
#include <attograd/attograd.h>
#include <attograd/data.h>
#include <attograd/optim/training_state.h>
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::map_diff;
using test_util::max_abs_diff;

namespace {

int W() { return dist::world_size(); }
int R() { return dist::rank(); }

// ---- models ----
// x (B, 6) -> (B, 3)
struct MlpImpl : nn::Module {
  MlpImpl() : nn::Module("Mlp") {
    fc1 = register_module("fc1", nn::Linear(6, 16));
    fc2 = register_module("fc2", nn::Linear(16, 16));
    fc3 = register_module("fc3", nn::Linear(16, 3));
  }
  Tensor forward(const Tensor& x) { return fc3(tanh(fc2(tanh(fc1(x))))); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
AG_MODULE(Mlp);

// A LayerNorm, a weight shared by two Linears (gradients from both uses), and a
// parameter the forward never uses. x (B, 6) -> (B, 3)
struct TiedImpl : nn::Module {
  TiedImpl() : nn::Module("Tied") {
    fc_in = register_module("fc_in", nn::Linear(6, 8));
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({8})));
    mix_a = register_module("mix_a", nn::Linear(8, 8));
    mix_b = register_module("mix_b", nn::Linear(8, 8));
    mix_b->weight = mix_a->weight;
    head = register_module("head", nn::Linear(8, 3));
    unused = register_parameter("unused", randn({5}));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = ln(tanh(fc_in(x)));  // (B, 8)
    h = mix_b(tanh(mix_a(h)));
    return head(h);
  }
  nn::Linear fc_in{nullptr}, mix_a{nullptr}, mix_b{nullptr}, head{nullptr};
  nn::LayerNorm ln{nullptr};
  Tensor unused;
};
AG_MODULE(Tied);

template <class Net>
Net make(uint64_t seed, DType dtype) {
  manual_seed(seed);
  Net net;
  net->to(dtype);
  return net;
}

// ---- data: (N, 6) inputs, (N, 3) targets of a fixed nonlinear teacher ----
data::TensorDataset make_data(int64_t n, DType dtype) {
  Generator gen(2024);
  Tensor x = randn({n, 6}, DType::f64, &gen);
  Tensor w = randn({6, 3}, DType::f64, &gen);
  Tensor y = sin(matmul(x, w)) + 0.1 * randn({n, 3}, DType::f64, &gen);
  return data::TensorDataset(x.to(dtype), y.to(dtype));
}

double max_diff(const TensorMap& a, const TensorMap& b) {
  double m = 0;
  for (auto& [k, t] : a) m = std::max(m, max_abs_diff(t, b.at(k)));
  return m;
}

// max |a.grad - b.grad| over the parameters of two models of one structure
double max_grad_diff(const Mlp& a, const Mlp& b) {
  auto pa = a->parameters(), pb = b->parameters();
  double m = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) m = std::max(m, max_abs_diff(pa[i].grad(), pb[i].grad()));
  return m;
}

void report(const std::string& what, double diff) {
  if (R() == 0) std::printf("ddp: %s: max abs diff %.3g (world size %d)\n", what.c_str(), diff, W());
}

// Trains `net` for `steps` Adam steps on the mean squared error, each rank on its shard
// of the epochs of DistributedRandomSampler(N, replicas, rank) in batches of `batch`,
// starting at global step `first` (batches before it skipped: a resumed run). With
// `ddp`, gradients are averaged by the wrapper.
template <class Net>
void train(Net& net, optim::Optimizer& opt, const data::TensorDataset& ds, int64_t replicas, int64_t rank,
           int64_t batch, int first, int steps) {
  auto sampler = std::make_shared<data::DistributedRandomSampler>(ds.size(), replicas, rank, true, 7);
  data::DataLoader loader(ds, data::DataLoaderOptions(batch).sampler(sampler));
  int step = 0;
  for (int64_t epoch = 0; step < first + steps; ++epoch) {
    sampler->set_epoch(epoch);
    for (data::Example& b : loader) {
      if (step >= first + steps) break;
      if (step++ < first) continue;
      opt.zero_grad();
      mse_loss(net(b.data), b.target).backward();
      opt.step();
    }
  }
}

// One process on the global batch (the reference) against W ranks on batch / W each.
template <class Net>
double ddp_against_one_process(DType dtype, double bucket_cap_mb, int64_t* buckets = nullptr) {
  const int64_t n = 160, global_batch = 80;
  auto ds = make_data(n, dtype);
  Net ref = make<Net>(11, dtype);
  optim::Adam ref_opt(ref->named_parameters(), optim::AdamOptions(1e-2));
  train(ref, ref_opt, ds, 1, 0, global_batch, 0, 20);

  // Each rank starts from its own initialization: the broadcast from rank 0 must fix it.
  Net net = make<Net>(11 + 1000 * static_cast<uint64_t>(R()), dtype);
  nn::DistributedDataParallel ddp(net, nn::DistributedDataParallelOptions().bucket_cap_mb(bucket_cap_mb));
  if (buckets) *buckets = static_cast<int64_t>(ddp.bucket_indices().size());
  optim::Adam opt(net->named_parameters(), optim::AdamOptions(1e-2));
  train(net, opt, ds, W(), R(), global_batch / W(), 0, 20);
  CHECK(ddp.comm_stats().reductions == (W() > 1 ? 20 : 0));
  return max_diff(net->state_dict(), ref->state_dict());
}

}  // namespace

TEST_CASE("ddp: parameters and buffers start as rank 0's") {
  // Each rank its own initialization and buffer values, rank 0's afterwards.
  struct WithBuffersImpl : nn::Module {
    WithBuffersImpl() : nn::Module("WithBuffers") {
      lin = register_module("lin", nn::Linear(3, 2));
      frozen = register_parameter("frozen", randn({4}), /*requires_grad=*/false);
      running = register_buffer("running", zeros({3}, DType::f64));
      count = register_buffer("count", zeros({1}, DType::i64));
      mask = register_buffer("mask", zeros({2}, DType::b8));
    }
    nn::Linear lin{nullptr};
    Tensor frozen, running, count, mask;
  };
  auto set_buffers = [](WithBuffersImpl& m, int rank) {
    NoGradGuard g;
    m.running.copy_(Tensor::from_vector(std::vector<double>{10.0 * rank, 1, 2}));
    m.count.fill_(static_cast<double>(rank + 5));
    m.mask.copy_(Tensor::from_vector(std::vector<int64_t>{rank == 0 ? 1 : 0, rank}));
  };
  manual_seed(100);
  auto want = std::make_shared<WithBuffersImpl>();
  set_buffers(*want, 0);
  manual_seed(100 + static_cast<uint64_t>(R()));
  auto m = std::make_shared<WithBuffersImpl>();
  set_buffers(*m, R());
  nn::DistributedDataParallel ddp(m);
  CHECK(map_diff(m->state_dict(), want->state_dict()) == "");

  // After each backward, buffers are rank 0's again (what the next forward must see).
  set_buffers(*m, R());
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3});
  m->lin(x).sum().backward();
  CHECK(map_diff(m->state_dict(), want->state_dict()) == "");

  // broadcast_buffers(false): each rank keeps its own.
  nn::DistributedDataParallel keep(std::make_shared<WithBuffersImpl>(),
                                   nn::DistributedDataParallelOptions().broadcast_buffers(false));
  auto& km = static_cast<WithBuffersImpl&>(*keep.module());
  set_buffers(km, R());
  km.lin(x).sum().backward();
  CHECK(km.running.to_vector<double>()[0] == 10.0 * R());
}

TEST_CASE("ddp: the ranks must wrap the same model") {
  // Rank 1 has a wider hidden layer: every rank throws (no rank left waiting).
  manual_seed(1);
  nn::Sequential net(nn::Linear(4, R() == 1 ? 6 : 5), nn::Linear(R() == 1 ? 6 : 5, 1));
  std::string err = test_util::error_of<DistError>([&] { nn::DistributedDataParallel ddp(net.ptr()); });
  if (W() > 1)
    CHECK(test_util::contains(err, "the ranks wrap different models"));
  else
    CHECK(err == "<no error>");
}

TEST_CASE("ddp: 2 ranks x batch 40 = 1 process x batch 80 after 20 Adam steps (MLP)") {
  int64_t buckets = 0;
  double d64 = ddp_against_one_process<Mlp>(DType::f64, 0.001, &buckets);
  report("MLP f64, 20 Adam steps", d64);
  CHECK(buckets == 3);
  CHECK(d64 <= 1e-12);
  double d32 = ddp_against_one_process<Mlp>(DType::f32, 0.001);
  report("MLP f32, 20 Adam steps", d32);
  CHECK(d32 <= 1e-5);
}

TEST_CASE("ddp: equality with a LayerNorm, a tied weight and an unused parameter") {
  int64_t buckets = 0;
  double d64 = ddp_against_one_process<Tied>(DType::f64, 0.0006, &buckets);
  report("LayerNorm + tied + unused f64, 20 Adam steps", d64);
  CHECK(buckets >= 3);
  CHECK(d64 <= 1e-12);
  double d32 = ddp_against_one_process<Tied>(DType::f32, 0.0006);
  report("LayerNorm + tied + unused f32, 20 Adam steps", d32);
  CHECK(d32 <= 1e-5);

  // The unused parameter got no gradient anywhere: undefined, as in one process.
  Tied net = make<Tied>(3, DType::f64);
  nn::DistributedDataParallel ddp(net);
  auto ds = make_data(8, DType::f64);
  mse_loss(net(ds.get(0).data.unsqueeze(0)), ds.get(0).target.unsqueeze(0)).backward();
  CHECK_FALSE(net->unused.grad().defined());
  CHECK(net->mix_a->weight.grad().defined());
}

TEST_CASE("ddp: no_sync accumulates locally; the next backward averages the sum") {
  // Global batch 40 = 2 micro-batches x W ranks x B rows; loss = mean over micro-batches.
  const int64_t G = 40, B = G / (2 * W());
  auto ds = make_data(G, DType::f64);
  std::vector<Tensor> xs, ys;
  for (int64_t i = 0; i < G; ++i) xs.push_back(ds.get(i).data), ys.push_back(ds.get(i).target);
  Tensor X = stack(xs, 0), Y = stack(ys, 0);  // (40, 6), (40, 3)
  auto rows = [&](int64_t micro) { return (micro * W() + R()) * B; };

  Mlp ref = make<Mlp>(5, DType::f64);
  mse_loss(ref(X), Y).backward();
  Mlp local = make<Mlp>(5, DType::f64);  // micro-batch 0 of this rank alone
  (mse_loss(local(X.narrow(0, rows(0), B)), Y.narrow(0, rows(0), B)) * 0.5).backward();

  Mlp net = make<Mlp>(5, DType::f64);
  nn::DistributedDataParallel ddp(net, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
  {
    auto guard = ddp.no_sync();
    (mse_loss(net(X.narrow(0, rows(0), B)), Y.narrow(0, rows(0), B)) * 0.5).backward();
  }
  CHECK(max_grad_diff(net, local) == 0);  // nothing was communicated
  CHECK(ddp.comm_stats().reductions == 0);
  (mse_loss(net(X.narrow(0, rows(1), B)), Y.narrow(0, rows(1), B)) * 0.5).backward();
  double diff = max_grad_diff(net, ref);
  report("no_sync: 2 micro-batches against one batch, gradients", diff);
  CHECK(diff <= 1e-12);
}

TEST_CASE("ddp: a parameter used on some ranks only gets the average on every rank") {
  // loss_r = sum(a * x_r) + [r == 0] sum(b * x_r^2) + [r == 1] sum(d * x_r); c is never used.
  // Averaged: a = mean_r x_r, b = x_0^2 / W, d = x_1 / W (undefined in a world of one),
  // c undefined everywhere.
  struct FourImpl : nn::Module {
    FourImpl() : nn::Module("Four") {
      a = register_parameter("a", zeros({4}, DType::f64));
      b = register_parameter("b", zeros({4}, DType::f64));
      c = register_parameter("c", zeros({4}, DType::f64));
      d = register_parameter("d", zeros({4}, DType::f64));
    }
    Tensor a, b, c, d;
  };
  auto m = std::make_shared<FourImpl>();
  // One parameter per bucket (32 bytes each, cap 40 bytes): 4 buckets, started in order d, c, b, a.
  nn::DistributedDataParallel ddp(m, nn::DistributedDataParallelOptions().bucket_cap_mb(40.0 / (1 << 20)));
  CHECK(ddp.bucket_indices() == std::vector<std::vector<int64_t>>{{3}, {2}, {1}, {0}});
  auto x_of = [](int r, int iter) {
    Generator g(static_cast<uint64_t>(100 + 10 * iter + r));
    return randn({4}, DType::f64, &g);
  };
  for (int iter = 0; iter < 2; ++iter) {
    m->a.zero_grad(), m->b.zero_grad(), m->c.zero_grad(), m->d.zero_grad();
    Tensor x = x_of(R(), iter);
    // Iteration 1 swaps the roles: b on the last rank only, d on none.
    const bool use_b = iter == 0 ? R() == 0 : R() == W() - 1;
    const bool use_d = iter == 0 && R() == 1;
    Tensor loss = (m->a * x).sum();
    if (use_b) loss = loss + (m->b * x * x).sum();
    if (use_d) loss = loss + (m->d * x).sum();
    loss.backward();

    Tensor a_want = zeros({4}, DType::f64);
    for (int r = 0; r < W(); ++r) a_want = a_want + x_of(r, iter) / static_cast<double>(W());
    const int b_rank = iter == 0 ? 0 : W() - 1;
    Tensor b_want = x_of(b_rank, iter) * x_of(b_rank, iter) / static_cast<double>(W());
    CHECK(max_abs_diff(m->a.grad(), a_want) <= 1e-15);
    CHECK(max_abs_diff(m->b.grad(), b_want) <= 1e-15);
    CHECK_FALSE(m->c.grad().defined());
    if (iter == 0 && W() > 1) {
      REQUIRE(m->d.grad().defined());
      CHECK(max_abs_diff(m->d.grad(), x_of(1, iter) / static_cast<double>(W())) <= 1e-15);
    } else {
      CHECK_FALSE(m->d.grad().defined());
    }
  }
}

TEST_CASE("ddp: buckets start during backward; the hooks go with the wrapper") {
  Mlp net = make<Mlp>(21, DType::f64);
  auto ds = make_data(16, DType::f64);
  std::vector<Tensor> xs, ys;
  for (int64_t i = R() * 8; i < R() * 8 + 8; ++i) xs.push_back(ds.get(i).data), ys.push_back(ds.get(i).target);
  Tensor X = stack(xs, 0), Y = stack(ys, 0);  // this rank's (8, 6), (8, 3)
  {
    nn::DistributedDataParallel ddp(net, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
    const int64_t buckets = static_cast<int64_t>(ddp.bucket_indices().size());
    REQUIRE(buckets == 3);
    // Buckets (fc3.bias, fc3.weight, fc2.bias), (fc2.weight), (fc1.bias, fc1.weight). When
    // fc2.weight's gradient is final (the wrapper's hook runs before this later one), the
    // first two buckets have started while backward has yet to reach fc1.
    CHECK(ddp.bucket_indices() == std::vector<std::vector<int64_t>>{{5, 4, 3}, {2}, {1, 0}});
    int64_t started_then = -1, reductions_then = -1;
    bool fc1_done_then = true;
    auto h = net->fc2->weight.register_post_accumulate_grad_hook([&](Tensor&) {
      started_then = ddp.comm_stats().buckets_started_in_hooks;
      reductions_then = ddp.comm_stats().reductions;
      fc1_done_then = net->fc1->weight.grad().defined();
    });
    mse_loss(net(X), Y).backward();
    h.remove();
    const auto& s = ddp.comm_stats();
    if (W() > 1) {
      CHECK(started_then == 2);
      CHECK(reductions_then == 0);
      CHECK_FALSE(fc1_done_then);
      CHECK(s.buckets_started_in_hooks == buckets);  // every parameter is used: all from hooks
      CHECK(s.buckets_started_at_end == 0);
      CHECK(s.reductions == 1);
      CHECK(s.wait_seconds >= 0);
      CHECK(s.start_seconds > 0);
      for (auto& p : net->parameters()) CHECK(p.impl()->post_accumulate_grad_hooks.size() == 1);
    } else {  // a world of one: no hooks, nothing to do
      CHECK(started_then == 0);
      CHECK(s.reductions == 0);
      for (auto& p : net->parameters()) CHECK(p.impl()->post_accumulate_grad_hooks.empty());
    }
    ddp.reset_comm_stats();
    CHECK(ddp.comm_wait_seconds() == 0);
    CHECK(ddp.comm_stats().start_seconds == 0);
    CHECK(ddp.comm_stats().reductions == 0);
  }
  for (auto& p : net->parameters()) CHECK(p.impl()->post_accumulate_grad_hooks.empty());
  // Without the wrapper, gradients stay local: against the same model trained alone.
  net->zero_grad();
  mse_loss(net(X), Y).backward();
  Mlp alone = make<Mlp>(21, DType::f64);
  alone->load_state_dict(net->state_dict());
  mse_loss(alone(X), Y).backward();
  CHECK(max_abs_diff(net->fc1->weight.grad(), alone->fc1->weight.grad()) == 0);
}

TEST_CASE("ddp: a backward that throws after its all-reduces started leaves the wrapper refusing") {
  Mlp net = make<Mlp>(41, DType::f64);
  nn::DistributedDataParallel ddp(net, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
  Generator gen(3);
  Tensor x = randn({4, 6}, DType::f64, &gen).requires_grad_();
  // An op under fc1 whose backward throws: it runs after every parameter's hook, so on
  // every rank all buckets have started and the end-of-backward callback never runs.
  Tensor boom = record("boom", x.detach().clone(), {x},
                       [](const Tensor&, NeedsGrad) -> Grads { throw ValueError("boom: backward"); });
  CHECK_THROWS_AS(pow(net(boom), 2.0).sum().backward(), ValueError);
  std::string err = test_util::error_of<DistError>([&] { pow(net(x), 2.0).sum().backward(); });
  if (W() > 1)
    CHECK(test_util::contains(err, "cannot average again"));
  else
    CHECK(err == "<no error>");
}

TEST_CASE("ddp: rank 0 writes a checkpoint, every rank resumes, bit for bit") {
  const int64_t global_batch = 80;
  auto ds = make_data(160, DType::f64);
  const auto make_opt = [](Mlp& net) {
    return std::make_unique<optim::Adam>(net->named_parameters(), optim::AdamOptions(1e-2));
  };
  // Uninterrupted: 10 steps.
  Mlp full = make<Mlp>(31, DType::f64);
  nn::DistributedDataParallel ddp_full(full, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
  auto opt_full = make_opt(full);
  train(full, *opt_full, ds, W(), R(), global_batch / W(), 0, 10);

  // 5 steps, checkpoint by rank 0.
  const std::string dir = std::string(AG_TMP_DIR) + "/dist_ddp";
  const std::string path = dir + "/resume_np" + std::to_string(W()) + ".safetensors";
  {
    Mlp first = make<Mlp>(31, DType::f64);
    nn::DistributedDataParallel ddp(first, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
    auto opt = make_opt(first);
    train(first, *opt, ds, W(), R(), global_batch / W(), 0, 5);
    if (R() == 0) {
      std::filesystem::create_directories(dir);
      save_checkpoint(path, *first, opt.get(), nullptr, {{"step", "5"}});
    }
    dist::barrier();
  }
  // A fresh model (other seeds per rank) and optimizer; wrapped first, so the checkpoint
  // (not the broadcast) must make every rank equal.
  Mlp resumed = make<Mlp>(77 + static_cast<uint64_t>(R()), DType::f64);
  nn::DistributedDataParallel ddp(resumed, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
  auto opt = make_opt(resumed);
  Metadata extra = load_checkpoint(path, *resumed, opt.get());
  const int first_step = std::stoi(extra.at("step"));
  CHECK(first_step == 5);
  train(resumed, *opt, ds, W(), R(), global_batch / W(), first_step, 10 - first_step);
  CHECK(map_diff(resumed->state_dict(), full->state_dict()) == "");
  CHECK(map_diff(opt->state_dict(), opt_full->state_dict()) == "");
  dist::barrier();  // every rank has read the file
  if (R() == 0) std::filesystem::remove(path);
}
