// ag::data: TensorDataset, RandomWindows and DataLoader (batching, shuffling by seed,
// drop_last, the bounded prefetch thread, stopping mid-epoch, errors), and the
// DistributedRandomSampler (shards, epochs, global batches kept whole).
#include <attograd/attograd.h>
#include <attograd/data.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

// Every batch of one epoch, data and target flattened to values.
struct Flat {
  std::vector<std::vector<double>> data, target;
  bool operator==(const Flat&) const = default;
};

Flat epoch(data::DataLoader& loader) {
  Flat f;
  for (data::Example& b : loader) {
    f.data.push_back(b.data.to_vector<double>());
    f.target.push_back(b.target.defined() ? b.target.to_vector<double>() : std::vector<double>{});
  }
  return f;
}

// data[i] = (i, 10 i), target[i] = i: (n, 2) and (n,)
data::TensorDataset numbered(int64_t n) {
  Tensor idx = arange(n, DType::f64);
  return data::TensorDataset(stack({idx, 10.0 * idx}, 1), idx);
}

// Counts get() calls; throws ValueError at `bad`.
struct CountingDataset : data::Dataset {
  CountingDataset(int64_t n, int64_t bad = -1) : n(n), bad(bad) {}
  int64_t size() const override { return n; }
  data::Example get(int64_t i) const override {
    ++calls;
    if (i == bad) throw ValueError("CountingDataset: bad example " + std::to_string(i));
    return {full({2}, static_cast<double>(i)), {}};
  }
  int64_t n, bad;
  mutable std::atomic<int64_t> calls{0};
};

}  // namespace

TEST_CASE("TensorDataset: examples are rows; shapes and indices checked") {
  auto ds = numbered(5);
  CHECK(ds.size() == 5);
  data::Example e = ds.get(3);
  CHECK(e.data.to_vector<double>() == std::vector<double>{3, 30});
  CHECK(e.target.item<double>() == 3);
  CHECK(contains(error_of<IndexError>([&] { ds.get(5); }), "index 5 is out of range for 5"));
  CHECK(contains(error_of<ShapeError>([] { data::TensorDataset(zeros({4, 2}), zeros({3})); }), "[4, 2]"));
  CHECK_FALSE(data::TensorDataset(zeros({4, 2})).get(0).target.defined());
}

TEST_CASE("RandomWindows: y is x shifted by one, starts in range, the generator decides") {
  Tensor tokens = arange(50, DType::i64);  // token at position p is p
  Generator g1(7), g2(7);
  data::RandomWindows a(tokens, 8, 200, g1), b(tokens, 8, 200, g2);
  CHECK(a.starts() == b.starts());
  std::set<int64_t> seen(a.starts().begin(), a.starts().end());
  CHECK(*seen.begin() >= 0);
  CHECK(*seen.rbegin() <= 50 - 8 - 1);  // the last window ends at the last token
  CHECK(seen.size() > 30);              // 200 draws over 42 offsets
  data::Example e = a.get(17);
  auto x = e.data.to_vector<int64_t>(), y = e.target.to_vector<int64_t>();
  REQUIRE(x.size() == 8);
  CHECK(x[0] == a.starts()[17]);
  for (std::size_t t = 0; t < 8; ++t) {
    CHECK(x[t] == a.starts()[17] + static_cast<int64_t>(t));
    CHECK(y[t] == x[t] + 1);
  }
  auto before = a.starts();
  a.resample(g1);
  CHECK(a.starts() != before);

  Generator g(0);
  data::RandomWindows exact(arange(9, DType::i64), 8, 3, g);  // one possible window
  CHECK(exact.starts() == std::vector<int64_t>{0, 0, 0});
  CHECK(contains(error_of<ShapeError>([&] { data::RandomWindows(arange(8, DType::i64), 8, 1, g); }),
                 "at least block_size + 1 = 9"));
  CHECK(contains(error_of<IndexError>([&] { exact.get(3); }), "out of range for 3 windows"));
}

