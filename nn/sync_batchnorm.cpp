// SyncBatchNorm's statistics over the ranks of the job, and convert_sync_batchnorm
// (attograd/nn/batchnorm.h).
//
// N_r rank r's batch, C channels, W world size, n_r = N_r * prod(*) values per channel
// on rank r, n = sum_r n_r.
#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attograd/autocast.h"
#include "attograd/dist.h"
#include "attograd/nn/batchnorm.h"
#include "attograd/ops/distributed.h"

namespace ag::nn {

void SyncBatchNormImpl::check_rank(const Tensor& x) const {
  AG_CHECK(x.dim() >= 2, ShapeError, type_name(), ": expected an input of at least 2 dims (N, C, *), got ", x.dim(),
           "-D input of shape ", x.shape());
}

// Each rank's per-channel (n_r, mean_r, M2_r), M2_r = sum (x - mean_r)^2, gathered from
// every rank with the differentiable all_gather and combined as Chan et al.:
//   mean = sum_r n_r mean_r / n,  M2 = sum_r (M2_r + n_r (mean_r - mean)^2),
// the biased variance M2 / n normalizing and the unbiased M2 / (n - 1) going into the
// running variance, as one process holding all ranks' batches computes them. Written
// with differentiable ops, so the gradient (and its gradient) reaches every rank's x
// through all_gather's backward (a reduce-scatter of the gathered statistics' gradient).
Tensor SyncBatchNormImpl::normalize(const Tensor& x_in, const Tensor& rm, const Tensor& rv, bool use_batch_stats,
                                    double factor) {
  // Eval (the module's mode, as PyTorch's need_sync) or one process: BatchNorm.
  if (!is_training() || dist::world_size() == 1)
    return BatchNormImplBase::normalize(x_in, rm, rv, use_batch_stats, factor);
  const Tensor x = ::ag::detail::autocast_f32(x_in);
  const DType out_dtype = x.dtype();
  const Tensor xs = is_reduced_float(x.dtype()) ? x.to(DType::f32) : x;  // 16-bit: f32 statistics, y rounded once
  const int64_t c = xs.size(1);
  std::vector<int64_t> dims{0};
  Shape cs = Shape::filled(xs.dim(), 1);  // (1, C, 1, ...)
  cs[1] = c;
  for (int64_t d = 2; d < xs.dim(); ++d) dims.push_back(d);
  const int64_t n_local = c ? xs.numel() / c : 0;
  // (C) each; an empty local batch gives 0, 0 (and keeps x in the graph, so that every
  // rank runs the same collectives in backward).
  Tensor mean_r = sum(xs, dims) / static_cast<double>(std::max<int64_t>(n_local, 1));
  Tensor m2_r = sum(square(xs - reshape(mean_r, cs)), dims);
  Tensor n_r = full({c}, static_cast<double>(n_local), xs.dtype());
  Tensor all = dist::functional::all_gather(unsqueeze(stack({n_r, mean_r, m2_r}, 0), 0), 0);  // (W, 3, C)
  Tensor n = select(all, 1, 0).detach(), means = select(all, 1, 1), m2s = select(all, 1, 2);  // (W, C)
  Tensor total = sum(n, {0});                                                                 // (C)
  const double count = c ? select(total, 0, 0).item<double>() : 0.0;
  AG_CHECK(count > 1, ValueError, type_name(),
           ": Expected more than 1 value per channel when training, got input size ", x_in.shape(), " on rank ",
           dist::rank(), " (", count, " values per channel over ", dist::world_size(), " ranks)");
  Tensor mean = sum(n * means, {0}) / total;                           // (C)
  Tensor m2 = sum(m2s + n * square(means - unsqueeze(mean, 0)), {0});  // (C)
  Tensor y = (xs - reshape(mean, cs)) * reshape(rsqrt(m2 / total + options.eps()), cs);
  if (weight.defined()) y = y * reshape(weight, cs);
  if (bias.defined()) y = y + reshape(bias, cs);
  {
    // running = (1 - factor) running + factor stat, in double, in place outside the graph
    NoGradGuard no_grad;
    auto update = [factor](const Tensor& running, const Tensor& stat) {
      if (!running.defined()) return;
      Tensor r = running;
      r.copy_(
          reshape(stat.detach().to(DType::f64) * factor + running.to(DType::f64) * (1.0 - factor), running.shape()));
    };
    update(rm, mean);
    update(rv, m2 / (total - 1.0));
  }
  return y.dtype() == out_dtype ? y : y.to(out_dtype);
}

// PyTorch's SyncBatchNorm.convert_sync_batchnorm, children first replaced in their
// parents' registries; a module reachable twice becomes one SyncBatchNorm.
std::shared_ptr<Module> convert_sync_batchnorm(std::shared_ptr<Module> module) {
  AG_CHECK(module != nullptr, ValueError, "convert_sync_batchnorm: the module is empty (nullptr)");
  std::shared_ptr<Module> out = module;
  auto* bn = dynamic_cast<BatchNormImplBase*>(module.get());
  if (bn && !dynamic_cast<SyncBatchNormImpl*>(bn)) {
    if (!bn->replaced_by_) {
      auto sync = std::make_shared<SyncBatchNormImpl>(bn->options);
      // The same handles (registered by address, so the registry sees them).
      sync->weight = bn->weight;
      sync->bias = bn->bias;
      sync->running_mean = bn->running_mean;
      sync->running_var = bn->running_var;
      sync->num_batches_tracked = bn->num_batches_tracked;
      sync->train(bn->is_training());
      bn->replaced_by_ = sync;
    }
    out = bn->replaced_by_;
  }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>> children = module->named_children();
  for (const auto& [name, child] : children) {
    std::shared_ptr<Module> converted = convert_sync_batchnorm(child);
    if (converted != child) out->replace_module(name, converted);
  }
  return out;
}

}  // namespace ag::nn
