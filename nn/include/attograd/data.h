#pragma once
/// \file
/// Data loading in the spirit of LibTorch's torch::data (ag::data):
///   data::TensorDataset ds(x, y);                           // x (N, ...), y (N, ...)
///   data::DataLoader loader(ds, data::DataLoaderOptions(32).shuffle(true).seed(0));
///   for (data::Example& batch : loader) { batch.data;  /* (32, ...) */ batch.target; }
/// and for a language model, random windows of a token stream (nanoGPT's get_batch):
///   ag::Generator gen(1337);
///   data::RandomWindows windows(tokens, /*block_size=*/T, /*num_windows=*/steps * B, gen);
///   data::DataLoader loader(windows, data::DataLoaderOptions(B));   // x, y (B, T) i64
///
/// and, data parallel over the ranks of ag::dist, each rank its shard of every epoch:
///   auto sampler = std::make_shared<data::DistributedRandomSampler>(ds.size(), dist::world_size(),
///                                                                  dist::rank());
///   data::DataLoader loader(ds, data::DataLoaderOptions(B).sampler(sampler));
///   for (int64_t epoch = 0; ...; ++epoch) { sampler->set_epoch(epoch); for (auto& b : loader) ... }
///
/// Determinism: the loader's order depends only on its seed and the epoch number (each
/// range-for over the loader is one epoch, as each `for batch in loader` in PyTorch), or
/// on its sampler. Batches are built in order by one producer, so the prefetch depth
/// never changes them.
#include <concepts>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "attograd/generator.h"
#include "attograd/nn/module.h"  // AG_ARG
#include "attograd/tensor.h"

namespace ag::data {

/// One sample, or (stacked along a new dim 0) one batch. target may be undefined.
struct Example {
  /// The input (any shape).
  Tensor data;
  /// The label(s); may be undefined.
  Tensor target;
};

/// Random access to `size()` examples. get is const and may be called from the
/// loader's background thread: it must not touch state that the caller changes
/// while a loader iterates over the dataset.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// Number of examples.
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;  ///< 0 <= index < size(); IndexError otherwise
};

/// Example i = {data[i], target[i]} (views of dim 0). target may be undefined; when
/// given, it has data's first dimension (ShapeError otherwise).
class TensorDataset : public Dataset {
 public:
  /// Example i is (data[i], target[i]); dims 0 must agree (ShapeError).
  explicit TensorDataset(Tensor data, Tensor target = {});
  /// data.size(0).
  int64_t size() const override;
  Example get(int64_t index) const override;

 private:
  Tensor data_, target_;
};

/// num_windows windows of block_size + 1 consecutive tokens, at start offsets drawn
/// uniformly from [0, n - block_size - 1] with `gen` when constructed (or resample()d).
/// Example i = {x = window[:-1], y = window[1:]}, both (block_size,) in tokens' dtype:
/// y[t] is the token that follows x[t].
class RandomWindows : public Dataset {
 public:
  /// tokens: 1-D, at least block_size + 1 long (ShapeError otherwise).
  RandomWindows(Tensor tokens, int64_t block_size, int64_t num_windows, Generator& gen);
  /// Number of windows.
  int64_t size() const override { return static_cast<int64_t>(starts_.size()); }
  Example get(int64_t index) const override;
  /// Draws new start offsets (e.g. a fresh set per epoch). Not while a loader iterates.
  void resample(Generator& gen);
  /// Each window's first token index.
  const std::vector<int64_t>& starts() const { return starts_; }
  /// Tokens per window (the target is the same window shifted by one).
  int64_t block_size() const { return block_size_; }

 private:
  Tensor tokens_;  ///< (n,)
  int64_t block_size_;
  std::vector<int64_t> starts_;
};

// ---- samplers ----
/// Which examples an epoch visits, in which order (LibTorch's torch::data::samplers). A
/// DataLoader given one batches its indices() instead of 0..size-1 or its own shuffle.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The indices of the epoch about to start (DataLoader::begin asks once per epoch).
  virtual std::vector<int64_t> indices() const = 0;
  virtual int64_t size() const = 0;  ///< indices().size()
};

/// LibTorch's DistributedRandomSampler(size, num_replicas, rank, allow_duplicates), with
/// PyTorch's DistributedSampler's seed and sharding. Epoch e's permutation of 0..size-1 is
/// drawn from Generator(seed + e), the same on every rank. With allow_duplicates it is
/// padded with its own first indices up to a multiple of num_replicas (every rank gets
/// ceil(size / num_replicas) examples), without it cut down to one (floor). Rank r takes
/// every num_replicas-th index from position r.
///
/// That strided shard (LibTorch cuts contiguous blocks instead) keeps global batches
/// whole: with batch_size B per rank, the ranks' k-th batches together are the k-th
/// block of num_replicas * B indices of the padded permutation, i.e. the k-th batch one
/// process sees with DistributedRandomSampler(size, 1, 0, _, seed) and batch_size
/// num_replicas * B (when size is a multiple of num_replicas, so nothing is padded).
/// Rank r's batch holds elements r, r + num_replicas, ... of that global batch.
///
/// The permutation changes only through set_epoch(e) (PyTorch's rule: call it before
/// each epoch, or every epoch repeats the first one's order).
class DistributedRandomSampler : public Sampler {
 public:
  /// size examples, split over num_replicas ranks; this is rank `rank`.
  DistributedRandomSampler(int64_t size, int64_t num_replicas = 1, int64_t rank = 0, bool allow_duplicates = true,
                           uint64_t seed = 0);
  std::vector<int64_t> indices() const override;  ///< this rank's shard of the epoch
  int64_t size() const override { return local_size_; }
  /// Picks the epoch's permutation: call before each epoch, alike on every rank.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  /// The current epoch.
  int64_t epoch() const { return epoch_; }

