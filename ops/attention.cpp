// Masks and scaled dot-product attention, composed from primitives (matmul, masking,
// softmax, dropout), so its gradient needs no code of its own.
// Legend: L query length, S key length, d head dim; "..." are batch and head dims.
#include <cmath>
#include <limits>

#include "attograd/nn_ops.h"
#include "op_util.h"

namespace ag {

Tensor causal_mask(int64_t L, int64_t S) {
  AG_CHECK(L >= 0 && S >= 0, ShapeError, "causal_mask: negative size (", L, ", ", S, ")");
  Tensor i = arange(static_cast<double>(L)).view({L, 1});
  Tensor j = arange(static_cast<double>(S)).view({1, S});
  return le(j, i);  // (L, S): key j visible to query i when j <= i
}

Tensor padding_mask(const Tensor& lengths, int64_t S) {
  AG_CHECK(lengths.dim() == 1, ShapeError, "padding_mask: lengths must be 1-D (B), got shape ",
           lengths.shape());
  AG_CHECK(!lengths.is_floating_point() && lengths.dtype() != DType::b8, DTypeError,
           "padding_mask: lengths must be integer, got ", lengths.dtype());
  Tensor pos = arange(static_cast<double>(S)).view({1, S});
  return lt(pos, K::convert(lengths, DType::i64).view({lengths.numel(), 1}));  // (B, S)
}

Tensor additive_mask(const Tensor& bool_mask, DType dtype) {
  AG_CHECK(bool_mask.dtype() == DType::b8, DTypeError, "additive_mask: expected a bool mask, got ",
           bool_mask.dtype());
  return K::where(bool_mask, zeros(Shape{}, dtype),
                  full(Shape{}, -std::numeric_limits<double>::infinity(), dtype));
}

// scores (..., L, S) = q k^T * scale; masked entries become -inf; softmax over S;
// a row with every key masked is all -inf and softmax makes it zeros.
std::pair<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k,
                                                       const Tensor& v, const SdpaOptions& opt) {
  const char* op = "scaled_dot_product_attention";
  AG_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ShapeError, op,
           ": q, k, v must be at least 2-D (..., L, d); got ", q.shape(), ", ", k.shape(), ", ", v.shape());
  const int64_t d = q.shape()[q.dim() - 1];
  AG_CHECK(k.shape()[k.dim() - 1] == d, ShapeError, op, ": query shape ", q.shape(), " and key shape ",
           k.shape(), " differ in the last dim (", d, " != ", k.shape()[k.dim() - 1], ")");
  AG_CHECK(k.shape()[k.dim() - 2] == v.shape()[v.dim() - 2], ShapeError, op, ": key shape ", k.shape(),
           " and value shape ", v.shape(), " differ in length S (", k.shape()[k.dim() - 2], " != ",
           v.shape()[v.dim() - 2], ")");
  const int64_t L = q.shape()[q.dim() - 2], S = k.shape()[k.dim() - 2];
  const double scale = opt.scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));

  Tensor scores = matmul(q, transpose(k, -2, -1)) * scale;  // (..., L, S)
  const double ninf = -std::numeric_limits<double>::infinity();
  if (opt.attn_mask.defined()) {
    const Tensor& m = opt.attn_mask;
    Shape b;
    try {
      b = broadcast_shapes(m.shape(), scores.shape(), op);
    } catch (const ShapeError&) {
      b = Shape{};
    }
    AG_CHECK(b == scores.shape(), ShapeError, op, ": attn_mask shape ", m.shape(),
             " cannot be broadcast to the scores' shape ", scores.shape(), " (query ", q.shape(),
             ", key ", k.shape(), ")");
    if (m.dtype() == DType::b8) {
      scores = masked_fill(scores, logical_not(m), ninf);
    } else {
      AG_CHECK(m.dtype() == scores.dtype(), DTypeError, op, ": float attn_mask has dtype ", m.dtype(),
               ", the scores have ", scores.dtype());
      scores = scores + m;
    }
  }
  if (opt.causal) scores = masked_fill(scores, logical_not(causal_mask(L, S)), ninf);
  Tensor weights = softmax(scores, -1);
  Tensor attn = opt.dropout_p > 0 ? dropout(weights, opt.dropout_p, true, opt.generator) : weights;
  Tensor out = matmul(attn, v);  // (..., L, dv)
  return {out, opt.need_weights ? weights : Tensor{}};
}

}  // namespace ag
