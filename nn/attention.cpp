// Attention and MultiheadAttention. Legend: B batch, L query length, S key length,
// E embed dim, h heads, d head dim.
#include "attograd/nn/attention.h"

#include <cmath>

#include "attograd/nn/init.h"
#include "attention_shared.h"

namespace ag::nn {
namespace {

// batch_dim 0: (B, len, width); 1: sequence-first (len, B, width).
void check_inputs(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, int64_t E, int64_t kdim,
                  int64_t vdim, int64_t batch_dim = 0) {
  AG_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3, ShapeError, op, ": query, key and value must be 3-D ",
           batch_dim == 0 ? "(B, len, width)" : "(len, B, width)", "; got ", q.shape(), ", ", k.shape(), ", ",
           v.shape());
  AG_CHECK(q.size(2) == E && k.size(2) == kdim && v.size(2) == vdim, ShapeError, op, ": query ", q.shape(), ", key ",
           k.shape(), ", value ", v.shape(), " must end in widths ", E, ", ", kdim, ", ", vdim);
  const int64_t b = batch_dim, len = 1 - batch_dim;
  AG_CHECK(q.size(b) == k.size(b) && k.size(b) == v.size(b), ShapeError, op, ": batch sizes (dim ", b, ") of query ",
           q.shape(), ", key ", k.shape(), ", value ", v.shape(), " differ");
  AG_CHECK(k.size(len) == v.size(len), ShapeError, op, ": key ", k.shape(), " and value ", v.shape(),
           " differ in length S");
}

}  // namespace

namespace detail {
// One mask for scaled_dot_product_attention (bool true = takes part), broadcastable to
// (B, h, L, S): the user's attn_mask (bool inverted: PyTorch's true = not allowed), the causal mask and the padding mask combined. Bool stays bool (and);
// with a float mask, the bool parts become additive (-inf where not allowed).
Tensor combine_masks(const char* op, const AttentionArgs& args, int64_t B, int64_t h, int64_t L, int64_t S,
                     DType dtype) {
  Shape full_shape{B, h, L, S};
  Tensor mask;
  auto merge = [&](const Tensor& m) {
    if (!mask.defined())
      mask = m;
    else if (mask.dtype() == DType::b8 && m.dtype() == DType::b8)
      mask = logical_and(mask, m);
    else
      mask = (mask.dtype() == DType::b8 ? additive_mask(mask, dtype) : mask) +
             (m.dtype() == DType::b8 ? additive_mask(m, dtype) : m);
  };
  if (args.attn_mask.defined()) {
    // PyTorch's 3-D form (B * h, L, S), batch-major: one mask per batch entry and head.
    const bool per_head = args.attn_mask.dim() == 3 && args.attn_mask.size(0) == B * h && args.attn_mask.size(1) == L &&
                          args.attn_mask.size(2) == S;
    const Tensor m = per_head ? args.attn_mask.reshape({B, h, L, S}) : args.attn_mask;
    bool ok = m.dim() <= 4;
    for (int64_t i = 0; ok && i < m.dim(); ++i) {
      int64_t want = full_shape[4 - m.dim() + i];
      ok = m.shape()[i] == want || m.shape()[i] == 1;
    }
    AG_CHECK(ok, ShapeError, op, ": attn_mask shape ", m.shape(),
             " cannot be broadcast to (B, h, L, S) = ", full_shape);
    AG_CHECK(m.dtype() == DType::b8 || m.dtype() == dtype, DTypeError, op, ": attn_mask must be bool or ", dtype,
             ", got ", m.dtype());
    // PyTorch's nn.MultiheadAttention meaning: a bool attn_mask is true where NOT allowed.
    merge(m.dtype() == DType::b8 ? logical_not(m) : m);
  }
  if (args.causal) merge(causal_mask(L, S, args.causal_variant));
  AG_CHECK(!(args.key_keep_mask.defined() && args.key_padding_mask.defined()), ValueError, op,
           ": give key_keep_mask (true = real key) or key_padding_mask (true = ignore), not both");
  if (args.key_keep_mask.defined()) {
    const Tensor& p = args.key_keep_mask;
    AG_CHECK(p.dtype() == DType::b8, DTypeError, op, ": key_keep_mask must be bool (true = real key), got ", p.dtype());
    AG_CHECK(p.shape() == Shape({B, S}), ShapeError, op, ": key_keep_mask shape ", p.shape(),
             " must be (B, S) = ", Shape({B, S}));
    merge(p.view({B, 1, 1, S}));
  }
  if (args.key_padding_mask.defined()) {  // torch's meaning: true = ignore this key
    const Tensor& p = args.key_padding_mask;
    AG_CHECK(p.dtype() == DType::b8, DTypeError, op, ": key_padding_mask must be bool (true = ignore the key), got ",
             p.dtype());
    AG_CHECK(p.shape() == Shape({B, S}), ShapeError, op, ": key_padding_mask shape ", p.shape(),
             " must be (B, S) = ", Shape({B, S}));
    merge(logical_not(p).view({B, 1, 1, S}));
  }
  return mask;
}
}  // namespace detail