TEST_CASE("DataLoader: batches in order, the short last batch, drop_last, len") {
  data::DataLoader loader(numbered(7), data::DataLoaderOptions(3));
  CHECK(loader.size() == 3);
  Flat f = epoch(loader);
  REQUIRE(f.data.size() == 3);
  CHECK(f.data[0] == std::vector<double>{0, 0, 1, 10, 2, 20});  // (3, 2)
  CHECK(f.target[2] == std::vector<double>{6});                 // (1,)

  data::DataLoader dl(numbered(7), data::DataLoaderOptions(3).drop_last(true));
  CHECK(dl.size() == 2);
  CHECK(epoch(dl).data.size() == 2);

  std::vector<int64_t> shape;
  for (auto& b : dl) shape = b.data.shape().vec();
  CHECK(shape == std::vector<int64_t>{3, 2});
  CHECK(dl.epoch() == 2);
}

TEST_CASE("DataLoader: shuffle is a fresh permutation per epoch, fixed by the seed") {
  auto opts = data::DataLoaderOptions(4).shuffle(true).seed(11);
  auto other = opts;
  other.seed(12);
  data::DataLoader a(numbered(10), opts), b(numbered(10), opts), c(numbered(10), other);
  Flat a1 = epoch(a), a2 = epoch(a), b1 = epoch(b), b2 = epoch(b), c1 = epoch(c);
  CHECK(a1 == b1);
  CHECK(a2 == b2);
  CHECK(a1 != a2);  // a new order each epoch, as a torch DataLoader with a generator
  CHECK(a1 != c1);
  std::multiset<double> ids;
  for (auto& t : a2.target) ids.insert(t.begin(), t.end());
  CHECK(ids == std::multiset<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});  // each example once
}

TEST_CASE("DataLoader: prefetching does not change the batches") {
  Tensor tokens = arange(300, DType::i64);
  Generator g(5);
  data::RandomWindows windows(tokens, 16, 64, g);
  std::vector<Flat> runs;
  for (int64_t prefetch : {0, 1, 4}) {
    data::DataLoader loader(windows, data::DataLoaderOptions(6).shuffle(true).seed(3).prefetch(prefetch));
    Flat e1 = epoch(loader);
    Flat e2 = epoch(loader);
    e1.data.insert(e1.data.end(), e2.data.begin(), e2.data.end());
    runs.push_back(e1);
  }
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);

  data::DataLoader loader(windows, data::DataLoaderOptions(6));
  for (auto& b : loader) {
    CHECK(b.data.shape() == Shape{6, 16});  // (B, T) ids
    CHECK(b.data.dtype() == DType::i64);
    CHECK((b.target - b.data).to_vector<int64_t>() == std::vector<int64_t>(6 * 16, 1));
    break;
  }
}

TEST_CASE("DataLoader: the prefetch queue is bounded; stopping mid-epoch joins the thread") {
  auto ds = std::make_shared<CountingDataset>(1000);
  {
    data::DataLoader loader(ds, data::DataLoaderOptions(2).prefetch(3));
    auto it = loader.begin();  // the first batch is taken
    // Wait for the producer to fill the queue, then check it stops there: one batch
    // taken + 3 queued + 1 built and waiting for room = at most 5 batches of 2.
    for (int i = 0; i < 200 && ds->calls < 8; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(ds->calls >= 8);
    CHECK(ds->calls <= 10);
    ++it;
    CHECK((*it).data.to_vector<double>() == std::vector<double>{2, 2, 3, 3});

    // A new epoch stops the old one; its iterator refuses to go on.
    auto it2 = loader.begin();
    CHECK(it2->data.to_vector<double>() == std::vector<double>{0, 0, 1, 1});
    CHECK(contains(error_of<ValueError>([&] { ++it; }), "belongs to epoch 1"));
  }  // destroyed mid-epoch with a full queue and a blocked producer: must not hang
  const int64_t calls = ds->calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ds->calls == calls);  // the producer is gone
}

