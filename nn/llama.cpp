// LLaMA's building blocks: RMSNorm, RotaryEmbedding (cached tables), SwiGLU.
#include "attograd/nn/llama.h"

#include <algorithm>

#include "attograd/nn/init.h"
#include "attograd/ops/activation.h"

namespace ag::nn {

// ---- RMSNorm ----
RMSNormImpl::RMSNormImpl(const RMSNormOptions& o) : Module("RMSNorm"), options(o) {
  AG_CHECK(!o.normalized_shape().empty(), ValueError, "RMSNorm: normalized_shape is empty");
  for (int64_t s : o.normalized_shape())
    AG_CHECK(s > 0, ValueError, "RMSNorm: normalized_shape must be positive, got ", Shape(o.normalized_shape()));
  if (o.eps()) AG_CHECK(*o.eps() >= 0, ValueError, "RMSNorm: eps must be >= 0, got ", *o.eps());
  if (o.elementwise_affine()) weight = register_parameter("weight", empty(Shape(o.normalized_shape())));
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& x) {
  return rms_norm(x, Shape(options.normalized_shape()), weight, options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& os) const {
  os << "RMSNorm(" << Shape(options.normalized_shape()) << ", eps=";
  if (options.eps())
    os << *options.eps();
  else
    os << "None";
  os << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ')';
}

// ---- RotaryEmbedding ----
RotaryEmbeddingImpl::RotaryEmbeddingImpl(const RotaryEmbeddingOptions& o) : Module("RotaryEmbedding"), options(o) {
  AG_CHECK(o.head_dim() > 0 && o.head_dim() % 2 == 0, ValueError,
           "RotaryEmbedding: head_dim must be positive and even, got ", o.head_dim());
  AG_CHECK(o.max_position() >= 0, ValueError, "RotaryEmbedding: max_position must be >= 0, got ", o.max_position());
  build(o.max_position(), get_default_dtype());  // also checks base
}

void RotaryEmbeddingImpl::build(int64_t length, DType dtype) {
  std::tie(cos_, sin_) = rotary_cos_sin(length, options.head_dim(), options.base(), 0, dtype);
  cached_length_ = length;
  cached_dtype_ = dtype;
}

std::pair<Tensor, Tensor> RotaryEmbeddingImpl::cos_sin(int64_t length, int64_t offset, std::optional<DType> dtype) {
  AG_CHECK(length >= 0 && offset >= 0, ValueError, "RotaryEmbedding: length and offset must be >= 0, got length ",
           length, " and offset ", offset);
  const DType dt = dtype ? *dtype : get_default_dtype();
  if (offset + length > cached_length_ || dt != cached_dtype_)
    build(std::max({offset + length, options.max_position(), dt == cached_dtype_ ? cached_length_ : int64_t{0}}), dt);
  return {narrow(cos_, 0, offset, length), narrow(sin_, 0, offset, length)};
}

Tensor RotaryEmbeddingImpl::forward(const Tensor& x, int64_t offset) {
  AG_CHECK(x.dim() >= 2 && x.shape()[x.dim() - 1] == options.head_dim(), ShapeError,
           "RotaryEmbedding: expected x (..., L, ", options.head_dim(), "), got ", x.shape());
  auto [c, s] = cos_sin(x.shape()[x.dim() - 2], offset, x.dtype());
  return rotary_embedding(x, c, s);
}

void RotaryEmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "RotaryEmbedding(head_dim=" << options.head_dim() << ", base=" << options.base()
     << ", max_position=" << options.max_position() << ')';
}

// ---- SwiGLU ----
SwiGLUImpl::SwiGLUImpl(const SwiGLUOptions& o) : Module("SwiGLU"), options(o) {
  AG_CHECK(o.dim() > 0 && o.hidden_dim() > 0, ValueError, "SwiGLU: dim and hidden_dim must be positive, got (", o.dim(),
           ", ", o.hidden_dim(), ")");
  w1 = register_module("w1", Linear(LinearOptions(o.dim(), o.hidden_dim()).bias(o.bias())));
  w2 = register_module("w2", Linear(LinearOptions(o.hidden_dim(), o.dim()).bias(o.bias())));
  w3 = register_module("w3", Linear(LinearOptions(o.dim(), o.hidden_dim()).bias(o.bias())));
}

Tensor SwiGLUImpl::forward(const Tensor& x) {
  AG_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] == options.dim(), ShapeError, "SwiGLU: expected x (..., ",
           options.dim(), "), got ", x.shape());
  return w2(silu(w1(x)) * w3(x));  // (..., H) gate * value -> (..., E)
}

void SwiGLUImpl::pretty_print(std::ostream& os) const {
  os << "SwiGLU(dim=" << options.dim() << ", hidden_dim=" << options.hidden_dim()
     << ", bias=" << (options.bias() ? "true" : "false") << ')';
}

}  // namespace ag::nn
