#pragma once
/// \file
/// Basic layers. Each XImpl registers its parameters under PyTorch's names in reset().
#include <optional>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/ops.h"
#include "attograd/quant.h"

namespace ag::nn {

// ---- Linear: y = x W^T + b, W (out, in) ----
/// Options of nn::Linear: required ones in the constructor, the rest chainable setters.
struct LinearOptions {
  /// The required options; the others keep their PyTorch defaults.
  LinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  /// The input width `in` (the last dim of the input).
  AG_ARG(int64_t, in_features);
  /// The output width `out`.
  AG_ARG(int64_t, out_features);
  /// Learn an additive bias (out).
  AG_ARG(bool, bias) = true;
};

/// y = x W^T + b: (..., in) -> (..., out); weight (out, in) as in PyTorch.
class LinearImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit LinearImpl(const LinearOptions& options);
  /// Shorthand for the options constructor.
  LinearImpl(int64_t in, int64_t out) : LinearImpl(LinearOptions(in, out)) {}
  void reset_parameters();          ///< PyTorch's default: U(-1/sqrt(in), 1/sqrt(in)) for both
  Tensor forward(const Tensor& x);  ///< (..., in) -> (..., out)
  void pretty_print(std::ostream& os) const override;

  /// Inference only: swaps the f32 weight for `q` (what ag::quant::quantize_ does to the
  /// Linears it selects, as torchao swaps the weight of an nn.Linear, so parents' typed
  /// `Linear` members keep working). `weight` becomes undefined; the state dict then holds
  /// "weight_int8" (i8) or "weight_int4" (u8) and "weight_scale" (f32) buffers, and the
  /// bias as a buffer (nn/QUANTIZATION.md). ShapeError when q's shape is not (out, in).
  void set_quantized_weight(quant::QuantizedWeight q);
  /// Whether set_quantized_weight was called (forward then runs quant::weight_only_linear,
  /// or quant::int8_dynamic_linear for that format).
  bool is_quantized() const { return qweight.defined(); }

  /// The options it was built with (pretty_print shows them).
  LinearOptions options;
  Tensor weight;                   ///< (out, in); undefined once quantized
  Tensor bias;                     ///< (out) or undefined
  quant::QuantizedWeight qweight;  ///< the quantized weight, or undefined
};
/// The holder of LinearImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Linear);

// ---- Embedding: ids (...) -> (..., dim) ----
/// Options of nn::Embedding: required ones in the constructor, the rest chainable setters.
struct EmbeddingOptions {
  /// The required options; the others keep their PyTorch defaults.
  EmbeddingOptions(int64_t num, int64_t dim) : num_embeddings_(num), embedding_dim_(dim) {}
  /// V, the number of rows (ids in [0, V)).
  AG_ARG(int64_t, num_embeddings);
  /// E, the width of each row.
  AG_ARG(int64_t, embedding_dim);
  AG_ARG(std::optional<int64_t>, padding_idx);  ///< that row starts at zero and gets no gradient
};

/// A lookup table: ids (...) i64 -> (..., embedding_dim), weight (V, E).
class EmbeddingImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  /// Shorthand for the options constructor.
  EmbeddingImpl(int64_t num, int64_t dim) : EmbeddingImpl(EmbeddingOptions(num, dim)) {}
  void reset_parameters();  ///< N(0, 1), padding row zeroed
  /// ids (...) i64 -> (..., E); IndexError for an id outside [0, V).
  Tensor forward(const Tensor& ids);
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  EmbeddingOptions options;
  Tensor weight;  ///< (num, dim)
};
/// The holder of EmbeddingImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Embedding);

// ---- LayerNorm over the trailing normalized_shape ----
/// Options of nn::LayerNorm: required ones in the constructor, the rest chainable setters.
struct LayerNormOptions {
  /// The required options; the others keep their PyTorch defaults.
  LayerNormOptions(std::vector<int64_t> shape) : normalized_shape_(std::move(shape)) {}
  /// The trailing dims normalized over (and the weight shape).
  AG_ARG(std::vector<int64_t>, normalized_shape);
  /// added to the variance before the square root
  AG_ARG(double, eps) = 1e-5;
  /// Learn a per-element weight (and bias, where the norm has one).
  AG_ARG(bool, elementwise_affine) = true;
  /// learn a bias as well as the weight (with elementwise_affine)
  AG_ARG(bool, bias) = true;
};

