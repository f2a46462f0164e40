// Masks and scaled dot-product attention, composed from primitives (matmul, masking,
// softmax, dropout), so its gradient needs no code of its own.
// Legend: L query length, S key length, d head dim; "..." are batch and head dims.
#include <cmath>
#include <limits>

#include "attograd/ops/attention.h"
#include "attograd/detail/attention.h"
#include "kernels/flash_attention.h"
#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {

// The (L, S) bool mask from the caller's sizes: L * S must be countable (the allocation
// itself raises MemoryError when it does not fit).
Tensor causal_mask(int64_t L, int64_t S) try {
  AG_CHECK(L >= 0 && S >= 0, ShapeError, "causal_mask: negative size (", L, ", ", S, ")");
  int64_t n = 0;
  AG_CHECK(!__builtin_mul_overflow(L, S, &n), ShapeError, "causal_mask: L x S = ", L, " x ", S, " overflows int64");
  Tensor i = arange(L).view({L, 1});  // i64
  Tensor j = arange(S).view({1, S});
  return le(j, i);  // (L, S): key j visible to query i when j <= i
} catch (const Error& e) { detail::rethrow_in_op("causal_mask", e); }

Tensor causal_mask(int64_t L, int64_t S, CausalVariant variant) try {
  if (variant == CausalVariant::upper_left) return causal_mask(L, S);
  AG_CHECK(L >= 0 && S >= 0, ShapeError, "causal_mask: negative size (", L, ", ", S, ")");
  int64_t n = 0;
  AG_CHECK(!__builtin_mul_overflow(L, S, &n), ShapeError, "causal_mask: L x S = ", L, " x ", S, " overflows int64");
  Tensor i = arange(S - L, S).view({L, 1});  // i64: query i is position i + S - L of the keys
  Tensor j = arange(S).view({1, S});
  return le(j, i);  // (L, S): key j visible to query i when j <= i + S - L
} catch (const Error& e) { detail::rethrow_in_op("causal_mask", e); }

Tensor keep_mask_from_lengths(const Tensor& lengths, int64_t S) try {
  AG_CHECK(lengths.dim() == 1, ShapeError, "keep_mask_from_lengths: lengths must be 1-D (B), got shape ",
           lengths.shape());
  AG_CHECK(!lengths.is_floating_point() && lengths.dtype() != DType::b8, DTypeError,
           "keep_mask_from_lengths: lengths must be integer, got ", lengths.dtype());
  AG_CHECK(S >= 0, ValueError, "keep_mask_from_lengths: S must be >= 0, got ", S);
  // A length outside [0, S] is a caller's bug:
  // silently clipping it would hide padding that was never there.
  for (int64_t len : K::convert(lengths, DType::i64).to_vector<int64_t>())
    AG_CHECK(len >= 0 && len <= S, ValueError, "keep_mask_from_lengths: length ", len, " is out of range for S = ", S,
             " (lengths must be in [0, S]; lengths shape ", lengths.shape(), ")");
  Tensor pos = arange(S).view({1, S});                                         // i64
  return lt(pos, K::convert(lengths, DType::i64).view({lengths.numel(), 1}));  // (B, S)
} catch (const Error& e) { detail::rethrow_in_op("keep_mask_from_lengths", e); }

Tensor additive_mask(const Tensor& bool_mask, DType dtype) try {
  AG_CHECK(bool_mask.dtype() == DType::b8, DTypeError, "additive_mask: expected a bool mask, got ", bool_mask.dtype());
  return K::where(bool_mask, zeros(Shape{}, dtype), full(Shape{}, -std::numeric_limits<double>::infinity(), dtype));
} catch (const Error& e) { detail::rethrow_in_op("additive_mask", e); }

