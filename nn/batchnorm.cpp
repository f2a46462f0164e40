// BatchNorm1d / 2d, InstanceNorm1d / 2d and GroupNorm (attograd/nn/batchnorm.h), as
// torch.nn's: PyTorch's state-dict names, initial values, momentum rule and repr.
// SyncBatchNorm's cross-rank statistics: nn/sync_batchnorm.cpp.
//
// N batch, C channels, L length, H, W height and width.
#include "attograd/nn/batchnorm.h"

#include <ostream>
#include <utility>

#include "attograd/nn/init.h"

namespace ag::nn {
namespace {
namespace norm_modules {  // named: a unity build meets other nn sources' anonymous helpers

// The buffers of a module that tracks running statistics: running_mean (C) 0,
// running_var (C) 1, num_batches_tracked (i64 scalar) 0.
void register_running_stats(Module& m, int64_t c, Tensor& rm, Tensor& rv, Tensor& count) {
  rm = zeros({c});
  rv = ones({c});
  count = zeros({}, DType::i64);
  m.register_buffer("running_mean", &rm);
  m.register_buffer("running_var", &rv);
  m.register_buffer("num_batches_tracked", &count);
}

void reset_running(Tensor& rm, Tensor& rv, Tensor& count) {
  NoGradGuard no_grad;
  if (rm.defined()) rm.zero_();
  if (rv.defined()) rv.fill_(1.0);
  if (count.defined()) count.zero_();
}

const char* flag(bool on) { return on ? "true" : "false"; }

}  // namespace norm_modules
}  // namespace

// ---- BatchNorm ----
BatchNormImplBase::BatchNormImplBase(std::string type_name, const BatchNormOptions& o)
    : Module(std::move(type_name)), options(o) {
  AG_CHECK(o.num_features() > 0, ValueError, this->type_name(), ": num_features must be positive, got ",
           o.num_features());
  AG_CHECK(o.eps() >= 0, ValueError, this->type_name(), ": eps must be >= 0, got ", o.eps());
  if (o.affine()) {
    weight = empty({o.num_features()});
    bias = empty({o.num_features()});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
  if (o.track_running_stats())
    norm_modules::register_running_stats(*this, o.num_features(), running_mean, running_var, num_batches_tracked);
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  norm_modules::reset_running(running_mean, running_var, num_batches_tracked);
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

// PyTorch's _BatchNorm.forward: the factor is momentum, or 1 / num_batches_tracked
// (counting this call) for the cumulative average; batch statistics in training and
// whenever there are no running ones.
Tensor BatchNormImplBase::forward(const Tensor& x) {
  if (replaced_by_) return replaced_by_->forward(x);
  check_rank(x);
  AG_CHECK(x.size(1) == options.num_features(), ShapeError, type_name(), ": expected ", options.num_features(),
           " channels (dim 1 of (N, C, *)), got input shape ", x.shape());
  const bool count = is_training() && num_batches_tracked.defined();
  double factor = options.momentum().value_or(0.0);
  if (count && !options.momentum()) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>() + 1);
  const bool use_batch_stats = is_training() || !running_mean.defined();
  Tensor y = normalize(x, running_mean, running_var, use_batch_stats, factor);
  if (count) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  return y;
}

Tensor BatchNormImplBase::normalize(const Tensor& x, const Tensor& rm, const Tensor& rv, bool use_batch_stats,
                                    double factor) {
  return batch_norm(x, rm, rv, weight, bias, use_batch_stats, factor, options.eps());
}

void BatchNormImplBase::pretty_print(std::ostream& os) const {
  os << type_name() << '(' << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum())
    os << *options.momentum();
  else
    os << "None";
  os << ", affine=" << norm_modules::flag(options.affine())
     << ", track_running_stats=" << norm_modules::flag(options.track_running_stats()) << ')';
}

void BatchNorm1dImpl::check_rank(const Tensor& x) const {
  AG_CHECK(x.dim() == 2 || x.dim() == 3, ShapeError, type_name(),
           ": expected a 2-D (N, C) or 3-D (N, C, L) input, got ", x.dim(), "-D input of shape ", x.shape());
}

void BatchNorm2dImpl::check_rank(const Tensor& x) const {
  AG_CHECK(x.dim() == 4, ShapeError, type_name(), ": expected a 4-D (N, C, H, W) input, got ", x.dim(),
           "-D input of shape ", x.shape());
}

// ---- InstanceNorm ----
InstanceNormImplBase::InstanceNormImplBase(std::string type_name, const InstanceNormOptions& o)
    : Module(std::move(type_name)), options(o) {
  AG_CHECK(o.num_features() > 0, ValueError, this->type_name(), ": num_features must be positive, got ",
           o.num_features());
  if (o.affine()) {
    weight = empty({o.num_features()});
    bias = empty({o.num_features()});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
  if (o.track_running_stats())
    norm_modules::register_running_stats(*this, o.num_features(), running_mean, running_var, num_batches_tracked);
  reset_parameters();
}

void InstanceNormImplBase::reset_running_stats() {
  norm_modules::reset_running(running_mean, running_var, num_batches_tracked);
}

void InstanceNormImplBase::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

// PyTorch's _InstanceNorm.forward: an unbatched (C, *) input gets a batch dim of one;
// the input's statistics unless in eval with running statistics.
Tensor InstanceNormImplBase::forward(const Tensor& x) {
  const int64_t rank = batched_rank();
  AG_CHECK(x.dim() == rank || x.dim() == rank - 1, ShapeError, type_name(), ": expected a ", rank - 1, "-D (C, *) or ",
           rank, "-D (N, C, *) input, got ", x.dim(), "-D input of shape ", x.shape());
  const bool unbatched = x.dim() == rank - 1;
  const Tensor xb = unbatched ? unsqueeze(x, 0) : x;
  // Without affine PyTorch only warns about a channel count other than num_features; the
  // running statistics (C) still refuse one.
  AG_CHECK(!options.affine() || xb.size(1) == options.num_features(), ShapeError, type_name(), ": expected ",
           options.num_features(), " channels (dim ", unbatched ? 0 : 1, "), got input shape ", x.shape());
  const bool use_input_stats = is_training() || !options.track_running_stats();
  Tensor y =
      instance_norm(xb, running_mean, running_var, weight, bias, use_input_stats, options.momentum(), options.eps());
  return unbatched ? squeeze(y, 0) : y;
}

void InstanceNormImplBase::pretty_print(std::ostream& os) const {
  os << type_name() << '(' << options.num_features() << ", eps=" << options.eps() << ", momentum=" << options.momentum()
     << ", affine=" << norm_modules::flag(options.affine())
     << ", track_running_stats=" << norm_modules::flag(options.track_running_stats()) << ')';
}

// ---- GroupNorm ----
GroupNormImpl::GroupNormImpl(const GroupNormOptions& o) : Module("GroupNorm"), options(o) {
  AG_CHECK(o.num_groups() > 0 && o.num_channels() > 0, ValueError,
           "GroupNorm: num_groups and num_channels must be positive, got (", o.num_groups(), ", ", o.num_channels(),
           ")");
  AG_CHECK(o.num_channels() % o.num_groups() == 0, ValueError, "GroupNorm: num_channels (", o.num_channels(),
           ") must be divisible by num_groups (", o.num_groups(), ")");
  if (o.affine()) {
    weight = empty({o.num_channels()});
    bias = empty({o.num_channels()});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& x) {
  AG_CHECK(x.dim() >= 2 && x.size(1) == options.num_channels(), ShapeError, "GroupNorm: expected an (N, ",
           options.num_channels(), ", *) input, got shape ", x.shape());
  return group_norm(x, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& os) const {
  os << "GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
     << ", affine=" << norm_modules::flag(options.affine()) << ')';
}

}  // namespace ag::nn
