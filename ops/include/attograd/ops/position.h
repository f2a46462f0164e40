#pragma once
/// \file
/// Rotary position embedding (RoPE; Su et al. 2021) (ops/position.cpp), in the layout of
/// Hugging Face's LLaMA ("rotate_half"): the head dim d is split into halves x = [x1, x2],
/// and pair (x1[i], x2[i]) is rotated by the angle pos * inv_freq[i],
/// inv_freq[i] = base^(-2i/d), i < d/2. With cos/sin tables whose two halves repeat the same d/2 angles,
///   out = x * cos + rotate_half(x) * sin,   rotate_half([x1, x2]) = [-x2, x1].
/// Because a rotation by pos_q applied to q and by pos_k applied to k leaves
/// q . k depending on pos_q - pos_k only, attention scores see relative positions.
/// Shape legend: B batch, h heads, L positions (query or key length), d head dim.
#include <cstdint>
#include <optional>
#include <utility>

#include "attograd/tensor.h"

namespace ag {

/// (cos, sin), each (L, d): row p holds cos / sin of (offset + p) * inv_freq, the d/2
/// frequencies written twice (columns i and i + d/2 share frequency i), as HF's
/// LlamaRotaryEmbedding builds them. The angles are computed in double and the tables
/// rounded to `dtype` (the default float dtype when not given; bf16 and f16 too, for a
/// bf16 q and k under autocast); HF computes them in f32 and casts to q's dtype.
/// offset: the position of the first row (cached decoding: the number of tokens
/// already in the cache). No graph.
std::pair<Tensor, Tensor> rotary_cos_sin(int64_t length, int64_t head_dim, double base = 10000.0, int64_t offset = 0,
                                         std::optional<DType> dtype = std::nullopt);

/// x (..., L, d), e.g. q or k as (B, h, L, d); cos, sin (L, d) from rotary_cos_sin (or any
/// pair of equal shapes broadcastable to x's without enlarging it, ending in d: for the
/// (B, L, h, d) layout pass cos.unsqueeze(-2), (L, 1, d)). Returns x's shape and dtype;
/// cos and sin must have x's dtype, and d must be even.
/// One fused pass over x. Backward (the rotation's transpose): dx = g * cos +
/// rotate_half^T(g * sin), rotate_half^T([y1, y2]) = [y2, -y1], which is this same op,
/// rotary_embedding(g, cos, -[sin2, sin1]) (so it is fused and differentiable again);
/// dcos = sum_to(g * x), dsin = sum_to(g * rotate_half(x)).
Tensor rotary_embedding(const Tensor& x, const Tensor& cos, const Tensor& sin);

}  // namespace ag