namespace {

Shape batch_of(const Tensor& t) { return Shape(std::vector<int64_t>(t.shape().begin(), t.shape().end() - 2)); }

// Query heads per key/value head: h / g with enable_gqa (checked by the caller), else 1.
int64_t kv_group(const Tensor& q, const Tensor& k, const SdpaOptions& opt) {
  return opt.enable_gqa ? q.size(-3) / k.size(-3) : 1;
}

bool can_fuse(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& opt) {
  if (!opt.fused || opt.need_weights || opt.dropout_p >= 1) return false;
  // With dropout and short key rows the composite path is faster (copy-task training,
  // S = 10: 33 vs 38 ms per step); the fused kernel's O(L) memory matters for long rows.
  if (opt.dropout_p > 0 && k.size(-2) < 32) return false;
  if (q.dim() != k.dim() || q.dim() != v.dim()) return false;
  // Batch dims equal, but for the head dim (-3) with grouped-query attention.
  const int64_t head = kv_group(q, k, opt) > 1 ? q.dim() - 3 : -1;
  for (int64_t i = 0; i + 2 < q.dim(); ++i)
    if (i != head && (q.shape()[i] != k.shape()[i] || q.shape()[i] != v.shape()[i])) return false;
  return !(opt.attn_mask.defined() && wants_grad(opt.attn_mask));
}

// The fused primitive: out = softmax(q k^T * scale + masks) v, with its own backward
// (flash_attention.cpp) that recomputes scores tile by tile from the saved logsumexp.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const SdpaOptions& opt, double scale) {
  K::FlashConfig cfg;
  cfg.scale = scale;
  cfg.causal = opt.causal;
  if (opt.causal && opt.causal_variant == CausalVariant::lower_right) cfg.causal_offset = k.size(-2) - q.size(-2);
  cfg.group = kv_group(q, k, opt);
  if (opt.dropout_p > 0) {  // one draw per call: the kernel derives every mask bit from it
    cfg.dropout_p = opt.dropout_p;
    Generator& rng = opt.generator ? *opt.generator : default_generator();
    auto hold = rng.lock();
    cfg.seed = rng.next_u64();
  }
  // A padding mask (keys past a per-slice length masked for every query) becomes
  // lengths: the kernels skip those keys' tiles, and read the mask no more when it
  // says nothing else (FLASH_ATTENTION.md, "Skipping padded keys").
  const K::FlashKeyLengths kl = K::flash_key_lengths(q, k, opt.attn_mask);
  cfg.key_len = kl.len;
  const Tensor mask = kl.exact ? Tensor{} : opt.attn_mask;
  cfg.bool_mask = mask.defined() && mask.dtype() == DType::b8;
  K::FlashForward f = K::flash_attention_forward(q, k, v, mask, cfg);
  bool need = wants_grad(q) || wants_grad(k) || wants_grad(v);
  // Under create_graph the engine differentiates the unfused path instead of the kernel.
  auto composite = [cfg, sm = save_if(need, opt.attn_mask),
                    variant = opt.causal_variant](const std::vector<Tensor>& in) {
    AG_CHECK(cfg.dropout_p == 0, AutogradError,
             "scaled_dot_product_attention: double "
             "backward through the fused kernel with dropout is not supported (its mask "
             "is regenerated inside the kernel); pass fused = false");
    SdpaOptions o;
    o.attn_mask = sm.get();
    o.causal = cfg.causal;
    o.causal_variant = variant;
    o.enable_gqa = cfg.group > 1;
    o.scale = cfg.scale;
    o.fused = false;
    return detail::sdpa_causal_and_mask(in[0], in[1], in[2], o).first;
  };
  return record(
      "scaled_dot_product_attention", f.out, {q, k, v},
      [sq = save_if(need, q), sk = save_if(need, k), sv = save_if(need, v), sm = save_if(need, opt.attn_mask),
       so = save_output_if(need, f.out), sl = save_if(need, f.lse), cfg, exact = kl.exact](const Tensor& g, NeedsGrad) {
        K::FlashGrads gr = K::flash_attention_backward(sq.get(), sk.get(), sv.get(), exact ? Tensor{} : sm.get(), cfg,
                                                       so.get(), sl.get(), g);
        return Grads{gr.dq, gr.dk, gr.dv};
      },
      [&] {
        return Composite{composite, {Saved(q), Saved(k), Saved(v)}};
      });
}

}  // namespace

// PyTorch 2.x refuses is_causal with an explicit attn_mask; attograd's modules reach the
// combination through detail::sdpa_causal_and_mask (attograd/detail/attention.h).
std::pair<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                       const SdpaOptions& opt) {
  AG_CHECK(!(opt.causal && opt.attn_mask.defined()), ValueError,
           "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True (attn_mask ",
           opt.attn_mask.shape(), "); fold the causal mask into attn_mask (logical_and with causal_mask(L, S))");
  return detail::sdpa_causal_and_mask(q, k, v, opt);
}

