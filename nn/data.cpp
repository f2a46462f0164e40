#include "attograd/data.h"

#include <numeric>
#include <system_error>

#include "attograd/autograd.h"
#include "attograd/ops.h"

namespace ag::data {

namespace {
// A user's Dataset or Sampler may report any size: a negative one is a ValueError naming
// it (std::vector's length_error otherwise), and one too large to index in memory a
// MemoryError.
int64_t checked_size(int64_t n, const char* what) {
  AG_CHECK(n >= 0, ValueError, "DataLoader: the ", what, "'s size() is ", n, "; it must be >= 0");
  return n;
}
std::vector<int64_t> iota_order(int64_t n, const char* who) {
  std::vector<int64_t> order;
  try {
    order.resize(static_cast<std::size_t>(n));
  } catch (const std::exception&) {  // length_error, bad_alloc
    throw MemoryError(detail::cat(who, ": cannot hold the order of ", n, " examples in memory"));
  }
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}
}  // namespace

// ---- TensorDataset ----
TensorDataset::TensorDataset(Tensor data, Tensor target) : data_(std::move(data)), target_(std::move(target)) {
  AG_CHECK(data_.defined() && data_.dim() >= 1, ShapeError,
           "TensorDataset: data must have a first (example) dimension, got shape ",
           data_.defined() ? data_.shape() : Shape{});
  if (target_.defined())
    AG_CHECK(target_.dim() >= 1 && target_.size(0) == data_.size(0), ShapeError, "TensorDataset: data ", data_.shape(),
             " and target ", target_.shape(), " must have the same first dimension");
}

int64_t TensorDataset::size() const { return data_.size(0); }

Example TensorDataset::get(int64_t index) const {
  AG_CHECK(index >= 0 && index < size(), IndexError, "TensorDataset.get: index ", index, " is out of range for ",
           size(), " examples");
  return {data_.select(0, index), target_.defined() ? target_.select(0, index) : Tensor{}};
}

// ---- RandomWindows ----
RandomWindows::RandomWindows(Tensor tokens, int64_t block_size, int64_t num_windows, Generator& gen)
    : tokens_(std::move(tokens)), block_size_(block_size) {
  AG_CHECK(block_size > 0 && num_windows >= 0, ValueError, "RandomWindows: block_size ", block_size,
           " must be positive and num_windows ", num_windows, " non-negative");
  AG_CHECK(tokens_.defined() && tokens_.dim() == 1 && tokens_.size(0) >= block_size + 1, ShapeError,
           "RandomWindows: tokens must be 1-D with at least block_size + 1 = ", block_size + 1, " tokens, got shape ",
           tokens_.defined() ? tokens_.shape() : Shape{});
  try {
    starts_.resize(static_cast<std::size_t>(num_windows));
  } catch (const std::exception&) {  // length_error, bad_alloc
    throw MemoryError(detail::cat("RandomWindows: cannot hold ", num_windows, " window starts in memory"));
  }
  resample(gen);
}

void RandomWindows::resample(Generator& gen) {
  // A window [s, s + block_size] must fit: s in [0, n - block_size - 1].
  const int64_t hi = tokens_.size(0) - block_size_;
  for (auto& s : starts_) s = gen.integer(0, hi);
}

Example RandomWindows::get(int64_t index) const {
  AG_CHECK(index >= 0 && index < size(), IndexError, "RandomWindows.get: index ", index, " is out of range for ",
           size(), " windows");
  Tensor window = tokens_.narrow(0, starts_[static_cast<std::size_t>(index)], block_size_ + 1);  // (T + 1,)
  return {window.narrow(0, 0, block_size_), window.narrow(0, 1, block_size_)};                   // (T,), (T,)
}

// ---- DistributedRandomSampler ----
DistributedRandomSampler::DistributedRandomSampler(int64_t size, int64_t num_replicas, int64_t rank,
                                                   bool allow_duplicates, uint64_t seed)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates), seed_(seed) {
  AG_CHECK(size >= 0, ValueError, "DistributedRandomSampler: size must be >= 0, got ", size);
  AG_CHECK(num_replicas > 0 && rank >= 0 && rank < num_replicas, ValueError, "DistributedRandomSampler: rank ", rank,
           " is not in [0, num_replicas = ", num_replicas, ")");
  // ceil without size + num_replicas - 1, which overflowed near INT64_MAX
  local_size_ = size / num_replicas + (allow_duplicates && size % num_replicas != 0 ? 1 : 0);
}

std::vector<int64_t> DistributedRandomSampler::indices() const {
  std::vector<int64_t> perm = iota_order(size_, "DistributedRandomSampler");
  Generator gen(seed_ + static_cast<uint64_t>(epoch_));
  for (int64_t i = size_ - 1; i > 0; --i)  // Fisher-Yates, as the loader's shuffle
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(gen.integer(0, i + 1))]);
  const int64_t total = local_size_ * num_replicas_;  // padded (duplicates) or cut
  std::vector<int64_t> shard;
  shard.reserve(static_cast<std::size_t>(local_size_));
  for (int64_t j = rank_; j < total; j += num_replicas_) shard.push_back(perm[static_cast<std::size_t>(j % size_)]);
  return shard;
}