TEST_CASE("DataLoader: an error building a batch is rethrown at that batch") {
  for (int64_t prefetch : {0, 2}) {
    CAPTURE(prefetch);
    data::DataLoader loader(std::make_shared<CountingDataset>(10, /*bad=*/5),
                            data::DataLoaderOptions(2).prefetch(prefetch));
    int batches = 0;
    std::string msg = error_of<ValueError>([&] {
      for (auto& b : loader) {
        (void)b;
        ++batches;
      }
    });
    CHECK(contains(msg, "bad example 5"));
    CHECK(batches == 2);                         // batches 0 and 1; batch 2 holds example 5
    CHECK_THROWS_AS(epoch(loader), ValueError);  // the next epoch starts afresh (and fails there again)
  }
  // Examples of different shapes cannot be stacked: stack's error names the shapes.
  struct Ragged : data::Dataset {
    int64_t size() const override { return 2; }
    data::Example get(int64_t i) const override { return {zeros({i + 1}), {}}; }
  };
  data::DataLoader ragged(Ragged{}, data::DataLoaderOptions(2));
  CHECK_THROWS_AS(epoch(ragged), ShapeError);
  CHECK(contains(error_of<ValueError>([] { data::DataLoader(Ragged{}, data::DataLoaderOptions(0)); }),
                 "batch_size must be positive"));
}

namespace {

// The permutation one process sees (num_replicas 1): the reference for the shards.
std::vector<int64_t> whole_epoch(int64_t n, uint64_t seed, int64_t epoch) {
  data::DistributedRandomSampler s(n, 1, 0, true, seed);
  s.set_epoch(epoch);
  return s.indices();
}

}  // namespace

TEST_CASE("DistributedRandomSampler: a permutation per epoch, the same for every rank count") {
  auto p0 = whole_epoch(10, 3, 0), p0b = whole_epoch(10, 3, 0), p1 = whole_epoch(10, 3, 1);
  CHECK(p0 == p0b);
  CHECK(p0 != p1);  // set_epoch reshuffles
  CHECK(p0 != whole_epoch(10, 4, 0));
  CHECK(std::multiset<int64_t>(p0.begin(), p0.end()) == std::multiset<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(p1 != std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});

  // 3 ranks over 10 examples: rank r takes positions r, r + 3, ... of the permutation
  // padded with its own first indices to 12 (PyTorch's DistributedSampler).
  for (int64_t epoch : {0, 1}) {
    auto perm = whole_epoch(10, 3, epoch);
    std::vector<int64_t> padded = perm;
    padded.push_back(perm[0]);
    padded.push_back(perm[1]);
    for (int64_t r = 0; r < 3; ++r) {
      data::DistributedRandomSampler s(10, 3, r, true, 3);
      s.set_epoch(epoch);
      CHECK(s.size() == 4);
      std::vector<int64_t> expect;
      for (int64_t j = r; j < 12; j += 3) expect.push_back(padded[static_cast<std::size_t>(j)]);
      CHECK(s.indices() == expect);
      // Without duplicates: floor(10 / 3) = 3 each, the last index of the permutation dropped.
      data::DistributedRandomSampler cut(10, 3, r, false, 3);
      cut.set_epoch(epoch);
      CHECK(cut.size() == 3);
      expect.resize(3);
      CHECK(cut.indices() == expect);
    }
  }
  CHECK(contains(error_of<ValueError>([] { data::DistributedRandomSampler(10, 2, 2); }), "rank 2"));
}