/// Normalizes over the trailing normalized_shape dims, then weight and bias; same shape.
class LayerNormImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();  ///< weight 1, bias 0
  /// (..., *normalized_shape) -> same shape.
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;

  /// The options it was built with (pretty_print shows them).
  LayerNormOptions options;
  Tensor weight;  ///< (normalized_shape) scale, or undefined without elementwise_affine
  Tensor bias;    ///< (normalized_shape) shift, or undefined
};
/// The holder of LayerNormImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(LayerNorm);

// ---- Dropout: active in training mode only ----
/// Options of nn::Dropout: required ones in the constructor, the rest chainable setters.
struct DropoutOptions {
  /// The required options; the others keep their PyTorch defaults.
  DropoutOptions(double p = 0.5) : p_(p) {}
  /// The probability of zeroing an element in training (survivors scale by 1/(1-p)).
  AG_ARG(double, p);
};

/// Zeroes elements with probability p in training and scales the rest by 1/(1-p); identity in eval.
class DropoutImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit DropoutImpl(const DropoutOptions& options = {});
  /// Same shape; x itself in eval or with p == 0.
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  DropoutOptions options;
  Generator* generator = nullptr;  ///< the default generator when null
};
/// The holder of DropoutImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Dropout);

// ---- activations ----
/// max(x, 0); any shape -> same shape.
class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  /// Same shape as x: ag::relu.
  Tensor forward(const Tensor& x) { return relu(x); }
};
/// The holder of ReLUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ReLU);

/// Options of nn::GELU: required ones in the constructor, the rest chainable setters.
struct GELUOptions {
  /// The required options; the others keep their PyTorch defaults.
  GELUOptions(GeluApprox approximate = GeluApprox::none) : approximate_(approximate) {}
  /// GeluApprox::none (exact, with erf) or GeluApprox::tanh.
  AG_ARG(GeluApprox, approximate);
};

/// x * Phi(x) (exact or tanh form); any shape -> same shape.
class GELUImpl : public Module {
 public:
  /// Builds the module from its options; parameters, if any, start as in PyTorch.
  explicit GELUImpl(const GELUOptions& options = {}) : Module("GELU"), options(options) {}
  /// Same shape as x: ag::gelu with these options.
  Tensor forward(const Tensor& x) { return gelu(x, options.approximate()); }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  GELUOptions options;
};
/// The holder of GELUImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(GELU);

// ---- shape modules ----
/// Returns its input: a placeholder (PyTorch's nn.Identity); any shape -> same shape.
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  /// x itself.
  Tensor forward(const Tensor& x) { return x; }
};
/// The holder of IdentityImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Identity);

/// Options of nn::Flatten (PyTorch's defaults: keep the batch dim).
struct FlattenOptions {
  /// First dim merged.
  AG_ARG(int64_t, start_dim) = 1;
  /// Last dim merged (negative counts from the end).
  AG_ARG(int64_t, end_dim) = -1;
};

/// Merges dims start_dim..end_dim: (B, C, H, W) -> (B, C*H*W) by default.
class FlattenImpl : public Module {
 public:
  /// Builds the module from its options.
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("Flatten"), options(options) {}
  /// ag::flatten(x, start_dim, end_dim).
  Tensor forward(const Tensor& x) { return flatten(x, options.start_dim(), options.end_dim()); }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  FlattenOptions options;
};
/// The holder of FlattenImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Flatten);

/// Options of nn::Unflatten: the dim to split and the sizes it becomes.
struct UnflattenOptions {
  /// The required options (one size may be -1, inferred).
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  /// The dim split (negative counts from the end).
  AG_ARG(int64_t, dim);
  /// Its new sizes, whose product is x.size(dim).
  AG_ARG(std::vector<int64_t>, sizes);
};

/// Splits one dim into several: (B, 12) -> (B, 3, 4) with dim 1, sizes {3, 4}.
class UnflattenImpl : public Module {
 public:
  /// Builds the module from its options.
  explicit UnflattenImpl(const UnflattenOptions& options) : Module("Unflatten"), options(options) {}
  /// Shorthand for the options constructor.
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  /// ag::unflatten(x, dim, sizes).
  Tensor forward(const Tensor& x) { return unflatten(x, options.dim(), options.sizes()); }
  void pretty_print(std::ostream& os) const override;
  /// The options it was built with (pretty_print shows them).
  UnflattenOptions options;
};
/// The holder of UnflattenImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Unflatten);

}  // namespace ag::nn