// ---- DataLoader ----
DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options), gen_(options.seed()) {
  AG_CHECK(dataset_ != nullptr, ValueError, "DataLoader: the dataset is null");
  AG_CHECK(!(options_.sampler() && options_.shuffle()), ValueError,
           "DataLoader: sampler option is mutually exclusive with shuffle");
  AG_CHECK(options_.batch_size() > 0, ValueError, "DataLoader: batch_size must be positive, got ",
           options_.batch_size());
  AG_CHECK(options_.prefetch() >= 0, ValueError, "DataLoader: prefetch must be >= 0, got ", options_.prefetch());
}

DataLoader::~DataLoader() { stop(); }

int64_t DataLoader::size() const {
  const int64_t n = options_.sampler() ? checked_size(options_.sampler()->size(), "sampler")
                                       : checked_size(dataset_->size(), "dataset"),
                b = options_.batch_size();
  return options_.drop_last() || n % b == 0 ? n / b : n / b + 1;  // (n + b - 1) / b overflowed near INT64_MAX
}

Example DataLoader::build(int64_t batch) const {
  const int64_t b = options_.batch_size();
  const int64_t first = batch * b, last = std::min<int64_t>(first + b, static_cast<int64_t>(order_.size()));
  std::vector<Tensor> xs, ys;
  bool has_target = false;
  for (int64_t i = first; i < last; ++i) {
    const int64_t index = order_[static_cast<std::size_t>(i)];
    Example e = dataset_->get(index);
    if (i == first) has_target = e.target.defined();
    AG_CHECK(e.target.defined() == has_target, ValueError, "DataLoader: example ", index,
             (has_target ? " has no target but" : " has a target but not"), " the first example of its batch");
    xs.push_back(std::move(e.data));
    if (has_target) ys.push_back(std::move(e.target));
  }
  // (B, ...) each; stack names the shapes when examples differ.
  return {stack(xs, 0), ys.empty() ? Tensor{} : stack(ys, 0)};
}

void DataLoader::produce() {
  NoGradGuard no_grad;  // grad mode is per thread; batches never need a graph
  const int64_t n = size();
  for (int64_t b = 0; b < n; ++b) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_) return;
    }
    Item item;
    try {
      item.batch = build(b);
    } catch (...) { item.error = std::current_exception(); }
    const bool failed = item.error != nullptr;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return stop_ || static_cast<int64_t>(queue_.size()) < options_.prefetch(); });
    if (stop_) return;
    queue_.push_back(std::move(item));
    cv_.notify_all();
    if (failed) return;  // the consumer rethrows at this batch; later ones are not needed
  }
}

void DataLoader::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (producer_.joinable()) producer_.join();
  queue_.clear();
  stop_ = false;
}

std::optional<Example> DataLoader::next() {
  if (next_batch_ >= size()) return std::nullopt;
  ++next_batch_;
  if (options_.prefetch() == 0) return build(next_batch_ - 1);
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return !queue_.empty(); });
  Item item = std::move(queue_.front());
  queue_.pop_front();
  lk.unlock();
  cv_.notify_all();
  if (item.error) {
    next_batch_ = size();  // the producer has stopped: end the epoch after rethrowing
    std::rethrow_exception(item.error);
  }
  return std::move(item.batch);
}

DataLoader::Iterator DataLoader::begin() {
  stop();
  ++epoch_;
  if (options_.sampler()) {
    order_ = options_.sampler()->indices();
    AG_CHECK(static_cast<int64_t>(order_.size()) == checked_size(options_.sampler()->size(), "sampler"), ValueError,
             "DataLoader: the sampler gave ", order_.size(), " indices but its size() is ", options_.sampler()->size());
  } else {
    order_ = iota_order(checked_size(dataset_->size(), "dataset"), "DataLoader");
  }
  if (options_.shuffle())  // Fisher-Yates
    for (int64_t i = static_cast<int64_t>(order_.size()) - 1; i > 0; --i)
      std::swap(order_[static_cast<std::size_t>(i)], order_[static_cast<std::size_t>(gen_.integer(0, i + 1))]);
  next_batch_ = 0;
  if (options_.prefetch() > 0 && size() > 0) {
    try {
      producer_ = std::thread(&DataLoader::produce, this);
    } catch (const std::system_error& e) {  // EAGAIN: the process's thread limit
      throw MemoryError(detail::cat("DataLoader: cannot start the prefetch thread (", e.what(),
                                    "); prefetch(0) loads on the calling thread"));
    }
  }
  return Iterator(this, epoch_);
}

DataLoader::Iterator::Iterator(DataLoader* loader, int64_t epoch) : loader_(loader), epoch_(epoch) { ++*this; }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  AG_CHECK(loader_->epoch_ == epoch_, ValueError, "DataLoader: this iterator belongs to epoch ", epoch_,
           ", but the loader has started epoch ", loader_->epoch_, " since");
  std::optional<Example> b = loader_->next();
  done_ = !b.has_value();
  current_ = b ? std::move(*b) : Example{};
  return *this;
}

}  // namespace ag::data
