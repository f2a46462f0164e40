// Threads: the shared default generator hands out each draw exactly once; threads that
// each train or evaluate their own model get the single-threaded results bit for bit
// (grad mode per thread, the buffer cache, the parallel_for pool and OpenBLAS shared).
// CI runs this file under ThreadSanitizer too (.ci/run phase 3).
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using ag::Tensor;

namespace {

constexpr int kThreads = 4;

// Runs fn(i) on kThreads threads at once.
template <class F>
void on_threads(F fn) {
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; ++i) ts.emplace_back([&fn, i] { fn(i); });
  for (auto& t : ts) t.join();
}

// ---- independent models ----
// A small Transformer encoder layer (attention, layer norm, feed-forward) and a linear
// head, with dropout between them drawn from the thread's own Generator.
struct Model {
  ag::nn::TransformerEncoderLayer layer{nullptr};
  ag::nn::Linear head{nullptr};
};

// Made on the main thread, one after the other: construction draws the initial weights
// from the default generator, seeded per model.
Model make_model(int i) {
  ag::manual_seed(1000 + static_cast<uint64_t>(i));
  Model m;
  m.layer = ag::nn::TransformerEncoderLayer(ag::nn::TransformerLayerOptions(16, 2).dim_feedforward(32).dropout(0.0));
  m.head = ag::nn::Linear(16, 3);
  return m;
}

std::vector<Tensor> params_of(Model& m) {
  std::vector<Tensor> p = m.layer->parameters();
  for (const Tensor& t : m.head->parameters()) p.push_back(t);
  return p;
}

