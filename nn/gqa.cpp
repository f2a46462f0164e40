// GroupedQueryAttention and DecoderKVCache. Legend: B batch, L query length, S key
// length, E embed dim, h query heads, g key/value heads, d head dim, t cached positions.
#include "attograd/nn/gqa.h"

#include <algorithm>

#include "attention_shared.h"
#include "attograd/detail/error_context.h"

namespace ag::nn {

// ---- DecoderKVCache ---------------------------------------------------------------------
// Errors of the ops inside (empty, copy_) carry the cache's name in front.
void DecoderKVCache::Layer::append(const Tensor& k, const Tensor& v) {
  ag::detail::in_op("DecoderKVCache.append", [&] { append_impl(k, v); });
}

void DecoderKVCache::Layer::append_impl(const Tensor& k, const Tensor& v) {
  const char* op = "DecoderKVCache.append";
  AG_CHECK(k.dim() == 4 && v.dim() == 4, ShapeError, op, ": k and v must be (B, g, n, d); got ", k.shape(), " and ",
           v.shape());
  AG_CHECK(k.size(0) == v.size(0) && k.size(1) == v.size(1) && k.size(2) == v.size(2), ShapeError, op, ": k ",
           k.shape(), " and v ", v.shape(), " differ in (B, g, n)");
  AG_CHECK(k.dtype() == v.dtype(), DTypeError, op, ": k has dtype ", k.dtype(), ", v ", v.dtype());
  const int64_t B = k.size(0), g = k.size(1), n = k.size(2), d = k.size(3), dv = v.size(3);
  if (k_.defined()) {
    AG_CHECK(B == k_.size(0) && g == k_.size(1) && d == k_.size(3) && dv == v_.size(3), ShapeError, op, ": k ",
             k.shape(), " and v ", v.shape(), " do not match the cached (B, g, t, d) = ", keys().shape(), " and ",
             values().shape());
    AG_CHECK(k.dtype() == k_.dtype(), DTypeError, op, ": k has dtype ", k.dtype(), ", the cache ", k_.dtype());
  }
  NoGradGuard no_grad;
  // grow: double (or fit n), move the t cached positions once; the first append allocates
  // even with n = 0 (it fixes B, g, d, dv)
  if (length_ + n > capacity() || !k_.defined()) {
    const int64_t cap = std::max(2 * capacity(), length_ + n);
    Tensor nk = empty({B, g, cap, d}, k.dtype()), nv = empty({B, g, cap, dv}, v.dtype());
    if (length_ > 0) {
      nk.narrow(2, 0, length_).copy_(keys());
      nv.narrow(2, 0, length_).copy_(values());
    }
    k_ = nk, v_ = nv;
  }
  k_.narrow(2, length_, n).copy_(k.detach());
  v_.narrow(2, length_, n).copy_(v.detach());
  length_ += n;
}

Tensor DecoderKVCache::Layer::keys() const {
  AG_CHECK(k_.defined(), ValueError, "DecoderKVCache: the cache is empty");
  return k_.narrow(2, 0, length_);
}

Tensor DecoderKVCache::Layer::values() const {
  AG_CHECK(v_.defined(), ValueError, "DecoderKVCache: the cache is empty");
  return v_.narrow(2, 0, length_);
}

int64_t DecoderKVCache::Layer::bytes_per_token() const {
  if (!k_.defined()) return 0;
  return k_.size(1) * (k_.size(3) + v_.size(3)) * static_cast<int64_t>(itemsize(k_.dtype()));
}

int64_t DecoderKVCache::Layer::bytes_allocated() const {
  if (!k_.defined()) return 0;
  return (k_.numel() + v_.numel()) * static_cast<int64_t>(itemsize(k_.dtype()));
}

void DecoderKVCache::Layer::clear() {
  k_ = Tensor{}, v_ = Tensor{};
  length_ = 0;
}

int64_t DecoderKVCache::bytes_per_token() const {
  int64_t n = 0;
  for (const auto& l : layers) n += l.bytes_per_token();
  return n;
}

// ---- GroupedQueryAttention -----------------------------------------------------------------
GroupedQueryAttentionImpl::GroupedQueryAttentionImpl(const GroupedQueryAttentionOptions& o)
    : Module("GroupedQueryAttention"), options(o) {
  const int64_t E = o.embed_dim(), h = o.num_heads(), g = num_kv_heads();
  AG_CHECK(E > 0 && h > 0 && E % h == 0, ShapeError, "GroupedQueryAttention: embed_dim ", E,
           " must be divisible by num_heads ", h);
  AG_CHECK(g > 0 && h % g == 0, ShapeError, "GroupedQueryAttention: num_heads ", h,
           " must be divisible by num_kv_heads ", g);
  AG_CHECK(o.dropout() >= 0 && o.dropout() <= 1, ValueError, "GroupedQueryAttention: dropout must be in [0, 1], got ",
           o.dropout());
  const int64_t kv = g * head_dim();
  q_proj = register_module("q_proj", Linear(LinearOptions(E, E).bias(o.bias())));
  k_proj = register_module("k_proj", Linear(LinearOptions(E, kv).bias(o.bias())));
  v_proj = register_module("v_proj", Linear(LinearOptions(E, kv).bias(o.bias())));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())));
}