using detail::merge_heads;
using detail::split_heads;

// ---- Attention ------------------------------------------------------------------
AttentionImpl::AttentionImpl(const AttentionOptions& o) : Module("Attention"), options(o) {
  int64_t E = o.embed_dim();
  AG_CHECK(E > 0, ValueError, "Attention: embed_dim must be positive, got ", E);
  q_proj = register_module("q_proj", Linear(LinearOptions(E, E).bias(o.bias())));
  k_proj = register_module("k_proj", Linear(LinearOptions(o.kdim().value_or(E), E).bias(o.bias())));
  v_proj = register_module("v_proj", Linear(LinearOptions(o.vdim().value_or(E), E).bias(o.bias())));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())));
}

std::pair<Tensor, Tensor> AttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                 const AttentionArgs& args) {
  const int64_t E = options.embed_dim();
  check_inputs("Attention", query, key, value, E, options.kdim().value_or(E), options.vdim().value_or(E));
  const int64_t B = query.size(0), L = query.size(1), S = key.size(1);
  Tensor q = q_proj(query).unsqueeze(1), k = k_proj(key).unsqueeze(1), v = v_proj(value).unsqueeze(1);
  SdpaOptions so;
  so.attn_mask = detail::combine_masks("Attention", args, B, 1, L, S, query.dtype());
  so.need_weights = args.need_weights;
  auto [o, w] = scaled_dot_product_attention(q, k, v, so);  // (B, 1, L, E)
  return {out_proj(o.squeeze(1)), w};
}

void AttentionImpl::pretty_print(std::ostream& os) const { os << "Attention(embed_dim=" << options.embed_dim() << ')'; }

