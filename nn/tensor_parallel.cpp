// Tensor parallelism: sharded parameters and their full state dicts, the per-rank
// generator, ColumnParallelLinear and RowParallelLinear. Legend: p world size, r rank.
#include "attograd/nn/tensor_parallel.h"

#include <functional>

#include "attograd/dist.h"
#include "attograd/ops/distributed.h"
#include "tensor_parallel_util.h"

namespace ag::nn {

// ---- slicing and gathering ------------------------------------------------------------
namespace detail {

void check_divides(const char* op, const char* what, int64_t value, const Shape& full_shape) {
  const int64_t p = dist::world_size();
  AG_CHECK(value > 0 && value % p == 0, ShapeError, op, ": ", what, " ", value, " (of the full ", full_shape,
           ") must divide by the world size ", p);
}

Tensor take_shard(const Tensor& full, ShardSpec s) {
  const int64_t p = dist::world_size(), r = dist::rank();
  const int64_t block = full.size(s.dim) / s.parts, n = block / p;
  std::vector<Tensor> pieces;
  for (int64_t b = 0; b < s.parts; ++b) pieces.push_back(full.detach().narrow(s.dim, b * block + r * n, n));
  return cat(pieces, s.dim).clone();  // never a view of `full`
}

LayerNorm replica(const LayerNormImpl& full) {
  LayerNorm n(full.options);
  if (full.weight.defined()) n->to(full.weight.dtype());
  n->load_state_dict(full.state_dict());
  return n;
}

}  // namespace detail

namespace {

// The full tensor from every rank's slice (an all-gather per block).
Tensor gather_shards(const Tensor& local, ShardSpec s) {
  NoGradGuard no_grad;
  std::vector<Tensor> blocks;
  for (const Tensor& b : chunk(local.detach(), s.parts, s.dim))
    blocks.push_back(dist::functional::all_gather(b.contiguous(), s.dim));
  return cat(blocks, s.dim);
}

using Visit = std::function<void(const std::string& key, const Tensor& t, std::optional<ShardSpec> spec)>;

// Every parameter (then, with buffers, every buffer) under its state-dict key, in
// Module::state_dict's order, with its ShardSpec when a tensor-parallel module owns it.
void walk(const Module& m, const std::string& prefix, bool buffers, const Visit& visit) {
  const auto* tp = dynamic_cast<const TensorParallelModule*>(&m);
  if (!buffers) {
    for (auto& [n, t] : m.named_parameters(false, false)) visit(prefix + n, t, tp ? tp->shard_spec(n) : std::nullopt);
  } else {
    for (auto& [n, t] : m.named_buffers(false, false)) visit(prefix + n, t, std::nullopt);
  }
  for (auto& [n, c] : m.named_children()) walk(*c, prefix + n + ".", buffers, visit);
}

void walk_all(const Module& m, const Visit& visit) {
  walk(m, "", false, visit);
  walk(m, "", true, visit);
}

}  // namespace

// ---- TensorParallelModule -------------------------------------------------------------
std::optional<ShardSpec> TensorParallelModule::shard_spec(const std::string& name) const {
  for (auto& [n, s] : shards_)
    if (n == name) return s;
  return std::nullopt;
}

Tensor& TensorParallelModule::register_sharded_parameter(const std::string& name, Tensor* member, ShardSpec spec) {
  Tensor& t = register_parameter(name, member);
  AG_CHECK(spec.dim >= 0 && spec.dim < t.dim() && spec.parts > 0 && t.size(spec.dim) % spec.parts == 0, ValueError,
           type_name(), ": parameter '", name, "' of shape ", t.shape(), " cannot be sharded along dim ", spec.dim,
           " in ", spec.parts, " parts");
  shards_.emplace_back(name, spec);
  return t;
}

TensorMap TensorParallelModule::full_state_dict() const { return nn::full_state_dict(*this); }

void TensorParallelModule::load_full_state_dict(const TensorMap& state, bool strict) {
  nn::load_full_state_dict(*this, state, strict);
}

TensorMap full_state_dict(const Module& module) {
  TensorMap out;
  walk_all(module, [&](const std::string& key, const Tensor& t, std::optional<ShardSpec> spec) {
    out.insert(key, spec ? gather_shards(t, *spec) : t.detach());
  });
  return out;
}

void load_full_state_dict(Module& module, const TensorMap& state, bool strict) {
  const int64_t p = dist::world_size();
  TensorMap local;  // this rank's slices, under the same keys
  walk_all(module, [&](const std::string& key, const Tensor& t, std::optional<ShardSpec> spec) {
    if (!state.contains(key)) return;  // load_state_dict lists it as missing
    const Tensor& full = state.at(key);
    if (spec) {
      Shape want = t.shape();
      want[spec->dim] *= p;
      AG_CHECK(full.shape() == want, ShapeError, "load_full_state_dict: '", key, "': checkpoint shape ", full.shape(),
               ", expected the full shape ", want, " (", t.shape(), " on each of ", p, " ranks)");
    }
    local.insert(key, spec ? detail::take_shard(full, *spec) : full);
  });
  for (auto& [key, t] : state)
    if (!local.contains(key)) local.insert(key, t);  // unexpected: load_state_dict decides
  module.load_state_dict(local, strict);
}

TensorMap full_grads(const Module& module) {
  TensorMap out;
  walk(module, "", false, [&](const std::string& key, const Tensor& t, std::optional<ShardSpec> spec) {
    const Tensor g = t.grad();
    if (!spec) {
      if (g.defined()) out.insert(key, g.detach());
      return;
    }
    Tensor has = Tensor::from_vector(std::vector<int64_t>{g.defined() ? 1 : 0});
    dist::all_reduce(has);
    const int64_t n = has.item<int64_t>();
    AG_CHECK(n == 0 || n == dist::world_size(), DistError, "full_grads: '", key, "' has a gradient on ", n, " of ",
             dist::world_size(), " ranks");
    if (n > 0) out.insert(key, gather_shards(g, *spec));
  });
  return out;
}

// ---- the per-rank generator -------------------------------------------------------------
namespace {
struct ParallelGenerator {
  Generator gen;
  bool seeded = false;
};
ParallelGenerator& parallel_generator() {
  static ParallelGenerator g;
  return g;
}
void seed_parallel(uint64_t seed) {
  constexpr uint64_t kOffset = 2718;  // Megatron-LM's
  ParallelGenerator& g = parallel_generator();
  g.gen.manual_seed(seed + kOffset + static_cast<uint64_t>(dist::rank()));
  g.seeded = true;
}
}  // namespace

Generator& tensor_parallel_generator() {
  if (!parallel_generator().seeded) seed_parallel(5489);
  return parallel_generator().gen;
}

void tensor_parallel_manual_seed(uint64_t seed) {
  manual_seed(seed);
  seed_parallel(seed);
}

// ---- ColumnParallelLinear ---------------------------------------------------------------
ColumnParallelLinearImpl::ColumnParallelLinearImpl(const ColumnParallelLinearOptions& o)
    : TensorParallelModule("ColumnParallelLinear"), options(o) {
  detail::check_divides("ColumnParallelLinear", "out_features", o.out_features(),
                        Shape{o.out_features(), o.in_features()});
  build(*Linear(LinearOptions(o.in_features(), o.out_features()).bias(o.bias())));
}

ColumnParallelLinearImpl::ColumnParallelLinearImpl(const LinearImpl& full, bool gather_output)
    : TensorParallelModule("ColumnParallelLinear"),
      options(ColumnParallelLinearOptions(full.options.in_features(), full.options.out_features())
                  .bias(full.options.bias())
                  .gather_output(gather_output)) {
  build(full);
}

void ColumnParallelLinearImpl::build(const LinearImpl& full) {
  detail::check_divides("ColumnParallelLinear", "out_features", options.out_features(), full.weight.shape());
  weight = detail::take_shard(full.weight, {0, 1});  // (out / p, in)
  register_sharded_parameter("weight", &weight, {0, 1});
  if (full.bias.defined()) {
    bias = detail::take_shard(full.bias, {0, 1});
    register_sharded_parameter("bias", &bias, {0, 1});
  }
}

void ColumnParallelLinearImpl::reset_parameters() {
  load_full_state_dict(
      Linear(LinearOptions(options.in_features(), options.out_features()).bias(options.bias()))->state_dict());
}

Tensor ColumnParallelLinearImpl::forward(const Tensor& x) { return forward_parallel(dist::copy_to_parallel_region(x)); }

Tensor ColumnParallelLinearImpl::forward_parallel(const Tensor& x) {
  AG_CHECK(x.dim() >= 1 && x.size(-1) == options.in_features(), ShapeError, "ColumnParallelLinear: input ", x.shape(),
           " must end in in_features ", options.in_features());
  Tensor y = linear(x, weight, bias);  // (..., out / p)
  return options.gather_output() ? dist::gather_from_parallel_region(y) : y;
}

void ColumnParallelLinearImpl::pretty_print(std::ostream& os) const {
  os << "ColumnParallelLinear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false")
     << ", gather_output=" << (options.gather_output() ? "true" : "false") << ", world_size=" << dist::world_size()
     << ')';
}

