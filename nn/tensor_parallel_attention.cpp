// TensorParallelMultiheadAttention: h/p heads per rank. Legend: B batch, L query length,
// S key length, E embed dim, h heads, g key/value heads, d head dim, p world size,
// hl = h/p and gl = g/p heads on this rank.
#include "attention_shared.h"
#include "attograd/dist.h"
#include "attograd/nn/tensor_parallel.h"
#include "attograd/ops/distributed.h"
#include "tensor_parallel_util.h"

namespace ag::nn {

namespace {

constexpr const char* kOp = "TensorParallelMultiheadAttention";

// Heads must split evenly: h/p query heads and g/p key/value heads per rank, so that
// query head i and its key/value head i / (h/g) land on the same rank.
void check_heads(int64_t E, int64_t h, int64_t g) {
  const int64_t p = dist::world_size();
  AG_CHECK(h > 0 && h % p == 0, ShapeError, kOp, ": num_heads ", h, " (embed_dim ", E,
           ") must divide by the world size ", p);
  AG_CHECK(g > 0 && g % p == 0, ShapeError, kOp, ": num_kv_heads ", g, " (num_heads ", h, ", embed_dim ", E,
           ") must divide by the world size ", p);
}

}  // namespace

// ---- options ------------------------------------------------------------------------------
TensorParallelMultiheadAttentionOptions::TensorParallelMultiheadAttentionOptions(const MultiheadAttentionOptions& o)
    : embed_dim_(o.embed_dim()), num_heads_(o.num_heads()) {
  const int64_t E = o.embed_dim();
  AG_CHECK(o.kdim().value_or(E) == E && o.vdim().value_or(E) == E && !o.add_bias_kv() && !o.add_zero_attn() &&
               o.batch_first(),
           ValueError, kOp, ": kdim (", o.kdim().value_or(E), ") and vdim (", o.vdim().value_or(E),
           ") other than embed_dim ", E, ", add_bias_kv (", o.add_bias_kv() ? "true" : "false", "), add_zero_attn (",
           o.add_zero_attn() ? "true" : "false", ") and batch_first=false (", o.batch_first() ? "no" : "yes",
           ") have no tensor-parallel form (tensor-parallel layers and stacks take batch_first)");
  dropout_ = o.dropout();
  bias_ = o.bias();
}

TensorParallelMultiheadAttentionOptions::TensorParallelMultiheadAttentionOptions(const GroupedQueryAttentionOptions& o)
    : embed_dim_(o.embed_dim()), num_heads_(o.num_heads()) {
  num_kv_heads_ = o.num_kv_heads().value_or(o.num_heads());
  dropout_ = o.dropout();
  bias_ = o.bias();
}

// ---- construction ---------------------------------------------------------------------------
TensorParallelMultiheadAttentionImpl::TensorParallelMultiheadAttentionImpl(
    const TensorParallelMultiheadAttentionOptions& o)
    : TensorParallelModule(kOp), options(o) {
  check_heads(o.embed_dim(), o.num_heads(), num_kv_heads());  // before any generator draw
  if (packed())
    build(*MultiheadAttention(
        MultiheadAttentionOptions(o.embed_dim(), o.num_heads()).dropout(o.dropout()).bias(o.bias())));
  else
    build(*GroupedQueryAttention(GroupedQueryAttentionOptions(o.embed_dim(), o.num_heads())
                                     .num_kv_heads(num_kv_heads())
                                     .dropout(o.dropout())
                                     .bias(o.bias())));
}

TensorParallelMultiheadAttentionImpl::TensorParallelMultiheadAttentionImpl(const MultiheadAttentionImpl& full)
    : TensorParallelModule(kOp), options(full.options) {
  build(full);
}

TensorParallelMultiheadAttentionImpl::TensorParallelMultiheadAttentionImpl(const GroupedQueryAttentionImpl& full)
    : TensorParallelModule(kOp), options(full.options) {
  build(full);
}

void TensorParallelMultiheadAttentionImpl::build(const MultiheadAttentionImpl& full) {
  check_heads(options.embed_dim(), options.num_heads(), num_kv_heads());
  // in_proj_weight (3E, E) stacks q, k, v; this rank keeps its heads' rows of each.
  in_proj_weight = detail::take_shard(full.in_proj_weight, {0, 3});  // (3E/p, E)
  register_sharded_parameter("in_proj_weight", &in_proj_weight, {0, 3});
  if (full.in_proj_bias.defined()) {
    in_proj_bias = detail::take_shard(full.in_proj_bias, {0, 3});  // (3E/p)
    register_sharded_parameter("in_proj_bias", &in_proj_bias, {0, 3});
  }
  out_proj = register_module("out_proj", RowParallelLinear(*full.out_proj));
  train(full.is_training());
}

void TensorParallelMultiheadAttentionImpl::build(const GroupedQueryAttentionImpl& full) {
  check_heads(options.embed_dim(), options.num_heads(), num_kv_heads());
  q_proj = register_module("q_proj", ColumnParallelLinear(*full.q_proj));  // E -> E/p
  k_proj = register_module("k_proj", ColumnParallelLinear(*full.k_proj));  // E -> g*d/p
  v_proj = register_module("v_proj", ColumnParallelLinear(*full.v_proj));
  out_proj = register_module("out_proj", RowParallelLinear(*full.out_proj));  // E/p -> E
  train(full.is_training());
}

void TensorParallelMultiheadAttentionImpl::reset_parameters() {
  const auto& o = options;
  if (packed())
    load_full_state_dict(
        MultiheadAttention(MultiheadAttentionOptions(o.embed_dim(), o.num_heads()).bias(o.bias()))->state_dict());
  else
    load_full_state_dict(
        GroupedQueryAttention(
            GroupedQueryAttentionOptions(o.embed_dim(), o.num_heads()).num_kv_heads(num_kv_heads()).bias(o.bias()))
            ->state_dict());
}

int64_t TensorParallelMultiheadAttentionImpl::num_heads_per_partition() const {
  return options.num_heads() / dist::world_size();
}

int64_t TensorParallelMultiheadAttentionImpl::num_kv_heads_per_partition() const {
  return num_kv_heads() / dist::world_size();
}

// ---- forward ------------------------------------------------------------------------------------
std::pair<Tensor, Tensor> TensorParallelMultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                                        const Tensor& value,
                                                                        const AttentionArgs& args) {
  const int64_t E = options.embed_dim();
  AG_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 && query.size(2) == E && key.size(2) == E &&
               value.size(2) == E && query.size(0) == key.size(0) && key.size(0) == value.size(0) &&
               key.size(1) == value.size(1),
           ShapeError, kOp, ": query ", query.shape(), ", key ", key.shape(), " and value ", value.shape(),
           " must be (B, L, E), (B, S, E) and (B, S, E) with E = ", E);
  const bool self_attention = query.impl() == key.impl() && key.impl() == value.impl();
  const bool same_kv = key.impl() == value.impl();
  // One copy_to_parallel_region per distinct input: one all-reduce of its gradient.
  Tensor xq = dist::copy_to_parallel_region(query);
  Tensor xk = self_attention ? xq : dist::copy_to_parallel_region(key);
  Tensor xv = same_kv ? xk : dist::copy_to_parallel_region(value);
  Tensor q, k, v;  // (B, L, hl*d), (B, S, gl*d), (B, S, gl*d)
  if (packed()) {  // as MultiheadAttention: fused GEMMs where the inputs are shared
    const int64_t El = num_heads_per_partition() * head_dim();
    auto w = [&](int64_t i, int64_t n) { return in_proj_weight.narrow(0, i * El, n * El); };
    auto b = [&](int64_t i, int64_t n) {
      return in_proj_bias.defined() ? in_proj_bias.narrow(0, i * El, n * El) : Tensor{};
    };
    if (self_attention) {
      auto qkv = chunk(linear(xq, in_proj_weight, in_proj_bias), 3, -1);  // (B, L, 3E/p)
      q = qkv[0], k = qkv[1], v = qkv[2];
    } else {
      q = linear(xq, w(0, 1), b(0, 1));
      if (same_kv) {
        auto kv = chunk(linear(xk, w(1, 2), b(1, 2)), 2, -1);
        k = kv[0], v = kv[1];
      } else {
        k = linear(xk, w(1, 1), b(1, 1));
        v = linear(xv, w(2, 1), b(2, 1));
      }
    }
  } else {
    q = q_proj->forward_parallel(xq);
    k = k_proj->forward_parallel(xk);
    v = v_proj->forward_parallel(xv);
  }
  return attend(q, k, v, args);
}