// ---- MultiheadAttention ---------------------------------------------------------------
MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), options(o) {
  const int64_t E = o.embed_dim(), h = o.num_heads();
  AG_CHECK(E > 0 && h > 0 && E % h == 0, ShapeError, "MultiheadAttention: embed_dim ", E,
           " must be divisible by num_heads ", h);
  AG_CHECK(o.dropout() >= 0 && o.dropout() <= 1, ValueError, "MultiheadAttention: dropout must be in [0, 1], got ",
           o.dropout());
  const int64_t kdim = o.kdim().value_or(E), vdim = o.vdim().value_or(E);
  if (kdim == E && vdim == E) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, kdim}));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, vdim}));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}));
    bias_v = register_parameter("bias_v", empty({1, 1, E}));
  }
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (packed()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

Tensor MultiheadAttentionImpl::project_q(const Tensor& query) const {
  const int64_t E = options.embed_dim();
  Tensor b = in_proj_bias.defined() ? in_proj_bias.narrow(0, 0, E) : Tensor{};
  return linear(query, packed() ? in_proj_weight.narrow(0, 0, E) : q_proj_weight, b);
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::project_kv(const Tensor& key, const Tensor& value) const {
  const int64_t E = options.embed_dim();
  auto bias = [&](int64_t i) { return in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor{}; };
  if (packed() && key.impl() == value.impl()) {  // one GEMM for k and v
    Tensor b = in_proj_bias.defined() ? in_proj_bias.narrow(0, E, 2 * E) : Tensor{};
    auto kv = chunk(linear(key, in_proj_weight.narrow(0, E, 2 * E), b), 2, -1);
    return {kv[0], kv[1]};
  }
  return {linear(key, packed() ? in_proj_weight.narrow(0, E, E) : k_proj_weight, bias(1)),
          linear(value, packed() ? in_proj_weight.narrow(0, 2 * E, E) : v_proj_weight, bias(2))};
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query_in, const Tensor& key_in,
                                                          const Tensor& value_in, const AttentionArgs& args) {
  const int64_t E = options.embed_dim();
  const char* op = options.batch_first() ? "MultiheadAttention" : "MultiheadAttention(batch_first=false)";
  check_inputs(op, query_in, key_in, value_in, E, options.kdim().value_or(E), options.vdim().value_or(E),
               options.batch_first() ? 0 : 1);
  // Sequence-first (len, B, *) runs as the batch-first views (B, len, *); an input given
  // twice stays one tensor, so self-attention keeps its fused projection.
  const bool sf = !options.batch_first();
  const Tensor query = sf ? query_in.transpose(0, 1) : query_in;
  const Tensor key = !sf ? key_in : key_in.impl() == query_in.impl() ? query : key_in.transpose(0, 1);
  const Tensor value = !sf                                  ? value_in
                       : value_in.impl() == key_in.impl()   ? key
                       : value_in.impl() == query_in.impl() ? query
                                                            : value_in.transpose(0, 1);
  Tensor q, k, v;  // (B, L, E), (B, S, E), (B, S, E)
  if (packed() && query.impl() == key.impl() && key.impl() == value.impl()) {
    // Self-attention: one fused GEMM (B, L, 3E) for q, k and v (nn/ATTENTION.md).
    auto qkv = chunk(linear(query, in_proj_weight, in_proj_bias), 3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    q = project_q(query);
    std::tie(k, v) = project_kv(key, value);
  }
  auto [out, weights] = attend(q, k, v, args);  // (B, L, E), (B, h, L, S)
  return {sf ? out.transpose(0, 1) : out, weights};
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::attend(const Tensor& q, const Tensor& k, const Tensor& v,
                                                         const AttentionArgs& args) {
  const int64_t h = options.num_heads();
  auto [o, w] = attend_heads(split_heads(q, h), split_heads(k, h), split_heads(v, h), args);
  return {out_proj(merge_heads(o)), w};  // (B, L, E), (B, h, L, S)
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::attend_heads(const Tensor& q, const Tensor& k_in, const Tensor& v_in,
                                                               const AttentionArgs& args) {
  const int64_t h = options.num_heads(), d = head_dim();
  const int64_t B = q.size(0), L = q.size(2), S = k_in.size(2);
  Tensor k = k_in, v = v_in;  // (B, h, S, d)
  // The causal part goes to the attention op itself, so the fused kernel skips the tiles
  // above the diagonal instead of reading a materialized (L, S) mask; not with bias_k,
  // whose appended key every query sees.
  AttentionArgs rest = args;
  const bool extra_keys = options.add_bias_kv() || options.add_zero_attn();
  if (!extra_keys) rest.causal = false;
  Tensor mask = detail::combine_masks("MultiheadAttention", rest, B, h, L, S, q.dtype());
  // One more key and value per head, always visible, and the mask's S dim padded with
  // "allowed": bias_k / bias_v ((1, 1, E) -> (B, h, 1, d)), then a zero row (add_zero_attn;
  // PyTorch appends it after the biases).
  auto append = [&](const Tensor& kr, const Tensor& vr) {
    k = cat({k, kr}, 2);
    v = cat({v, vr}, 2);
    if (mask.defined()) {
      Shape pad = mask.shape();
      pad[pad.size() - 1] = 1;
      mask = cat({mask, mask.dtype() == DType::b8 ? ones(pad, DType::b8) : zeros(pad, mask.dtype())}, -1);
    }
  };
  if (options.add_bias_kv()) {
    auto heads = [&](const Tensor& b) { return b.view({1, 1, h, d}).transpose(1, 2).expand({B, h, 1, d}); };
    append(heads(bias_k), heads(bias_v));
  }
  if (options.add_zero_attn()) append(zeros({B, h, 1, d}, k.dtype()), zeros({B, h, 1, d}, v.dtype()));
  SdpaOptions so;
  so.attn_mask = mask;
  so.causal = args.causal && !rest.causal;
  so.causal_variant = args.causal_variant;
  so.need_weights = args.need_weights;
  so.dropout_p = is_training() ? options.dropout() : 0.0;
  return ag::detail::sdpa_causal_and_mask(q, k, v, so);  // (B, h, L, d), (B, h, L, S)
}

Tensor MultiheadAttentionImpl::forward_step(const Tensor& x_in, DecoderKVCache::Layer& cache,
                                            const AttentionArgs& args) {
  const int64_t E = options.embed_dim(), h = options.num_heads();
  const char* op = "MultiheadAttention.forward_step";
  AG_CHECK(packed(), ValueError, op, ": cached self-attention needs kdim = vdim = embed_dim; this module has kdim ",
           options.kdim().value_or(E), ", vdim ", options.vdim().value_or(E), ", embed_dim ", E);
  AG_CHECK(x_in.dim() == 3 && x_in.size(2) == E, ShapeError, op, ": x must be ",
           options.batch_first() ? "(B, n, E)" : "(n, B, E)", " with E = ", E, ", got ", x_in.shape());
  const Tensor x = options.batch_first() ? x_in : x_in.transpose(0, 1);  // (B, n, E)
  // One GEMM (B, n, 3E) for q, k and v, as forward's self-attention.
  auto qkv = chunk(linear(x, in_proj_weight, in_proj_bias), 3, -1);  // (B, n, E) each
  const Tensor &q = qkv[0], &k = qkv[1], &v = qkv[2];
  cache.append(split_heads(k, h), split_heads(v, h));  // (B, h, n, d), copied into the cache
  AttentionArgs a = args;
  a.causal = true;
  a.causal_variant = CausalVariant::lower_right;  // the n queries are the last n of t + n keys
  Tensor o = attend_heads(split_heads(q, h), cache.keys(), cache.values(), a).first;  // (B, h, n, d)
  Tensor out = out_proj(merge_heads(o));                                              // (B, n, E)
  return options.batch_first() ? out : out.transpose(0, 1);
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
  os << "MultiheadAttention(embed_dim=" << options.embed_dim() << ", num_heads=" << options.num_heads()
     << ", dropout=" << options.dropout() << ", bias=" << (options.bias() ? "true" : "false");
  if (!options.batch_first()) os << ", batch_first=false";
  os << ')';
}

}  // namespace ag::nn