// ---- RowParallelLinear ------------------------------------------------------------------
RowParallelLinearImpl::RowParallelLinearImpl(const RowParallelLinearOptions& o)
    : TensorParallelModule("RowParallelLinear"), options(o) {
  detail::check_divides("RowParallelLinear", "in_features", o.in_features(), Shape{o.out_features(), o.in_features()});
  build(*Linear(LinearOptions(o.in_features(), o.out_features()).bias(o.bias())));
}

RowParallelLinearImpl::RowParallelLinearImpl(const LinearImpl& full, bool input_is_parallel)
    : TensorParallelModule("RowParallelLinear"),
      options(RowParallelLinearOptions(full.options.in_features(), full.options.out_features())
                  .bias(full.options.bias())
                  .input_is_parallel(input_is_parallel)) {
  build(full);
}

void RowParallelLinearImpl::build(const LinearImpl& full) {
  detail::check_divides("RowParallelLinear", "in_features", options.in_features(), full.weight.shape());
  weight = detail::take_shard(full.weight, {1, 1});  // (out, in / p)
  register_sharded_parameter("weight", &weight, {1, 1});
  if (full.bias.defined()) {
    bias = full.bias.detach().clone();
    register_parameter("bias", &bias);
  }
}

void RowParallelLinearImpl::reset_parameters() {
  load_full_state_dict(
      Linear(LinearOptions(options.in_features(), options.out_features()).bias(options.bias()))->state_dict());
}

Tensor RowParallelLinearImpl::forward(const Tensor& x) {
  Tensor xr = options.input_is_parallel() ? x : dist::scatter_to_parallel_region(x);  // (..., in / p)
  AG_CHECK(xr.dim() >= 1 && xr.size(-1) == weight.size(1), ShapeError, "RowParallelLinear: input ", x.shape(),
           " must end in in_features / world size = ", options.in_features(), " / ", dist::world_size(), " = ",
           weight.size(1), options.input_is_parallel() ? " (input_is_parallel)" : "");
  Tensor y = dist::reduce_from_parallel_region(linear(xr, weight));  // (..., out), summed over ranks
  return bias.defined() ? y + bias : y;
}

void RowParallelLinearImpl::pretty_print(std::ostream& os) const {
  os << "RowParallelLinear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false")
     << ", input_is_parallel=" << (options.input_is_parallel() ? "true" : "false")
     << ", world_size=" << dist::world_size() << ')';
}

}  // namespace ag::nn