namespace {

void check_width(const char* op, const char* name, const Tensor& x, int64_t E) {
  AG_CHECK(x.dim() == 3 && x.size(2) == E, ShapeError, op, ": ", name, " must be (B, len, E) with E = ", E, ", got ",
           x.shape());
}

}  // namespace

Tensor GroupedQueryAttentionImpl::project_q(const Tensor& query) const {
  check_width("GroupedQueryAttention", "query", query, options.embed_dim());
  return detail::split_heads(q_proj(query), options.num_heads());  // (B, h, L, d)
}

std::pair<Tensor, Tensor> GroupedQueryAttentionImpl::project_kv(const Tensor& key, const Tensor& value) const {
  check_width("GroupedQueryAttention", "key", key, options.embed_dim());
  check_width("GroupedQueryAttention", "value", value, options.embed_dim());
  AG_CHECK(key.size(0) == value.size(0) && key.size(1) == value.size(1), ShapeError, "GroupedQueryAttention: key ",
           key.shape(), " and value ", value.shape(), " differ in (B, S)");
  return {detail::split_heads(k_proj(key), num_kv_heads()),
          detail::split_heads(v_proj(value), num_kv_heads())};  // (B, g, S, d)
}

std::pair<Tensor, Tensor> GroupedQueryAttentionImpl::attend(const Tensor& q, const Tensor& k, const Tensor& v,
                                                            const AttentionArgs& args) {
  const char* op = "GroupedQueryAttention";
  const int64_t h = options.num_heads(), g = num_kv_heads();
  AG_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && q.size(1) == h && k.size(1) == g && v.size(1) == g &&
               q.size(0) == k.size(0) && k.size(0) == v.size(0),
           ShapeError, op, ": expected q (B, ", h, ", L, d), k and v (B, ", g, ", S, d); got ", q.shape(), ", ",
           k.shape(), ", ", v.shape());
  const int64_t B = q.size(0), L = q.size(2), S = k.size(2);
  // The causal part goes to the attention op itself (the fused kernel skips the tiles
  // above the diagonal); the other masks are combined into one.
  AttentionArgs rest = args;
  rest.causal = false;
  SdpaOptions so;
  so.attn_mask = detail::combine_masks(op, rest, B, h, L, S, q.dtype());
  so.causal = args.causal;
  so.causal_variant = args.causal_variant;
  so.need_weights = args.need_weights;
  so.dropout_p = is_training() ? options.dropout() : 0.0;
  so.enable_gqa = true;
  auto [o, w] = ag::detail::sdpa_causal_and_mask(q, k, v, so);  // (B, h, L, d)
  return {out_proj(detail::merge_heads(o)), w};
}

std::pair<Tensor, Tensor> GroupedQueryAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                             const Tensor& value, const AttentionArgs& args) {
  AG_CHECK(query.dim() == 3 && key.dim() == 3 && query.size(0) == key.size(0), ShapeError,
           "GroupedQueryAttention: query ", query.shape(), " and key ", key.shape(),
           " must be (B, len, E) with the same B");
  auto [k, v] = project_kv(key, value);
  return attend(project_q(query), k, v, args);
}

Tensor GroupedQueryAttentionImpl::forward_step(const Tensor& x, DecoderKVCache::Layer& cache,
                                               const AttentionArgs& args) {
  auto [k, v] = project_kv(x, x);  // (B, g, n, d)
  cache.append(k, v);
  AttentionArgs a = args;
  a.causal = true;
  a.causal_variant = CausalVariant::lower_right;  // the n queries are the last n of t + n keys
  return attend(project_q(x), cache.keys(), cache.values(), a).first;
}

void GroupedQueryAttentionImpl::pretty_print(std::ostream& os) const {
  os << "GroupedQueryAttention(embed_dim=" << options.embed_dim() << ", num_heads=" << options.num_heads()
     << ", num_kv_heads=" << num_kv_heads() << ", dropout=" << options.dropout()
     << ", bias=" << (options.bias() ? "true" : "false") << ')';
}

}  // namespace ag::nn