// scores (..., L, S) = q k^T * scale; masked entries become -inf; softmax over S;
// a row with every key masked is all -inf and softmax makes it zeros.
auto detail::sdpa_causal_and_mask(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const SdpaOptions& opt_in)
    -> std::pair<Tensor, Tensor> try {
  const Tensor q = autocast_lower(q_in), k = autocast_lower(k_in), v = autocast_lower(v_in);
  SdpaOptions opt = opt_in;
  if (opt.attn_mask.defined() && opt.attn_mask.is_floating_point()) opt.attn_mask = autocast_lower(opt.attn_mask);
  const char* op = "scaled_dot_product_attention";
  AG_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ShapeError, op,
           ": q, k, v must be at least 2-D (..., L, d); got ", q.shape(), ", ", k.shape(), ", ", v.shape());
  const int64_t d = q.shape()[q.dim() - 1];
  AG_CHECK(k.shape()[k.dim() - 1] == d, ShapeError, op, ": query shape ", q.shape(), " and key shape ", k.shape(),
           " differ in the last dim (", d, " != ", k.shape()[k.dim() - 1], ")");
  AG_CHECK(k.shape()[k.dim() - 2] == v.shape()[v.dim() - 2], ShapeError, op, ": key shape ", k.shape(),
           " and value shape ", v.shape(), " differ in length S (", k.shape()[k.dim() - 2],
           " != ", v.shape()[v.dim() - 2], ")");
  const int64_t L = q.shape()[q.dim() - 2], S = k.shape()[k.dim() - 2];
  const double scale = opt.scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));

  AG_CHECK(q.dtype() == k.dtype() && k.dtype() == v.dtype(), DTypeError, op, ": dtypes of query ", q.dtype(), ", key ",
           k.dtype(), " and value ", v.dtype(), " differ");
  // The scores' batch dims (..., h): q's, k's and v's batch dims broadcast, k's and v's
  // head dim standing in for q's h with enable_gqa.
  Shape kb = batch_of(k), vb = batch_of(v);
  if (opt.enable_gqa) {
    AG_CHECK(q.dim() >= 3 && k.dim() >= 3 && v.dim() >= 3, ShapeError, op,
             ": enable_gqa needs a head dim: q (..., h, L, d), k (..., g, S, d), v (..., g, S, dv); got ", q.shape(),
             ", ", k.shape(), ", ", v.shape());
    const int64_t h = q.size(-3), g = k.size(-3);
    AG_CHECK(g > 0 && v.size(-3) == g && h % g == 0, ShapeError, op, ": enable_gqa: query heads ", h,
             " must be a multiple of the key/value heads (key ", k.shape(), ", value ", v.shape(),
             "), with key and value having the same number; query ", q.shape());
    kb[kb.size() - 1] = h, vb[vb.size() - 1] = h;
  }
  Shape scores_shape;
  try {
    scores_shape = broadcast_shapes(broadcast_shapes(batch_of(q), kb, op), vb, op);
  } catch (const ShapeError&) {
    AG_CHECK(false, ShapeError, op, ": the batch and head dims of query ", q.shape(), ", key ", k.shape(),
             " and value ", v.shape(), " do not broadcast",
             opt.enable_gqa ? "" : " (key/value with fewer heads than the query need enable_gqa)");
  }
  scores_shape.push_back(L);
  scores_shape.push_back(S);
  if (opt.attn_mask.defined()) {
    const Tensor& m = opt.attn_mask;
    Shape b;
    try {
      b = broadcast_shapes(m.shape(), scores_shape, op);
    } catch (const ShapeError&) { b = Shape{}; }
    AG_CHECK(b == scores_shape, ShapeError, op, ": attn_mask shape ", m.shape(),
             " cannot be broadcast to the scores' shape ", scores_shape, " (query ", q.shape(), ", key ", k.shape(),
             ")");
    AG_CHECK(m.dtype() == DType::b8 || m.dtype() == q.dtype(), DTypeError, op, ": float attn_mask has dtype ",
             m.dtype(), ", the scores have ", q.dtype());
  }
  if (can_fuse(q, k, v, opt)) return {fused_attention(q, k, v, opt, scale), Tensor{}};

  // Grouped heads without repeating K/V: q (..., g, h/g, L, d) against k, v viewed as
  // (..., g, 1, S, d); matmul broadcasts the 1, and its backward's sum_to adds up each
  // group's gradient into the shared head.
  const int64_t group = kv_group(q, k, opt);
  auto split_groups = [group](const Tensor& t) {  // (..., h, n, c) -> (..., g, h/g, n, c)
    Shape s = t.shape();
    const int64_t hh = s[s.size() - 3];
    s[s.size() - 3] = group;
    s.insert(static_cast<int64_t>(s.size()) - 3, hh / group);
    return t.reshape(s);
  };
  auto merge_groups = [](const Tensor& t) {  // (..., g, h/g, n, c) -> (..., h, n, c)
    Shape s = t.shape();
    s[s.size() - 4] *= s[s.size() - 3];
    s.erase(static_cast<int64_t>(s.size()) - 3);
    return t.reshape(s);
  };
  Tensor kk = group > 1 ? k.unsqueeze(-3) : k, vv = group > 1 ? v.unsqueeze(-3) : v;
  Tensor scores = matmul(group > 1 ? split_groups(q) : q, transpose(kk, -2, -1)) * scale;  // (..., [g, h/g | h], L, S)
  if (group > 1) scores = merge_groups(scores);                                            // (..., h, L, S)
  const double ninf = -std::numeric_limits<double>::infinity();
  if (opt.attn_mask.defined()) {
    const Tensor& m = opt.attn_mask;
    scores = m.dtype() == DType::b8 ? masked_fill(scores, logical_not(m), ninf) : scores + m;
  }
  if (opt.causal) scores = masked_fill(scores, logical_not(causal_mask(L, S, opt.causal_variant)), ninf);
  Tensor weights = softmax(scores, -1);
  Tensor attn = opt.dropout_p > 0 ? dropout(weights, opt.dropout_p, true, opt.generator) : weights;
  Tensor out = matmul(group > 1 ? split_groups(attn) : attn, vv);  // (..., [g, h/g | h], L, dv)
  if (group > 1) out = merge_groups(out);                          // (..., h, L, dv)
  return {out, opt.need_weights ? weights : Tensor{}};
} catch (const Error& e) { detail::rethrow_in_op("scaled_dot_product_attention", e); }

}  // namespace ag