// What a run returns: every loss and every final parameter value, as raw floats.
std::vector<float> flatten(const std::vector<Tensor>& ts) {
  std::vector<float> out;
  for (const Tensor& t : ts) {
    std::vector<float> v = t.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Model i: i < 3 trains 4 Adam steps with dropout; i == 3 evaluates with grad off.
std::vector<float> run(Model& m, int i) {
  ag::Generator gen(77 + static_cast<uint64_t>(i));
  std::vector<Tensor> losses;
  if (i == kThreads - 1) {  // evaluation: NoGradGuard on this thread only
    ag::NoGradGuard no_grad;
    m.layer->eval();
    for (int step = 0; step < 4; ++step) {
      Tensor x = ag::randn({2, 5, 16}, ag::DType::f32, &gen);  // (B, L, E)
      Tensor y = m.head->forward(m.layer->forward(x));         // (B, L, 3)
      CHECK_FALSE(y.requires_grad());
      losses.push_back((y * y).mean());
    }
    return flatten(losses);
  }
  std::vector<Tensor> params = params_of(m);
  ag::optim::Adam opt(params, ag::optim::AdamOptions(1e-2));
  for (int step = 0; step < 4; ++step) {
    Tensor x = ag::randn({2, 5, 16}, ag::DType::f32, &gen);      // (B, L, E)
    Tensor target = ag::randn({2, 5, 3}, ag::DType::f32, &gen);  // (B, L, 3)
    Tensor h = ag::dropout(m.layer->forward(x), 0.1, true, &gen);
    Tensor loss = ag::mse_loss(m.head->forward(h), target);
    REQUIRE(loss.requires_grad());  // another thread's NoGradGuard does not reach here
    opt.zero_grad();
    loss.backward();
    opt.step();
    losses.push_back(loss.detach());
  }
  for (const Tensor& p : params) losses.push_back(p);
  return flatten(losses);
}

}  // namespace

TEST_CASE("concurrency: threads drawing from the default generator get the single-thread sequence's values") {
  // Per thread; a fifth under a sanitizer, where sorting the 4M draws at -O0 took 40 s.
  constexpr int64_t kDraws = test_util::kSanitized ? 200'000 : 1'000'000;
  SUBCASE("through ops (rand, 1000 draws per op)") {
    ag::manual_seed(12345);
    std::vector<std::vector<double>> got(kThreads);
    on_threads([&](int t) {
      for (int64_t k = 0; k < kDraws / 1000; ++k) {
        std::vector<double> v = ag::rand({1000}, ag::DType::f64).to_vector<double>();
        got[static_cast<std::size_t>(t)].insert(got[static_cast<std::size_t>(t)].end(), v.begin(), v.end());
      }
    });
    // Expected: the first 4M uniforms of the same seed, drawn by one thread.
    ag::Generator ref(12345);
    std::vector<double> want(kThreads * kDraws), all;
    for (double& w : want) w = ref.uniform();
    for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
    std::sort(want.begin(), want.end());
    std::sort(all.begin(), all.end());
    CHECK(all == want);  // none twice, none lost
    CHECK(ag::default_generator().state() == ref.state());
  }
  SUBCASE("direct draws under default_generator().lock()") {
    ag::manual_seed(999);
    std::vector<std::vector<uint64_t>> got(kThreads, std::vector<uint64_t>(kDraws));
    on_threads([&](int t) {
      for (auto& x : got[static_cast<std::size_t>(t)]) {
        auto hold = ag::default_generator().lock();
        x = ag::default_generator().next_u64();
      }
    });
    ag::Generator ref(999);
    std::vector<uint64_t> want(kThreads * kDraws), all;
    for (auto& w : want) w = ref.next_u64();
    for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
    std::sort(want.begin(), want.end());
    std::sort(all.begin(), all.end());
    CHECK(all == want);
  }
}

TEST_CASE("concurrency: only the default generator has a mutex") {
  ag::Generator own(1);
  CHECK_FALSE(own.lock().owns_lock());
  CHECK(ag::default_generator().lock().owns_lock());
}

TEST_CASE("concurrency: 4 threads training or evaluating their own models match the single-threaded runs bit for bit") {
  // Reference: each model's run alone, one after the other.
  std::vector<std::vector<float>> want(kThreads), got(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    Model m = make_model(i);
    want[static_cast<std::size_t>(i)] = run(m, i);
  }
  std::vector<Model> models;
  for (int i = 0; i < kThreads; ++i) models.push_back(make_model(i));
  on_threads([&](int i) { got[static_cast<std::size_t>(i)] = run(models[static_cast<std::size_t>(i)], i); });
  for (int i = 0; i < kThreads; ++i) {
    INFO("model ", i);
    REQUIRE(got[static_cast<std::size_t>(i)].size() == want[static_cast<std::size_t>(i)].size());
    CHECK(got[static_cast<std::size_t>(i)] == want[static_cast<std::size_t>(i)]);  // exact float equality
  }
  // The models differ from each other (the comparison above is not vacuous).
  CHECK(want[0] != want[1]);
}

TEST_CASE("concurrency: hooks registered from several threads get distinct ids") {
  // RemovableHandle ids come from one counter; a lost update would give two hooks one
  // id and remove() would drop both.
  std::vector<Tensor> xs;
  for (int i = 0; i < kThreads; ++i) xs.push_back(Tensor::from_vector(std::vector<double>{1.0}).requires_grad_());
  std::vector<int> calls(kThreads, 0);
  on_threads([&](int t) {
    Tensor& x = xs[static_cast<std::size_t>(t)];
    std::vector<ag::RemovableHandle> handles;
    for (int k = 0; k < 2000; ++k)
      handles.push_back(
          x.register_post_accumulate_grad_hook([&calls, t](Tensor&) { ++calls[static_cast<std::size_t>(t)]; }));
    for (int k = 0; k < 2000; k += 2) handles[static_cast<std::size_t>(k)].remove();
    (x * 2.0).sum().backward();
  });
  for (int c : calls) CHECK(c == 1000);  // the 1000 hooks not removed, each once
}

TEST_CASE("concurrency: 4 threads evaluating one shared model under NoGradGuard match one thread bit for bit") {
  // The serving case: one set of weights, read by every thread, written by none.
  Model m = make_model(7);
  m.layer->eval();
  auto evaluate = [&m](int i) {
    ag::NoGradGuard no_grad;
    ag::Generator gen(500 + static_cast<uint64_t>(i));
    std::vector<Tensor> outs;
    for (int step = 0; step < 3; ++step)
      outs.push_back(m.head->forward(m.layer->forward(ag::randn({2, 5, 16}, ag::DType::f32, &gen))));
    return flatten(outs);
  };
  std::vector<std::vector<float>> want(kThreads), got(kThreads);
  for (int i = 0; i < kThreads; ++i) want[static_cast<std::size_t>(i)] = evaluate(i);
  on_threads([&](int i) { got[static_cast<std::size_t>(i)] = evaluate(i); });
  for (int i = 0; i < kThreads; ++i) CHECK(got[static_cast<std::size_t>(i)] == want[static_cast<std::size_t>(i)]);
}

namespace {
struct UnnamedNetImpl : ag::nn::Module {};  // Module(): named after its type on first ask
}  // namespace

TEST_CASE("concurrency: threads asking an unnamed module's type_name at once agree (TSan: no race)") {
  std::vector<std::shared_ptr<UnnamedNetImpl>> nets;
  for (int i = 0; i < 8; ++i) nets.push_back(std::make_shared<UnnamedNetImpl>());
  std::vector<std::string> got(nets.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < nets.size(); ++i) threads.emplace_back([&, i] { got[i] = nets[i]->type_name(); });
  for (auto& t : threads) t.join();
  for (const auto& g : got) CHECK(g == "UnnamedNet");
}

// The buffer cache keeps small buffers in per-thread lists (core/storage.cpp): a thread
// reuses its own freed buffer, and a thread's lists go to the shared cache when it exits,
// where another thread finds them. Off under AddressSanitizer or ATTOGRAD_NO_BUFFER_CACHE.
TEST_CASE("buffer cache: a thread reuses its buffers and hands them on when it exits") {
#if defined(AG_TEST_ASAN)
  return;
#endif
  if (const char* off = std::getenv("ATTOGRAD_NO_BUFFER_CACHE"); off && *off && *off != '0') return;
  ag::empty_buffer_cache();                        // this thread's lists and the shared cache
  const void* first = ag::empty({24}).raw_data();  // 96 bytes: class 128, freed at once
  CHECK(ag::empty({30}).raw_data() == first);      // 120 bytes, the same class: the same buffer
  ag::empty_buffer_cache();
  std::vector<const void*> theirs;
  std::thread([&] {
    std::vector<Tensor> ts;
    for (int i = 0; i < 10; ++i) ts.push_back(ag::empty({32}));  // class 128
    for (const Tensor& t : ts) theirs.push_back(t.raw_data());
  }).join();  // 8 buffers in its list, 2 in the shared cache; at exit all 10 are shared
  std::vector<Tensor> mine;
  for (int i = 0; i < 10; ++i) mine.push_back(ag::empty({32}));
  for (const Tensor& t : mine) CHECK(std::find(theirs.begin(), theirs.end(), t.raw_data()) != theirs.end());
}
