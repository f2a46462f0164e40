#pragma once
/// \file
/// LLaMA's building blocks: RMSNorm, rotary position embedding with cached tables, and
/// the SwiGLU feed-forward. Names follow PyTorch 2.4 (RMSNorm) and Meta's LLaMA code
/// (SwiGLU's w1, w2, w3), so state dicts move between the two.
/// Shape legend: B batch, h heads, L positions, d head dim, E model dim (dim), H hidden dim.
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "attograd/nn/functional.h"
#include "attograd/nn/layers.h"
#include "attograd/nn/module.h"
#include "attograd/ops/norm.h"
#include "attograd/ops/position.h"

namespace ag::nn {

// ---- RMSNorm: y = x * rsqrt(mean(x^2) + eps) * weight over normalized_shape ----
/// Example: nn::RMSNorm norm(nn::RMSNormOptions({512}).eps(1e-6));
struct RMSNormOptions {
  /// The required options; the others keep their PyTorch defaults.
  RMSNormOptions(std::vector<int64_t> shape) : normalized_shape_(std::move(shape)) {}
  /// The trailing dims normalized over (and the weight shape).
  AG_ARG(std::vector<int64_t>, normalized_shape);
  AG_ARG(std::optional<double>, eps);  ///< none: the machine epsilon of the input's dtype
  /// Learn a per-element weight (and bias, where the norm has one).
  AG_ARG(bool, elementwise_affine) = true;
};

/// x * rsqrt(mean(x^2) + eps) * weight over normalized_shape; no mean subtraction, no bias.
class RMSNormImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit RMSNormImpl(const RMSNormOptions& options);
  void reset_parameters();          ///< weight 1
  Tensor forward(const Tensor& x);  ///< (..., *normalized_shape) -> same
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  RMSNormOptions options;
  Tensor weight;  ///< normalized_shape, or undefined
};
/// The holder of RMSNormImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(RMSNorm);

// ---- RotaryEmbedding: cos/sin tables cached for positions [0, cache length) ----
/// Example: nn::RotaryEmbedding rope(nn::RotaryEmbeddingOptions(64).max_position(2048));
///          q = rope(q, offset); k = rope(k, offset);   // (B, h, L, d)
/// The tables are built for max_position positions in the default float dtype at
/// construction, and rebuilt (for max(max_position, offset + L) positions) when a call
/// needs more positions or another dtype than the cache holds. They are neither
/// parameters nor buffers, so state_dict() leaves them out (HF's persistent=False).
struct RotaryEmbeddingOptions {
  /// The required options; the others keep their PyTorch defaults.
  RotaryEmbeddingOptions(int64_t head_dim) : head_dim_(head_dim) {}
  AG_ARG(int64_t, head_dim);             ///< d, even
  AG_ARG(double, base) = 10000.0;        ///< theta
  AG_ARG(int64_t, max_position) = 2048;  ///< positions cached up front
};

/// Rotary position embedding (RoPE) for (B, h, L, d) queries or keys, with cached cos/sin tables.
class RotaryEmbeddingImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit RotaryEmbeddingImpl(const RotaryEmbeddingOptions& options);
  /// x (..., L, d), e.g. (B, h, L, d); positions offset .. offset + L - 1.
  Tensor forward(const Tensor& x, int64_t offset = 0);
  /// (cos, sin), each (length, d), for positions offset .. offset + length - 1: views of
  /// the cache (rebuilt first if needed). For the (B, L, h, d) layout call
  /// rotary_embedding(x, cos.unsqueeze(-2), sin.unsqueeze(-2)).
  std::pair<Tensor, Tensor> cos_sin(int64_t length, int64_t offset = 0, std::optional<DType> dtype = std::nullopt);
  /// Positions the cos/sin tables cover now.
  int64_t cached_length() const { return cached_length_; }
  /// The dtype of the cached tables.
  DType cached_dtype() const { return cached_dtype_; }
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  RotaryEmbeddingOptions options;

 private:
  void build(int64_t length, DType dtype);
  Tensor cos_, sin_;  ///< (cached_length, d)
  int64_t cached_length_ = 0;
  DType cached_dtype_ = DType::f32;
};
/// The holder of RotaryEmbeddingImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(RotaryEmbedding);

// ---- SwiGLU feed-forward (LLaMA): w2(silu(w1(x)) * w3(x)) ----
/// Example: nn::SwiGLU ffn(nn::SwiGLUOptions(512, 1376));   // x (..., E) -> (..., E)
struct SwiGLUOptions {
  /// The required options; the others keep their PyTorch defaults.
  SwiGLUOptions(int64_t dim, int64_t hidden_dim) : dim_(dim), hidden_dim_(hidden_dim) {}
  AG_ARG(int64_t, dim);         ///< E
  AG_ARG(int64_t, hidden_dim);  ///< H
  AG_ARG(bool, bias) = false;   ///< LLaMA's projections have none
};

/// LLaMA's feed-forward w2(silu(w1 x) * w3 x): (..., E) -> (..., E).
class SwiGLUImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit SwiGLUImpl(const SwiGLUOptions& options);
  /// Shorthand for the options constructor.
  SwiGLUImpl(int64_t dim, int64_t hidden_dim) : SwiGLUImpl(SwiGLUOptions(dim, hidden_dim)) {}
  Tensor forward(const Tensor& x);  ///< (..., E) -> (..., E)
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  SwiGLUOptions options;
  Linear w1{nullptr};  ///< E -> H, the gate (through silu)
  Linear w2{nullptr};  ///< H -> E, the output projection
  Linear w3{nullptr};  ///< E -> H, the value multiplied by the gate
};
/// The holder of SwiGLUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(SwiGLU);

}  // namespace ag::nn