std::pair<Tensor, Tensor> TensorParallelMultiheadAttentionImpl::attend(const Tensor& q, const Tensor& k,
                                                                       const Tensor& v, const AttentionArgs& args) {
  const int64_t h = options.num_heads(), hl = num_heads_per_partition(), gl = num_kv_heads_per_partition();
  const int64_t B = q.size(0), L = q.size(1), S = k.size(1);
  AttentionArgs local = args;
  if (args.attn_mask.defined() && args.attn_mask.dim() >= 3) {  // a head dim (-3): keep this rank's heads
    const Tensor& m = args.attn_mask;
    const int64_t hd = m.dim() - 3;
    AG_CHECK(m.size(hd) == 1 || m.size(hd) == h, ShapeError, kOp, ": attn_mask shape ", m.shape(),
             " cannot be broadcast to (B, h, L, S) = ", Shape({B, h, L, S}));
    if (m.size(hd) == h) local.attn_mask = m.narrow(hd, dist::rank() * hl, hl);
  }
  SdpaOptions so;
  if (packed()) {  // MultiheadAttention: every mask combined into one
    so.attn_mask = detail::combine_masks(kOp, local, B, hl, L, S, q.dtype());
  } else {  // GroupedQueryAttention: the causal part goes to the attention op itself
    local.causal = false;
    so.attn_mask = detail::combine_masks(kOp, local, B, hl, L, S, q.dtype());
    so.causal = args.causal;
    so.causal_variant = args.causal_variant;
    so.enable_gqa = true;
  }
  so.need_weights = args.need_weights;
  so.dropout_p = is_training() ? options.dropout() : 0.0;
  so.generator = &tensor_parallel_generator();  // this rank's heads draw their own masks
  auto [o, w] = ag::detail::sdpa_causal_and_mask(detail::split_heads(q, hl), detail::split_heads(k, gl),
                                                 detail::split_heads(v, gl), so);
  Tensor y = out_proj(detail::merge_heads(o));  // (B, L, E), summed over ranks
  if (w.defined())                              // (B, hl, L, S) -> (B, h, L, S): gather along the head dim, moved last
    w = dist::gather_from_parallel_region(w.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
  return {y, w};
}

void TensorParallelMultiheadAttentionImpl::pretty_print(std::ostream& os) const {
  os << kOp << "(embed_dim=" << options.embed_dim() << ", num_heads=" << options.num_heads();
  if (!packed()) os << ", num_kv_heads=" << num_kv_heads();
  os << ", dropout=" << options.dropout() << ", bias=" << (options.bias() ? "true" : "false")
     << ", world_size=" << dist::world_size() << ')';
}

}  // namespace ag::nn
