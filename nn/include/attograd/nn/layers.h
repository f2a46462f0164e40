#pragma once
// Basic layers. Each XImpl registers its parameters under PyTorch's names in reset().
#include <optional>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/nn_ops.h"

namespace ag::nn {

// ---- Linear: y = x W^T + b, W (out, in) ----
struct LinearOptions {
  LinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  AG_ARG(int64_t, in_features);
  AG_ARG(int64_t, out_features);
  AG_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
 public:
  explicit LinearImpl(const LinearOptions& options);
  LinearImpl(int64_t in, int64_t out) : LinearImpl(LinearOptions(in, out)) {}
  void reset_parameters();  // PyTorch's default: U(-1/sqrt(in), 1/sqrt(in)) for both
  Tensor forward(const Tensor& x);  // (..., in) -> (..., out)
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out) or undefined
};
AG_MODULE(Linear);

// ---- Embedding: ids (...) -> (..., dim) ----
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num, int64_t dim) : num_embeddings_(num), embedding_dim_(dim) {}
  AG_ARG(int64_t, num_embeddings);
  AG_ARG(int64_t, embedding_dim);
  AG_ARG(std::optional<int64_t>, padding_idx);  // that row starts at zero and gets no gradient
};

class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  EmbeddingImpl(int64_t num, int64_t dim) : EmbeddingImpl(EmbeddingOptions(num, dim)) {}
  void reset_parameters();  // N(0, 1), padding row zeroed
  Tensor forward(const Tensor& ids);
  void pretty_print(std::ostream& os) const override;

  EmbeddingOptions options;
  Tensor weight;  // (num, dim)
};
AG_MODULE(Embedding);

// ---- LayerNorm over the trailing normalized_shape ----
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> shape) : normalized_shape_(std::move(shape)) {}
  AG_ARG(std::vector<int64_t>, normalized_shape);
  AG_ARG(double, eps) = 1e-5;
  AG_ARG(bool, elementwise_affine) = true;
  AG_ARG(bool, bias) = true;
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();  // weight 1, bias 0
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;

  LayerNormOptions options;
  Tensor weight, bias;  // normalized_shape, or undefined
};
AG_MODULE(LayerNorm);

// ---- Dropout: active in training mode only ----
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  AG_ARG(double, p);
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
  Generator* generator = nullptr;  // the default generator when null
};
AG_MODULE(Dropout);

// ---- activations ----
class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& x) { return relu(x); }
};
AG_MODULE(ReLU);

struct GELUOptions {
  GELUOptions(GeluApprox approximate = GeluApprox::none) : approximate_(approximate) {}
  AG_ARG(GeluApprox, approximate);
};

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : Module("GELU"), options(options) {}
  Tensor forward(const Tensor& x) { return gelu(x, options.approximate()); }
  void pretty_print(std::ostream& os) const override;
  GELUOptions options;
};
AG_MODULE(GELU);

}  // namespace ag::nn