 private:
  int64_t size_, num_replicas_, rank_;
  bool allow_duplicates_;
  uint64_t seed_;
  int64_t local_size_;  ///< examples per rank and epoch
  int64_t epoch_ = 0;
};

/// Batch size, shuffling and seed of a DataLoader.
struct DataLoaderOptions {
  /// The required options; the others keep their PyTorch defaults.
  DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}
  /// Examples per batch; the last batch may be shorter unless drop_last.
  AG_ARG(int64_t, batch_size);
  AG_ARG(bool, shuffle) = false;    ///< a new permutation every epoch, drawn from seed
  AG_ARG(uint64_t, seed) = 0;       ///< the shuffling generator's seed
  AG_ARG(bool, drop_last) = false;  ///< drop the last batch if it is short
  AG_ARG(int64_t, prefetch) = 2;    ///< batches a background thread builds ahead; 0: none
  /// The epoch's indices come from it (shuffle must stay false, as in PyTorch); the
  /// loader keeps a reference, so set_epoch on the caller's handle is seen.
  AG_ARG(std::shared_ptr<Sampler>, sampler);
};

/// Iterates over a dataset in batches: data and target of the batch's examples stacked
/// along a new dim 0 (every example's data must have one shape, and likewise targets).
/// With prefetch > 0 one background thread builds the next batches into a queue of at
/// most `prefetch` batches; starting a new epoch or destroying the loader stops it and
/// joins it (no hang: the producer waits on the same condition variable that stop
/// signals). An exception thrown while building a batch is rethrown by the iterator at
/// that batch.
class DataLoader {
 public:
  /// Batches of `dataset` as the options say.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  /// Takes a copy of a concrete dataset.
  template <class D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset> DataLoader(D&& dataset, DataLoaderOptions options)
      : DataLoader(std::make_shared<const std::remove_cvref_t<D>>(std::forward<D>(dataset)), options) {}
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Batches per epoch: ceil(n / batch_size), or floor with drop_last (len(loader)); n is
  /// the dataset's size, or the sampler's.
  int64_t size() const;
  /// The options it was made with.
  const DataLoaderOptions& options() const { return options_; }
  /// Epochs started so far (begin() calls).
  int64_t epoch() const { return epoch_; }

  /// Input iterator over one epoch's batches (ends at std::default_sentinel).
  class Iterator {
   public:
    /// A batch.
    using value_type = Example;
    /// For std::input_iterator.
    using difference_type = std::ptrdiff_t;
    /// The current batch.
    Example& operator*() { return current_; }
    /// The current batch.
    Example* operator->() { return &current_; }
    /// Builds the next batch.
    Iterator& operator++();
    /// True at the end of the epoch.
    bool operator==(std::default_sentinel_t) const { return done_; }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader, int64_t epoch);
    DataLoader* loader_;
    int64_t epoch_;  ///< an iterator of an older epoch is stopped (ValueError on ++)
    Example current_;
    bool done_ = false;
  };
  /// Starts a new epoch (stopping an unfinished one): the order of epoch e is the e-th
  /// permutation drawn from Generator(seed), or 0..size-1 without shuffle, or the
  /// sampler's indices().
  Iterator begin();
  /// The end of an epoch.
  std::default_sentinel_t end() const { return {}; }

 private:
  Example build(int64_t batch) const;  ///< stacks the examples of batch `batch` of order_
  std::optional<Example> next();       ///< the next batch of this epoch, or none at its end
  void stop();                         ///< stops and joins the producer, drops the queue
  void produce();                      ///< the producer thread: builds batches 0..size-1 into queue_

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  Generator gen_;
  std::vector<int64_t> order_;  ///< this epoch's example order
  int64_t epoch_ = 0;
  int64_t next_batch_ = 0;  ///< consumer's position in this epoch

  /// Producer / consumer queue (prefetch > 0): guarded by mu_.
  std::thread producer_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Item {
    Example batch;
    std::exception_ptr error;
  };
  std::deque<Item> queue_;
  bool stop_ = false;
};

}  // namespace ag::data

// The IDX reader and the MNIST-style datasets (data::read_idx, data::FashionMNIST).
#include "attograd/data/idx.h"  // IWYU pragma: export