TEST_CASE("DistributedRandomSampler + DataLoader: the ranks' k-th batches make up the k-th global batch") {
  // 2 ranks x batch 4 against one process x batch 8, over 3 epochs of 16 examples.
  auto global = std::make_shared<data::DistributedRandomSampler>(16, 1, 0, true, 5);
  data::DataLoader whole(numbered(16), data::DataLoaderOptions(8).sampler(global));
  std::vector<std::shared_ptr<data::DistributedRandomSampler>> shards;
  std::vector<std::unique_ptr<data::DataLoader>> ranks;
  for (int64_t r = 0; r < 2; ++r) {
    shards.push_back(std::make_shared<data::DistributedRandomSampler>(16, 2, r, true, 5));
    ranks.push_back(
        std::make_unique<data::DataLoader>(numbered(16), data::DataLoaderOptions(4).sampler(shards.back())));
  }
  CHECK(whole.size() == 2);
  CHECK(ranks[0]->size() == 2);
  Flat previous;
  for (int64_t e = 0; e < 3; ++e) {
    global->set_epoch(e);
    for (auto& s : shards) s->set_epoch(e);
    Flat g = epoch(whole), r0 = epoch(*ranks[0]), r1 = epoch(*ranks[1]);
    REQUIRE(g.target.size() == 2);
    REQUIRE(r0.target.size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
      // rank r's batch: elements r, r + 2, ... of the global batch
      for (std::size_t j = 0; j < 4; ++j) {
        CHECK(r0.target[k][j] == g.target[k][2 * j]);
        CHECK(r1.target[k][j] == g.target[k][2 * j + 1]);
      }
    }
    CHECK(g != previous);
    previous = g;
  }
  CHECK(contains(error_of<ValueError>(
                     [&] { data::DataLoader(numbered(4), data::DataLoaderOptions(2).sampler(global).shuffle(true)); }),
                 "mutually exclusive"));
}

TEST_CASE("DataLoader: a dataset or sampler with a negative size() is a ValueError naming the size") {
  // Before: order_.resize(size_t(-3)) leaked std::length_error from begin().
  struct Negative : data::Dataset {
    int64_t size() const override { return -3; }
    data::Example get(int64_t) const override { return {zeros({1}), {}}; }
  };
  data::DataLoader loader(Negative{}, data::DataLoaderOptions(2));
  CHECK(contains(error_of<ValueError>([&] { (void)loader.begin(); }), "DataLoader: the dataset's size() is -3"));
  CHECK(contains(error_of<ValueError>([&] { (void)loader.size(); }), "size() is -3"));
  struct NegativeSampler : data::Sampler {
    int64_t size() const override { return -1; }
    std::vector<int64_t> indices() const override { return {}; }
  };
  data::DataLoader sampled(numbered(4), data::DataLoaderOptions(2).sampler(std::make_shared<NegativeSampler>()));
  CHECK(contains(error_of<ValueError>([&] { (void)sampled.begin(); }), "DataLoader: the sampler's size() is -1"));
  // One too large to hold in memory: a MemoryError, not std::length_error or bad_alloc.
  struct Huge : data::Dataset {
    int64_t size() const override { return int64_t{1} << 62; }
    data::Example get(int64_t) const override { return {zeros({1}), {}}; }
  };
  data::DataLoader huge(Huge{}, data::DataLoaderOptions(3));
  CHECK(huge.size() == ((int64_t{1} << 62) + 2) / 3);
  CHECK_THROWS_AS((void)huge.begin(), MemoryError);
  data::DataLoader max_size(std::make_shared<CountingDataset>(std::numeric_limits<int64_t>::max()),
                            data::DataLoaderOptions(2));
  CHECK(max_size.size() == std::numeric_limits<int64_t>::max() / 2 + 1);  // (n + b - 1) / b overflowed
  const data::DistributedRandomSampler sampler(std::numeric_limits<int64_t>::max(), 2);
  CHECK(sampler.size() == std::numeric_limits<int64_t>::max() / 2 + 1);  // the same ceil
  CHECK_THROWS_AS((void)sampler.indices(), MemoryError);
}
