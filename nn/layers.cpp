#include "attograd/nn/layers.h"

#include <cmath>

#include "attograd/detail/error_context.h"
#include "attograd/nn/init.h"

namespace ag::nn {

// ---- Linear ----
LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) {
  AG_CHECK(o.in_features() > 0 && o.out_features() > 0, ValueError, "Linear: features must be positive, got (",
           o.in_features(), ", ", o.out_features(), ")");
  // Registered by address, so that tying by assignment (head->weight = wte->weight) works.
  weight = empty({o.out_features(), o.in_features()});
  register_parameter("weight", &weight);
  if (o.bias()) {
    bias = empty({o.out_features()});
    register_parameter("bias", &bias);
  }
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  AG_CHECK(!is_quantized(), ValueError, "Linear: reset_parameters on a quantized Linear (its f32 weight is gone)");
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) {
  if (!is_quantized()) return linear(x, weight, bias);
  return qweight.format == quant::Format::int8_dynamic_activation_int8_weight
             ? quant::int8_dynamic_linear(x, qweight, bias, "Linear")
             : quant::weight_only_linear(x, qweight, bias, "Linear");
}

void LinearImpl::set_quantized_weight(quant::QuantizedWeight q) {
  quant::validate(q, "Linear.set_quantized_weight");
  AG_CHECK(q.defined() && q.out_features() == options.out_features() && q.in_features() == options.in_features(),
           ShapeError, "Linear.set_quantized_weight: quantized weight (", q.defined() ? q.out_features() : 0, ", ",
           q.defined() ? q.in_features() : 0, ") does not match Linear(in_features=", options.in_features(),
           ", out_features=", options.out_features(), ")");
  const bool first = !is_quantized();
  AG_CHECK(first || (q.format == qweight.format && q.group_size == qweight.group_size), ValueError,
           "Linear.set_quantized_weight: already quantized as ", quant::to_string(qweight.format), " (group_size ",
           qweight.group_size, "), cannot switch to ", quant::to_string(q.format), " (group_size ", q.group_size, ")");
  qweight = std::move(q);
  if (!first) return;  // the buffers are registered by address: they now read the new tensors
  unregister_parameter("weight");
  weight = Tensor{};
  register_buffer(qweight.format == quant::Format::int4_weight_only ? "weight_int4" : "weight_int8", &qweight.data);
  register_buffer("weight_scale", &qweight.scale);
  if (bias.defined()) {  // inference only: no parameter left for an optimizer to find
    unregister_parameter("bias");
    bias = bias.detach();
    register_buffer("bias", &bias);
  }
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false");
  if (is_quantized()) {
    os << ", quantized=" << quant::to_string(qweight.format);
    if (qweight.group_size) os << ", group_size=" << qweight.group_size;
  }
  os << ')';
}

// ---- Embedding ----
EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  AG_CHECK(o.num_embeddings() > 0 && o.embedding_dim() > 0, ValueError, "Embedding: sizes must be positive, got (",
           o.num_embeddings(), ", ", o.embedding_dim(), ")");
  if (o.padding_idx()) {
    int64_t p = *o.padding_idx();
    AG_CHECK(p >= -o.num_embeddings() && p < o.num_embeddings(), IndexError, "Embedding: padding_idx ", p,
             " is out of range for ", o.num_embeddings(), " embeddings");
    if (p < 0) options.padding_idx(p + o.num_embeddings());
  }
  // sizes from the caller: an allocation error says Embedding, not empty
  weight = ag::detail::in_op("Embedding", [&] { return empty({o.num_embeddings(), o.embedding_dim()}); });
  register_parameter("weight", &weight);  // by address: tying by assignment works
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard g;
    weight.select(0, *options.padding_idx()).fill_(0.0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& ids) { return embedding(ids, weight, options.padding_idx()); }

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) os << ", padding_idx=" << *options.padding_idx();
  os << ')';
}

// ---- LayerNorm ----
LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : Module("LayerNorm"), options(o) {
  AG_CHECK(!o.normalized_shape().empty(), ValueError, "LayerNorm: normalized_shape is empty");
  Shape s(o.normalized_shape());
  if (o.elementwise_affine()) {
    weight = empty(s);
    register_parameter("weight", &weight);
    if (o.bias()) {
      bias = empty(s);
      register_parameter("bias", &bias);
    }
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& x) {
  return layer_norm(x, Shape(options.normalized_shape()), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(" << Shape(options.normalized_shape()) << ", eps=" << options.eps()
     << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ')';
}

// ---- Dropout ----
DropoutImpl::DropoutImpl(const DropoutOptions& o) : Module("Dropout"), options(o) {
  AG_CHECK(o.p() >= 0 && o.p() <= 1, ValueError, "Dropout: p must be in [0, 1], got ", o.p());
}

Tensor DropoutImpl::forward(const Tensor& x) { return dropout(x, options.p(), is_training(), generator); }

void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << options.p() << ')'; }

void GELUImpl::pretty_print(std::ostream& os) const {
  os << "GELU(approximate=" << (options.approximate() == GeluApprox::tanh ? "tanh" : "none") << ')';
}

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ')';
}

void UnflattenImpl::pretty_print(std::ostream& os) const {
  os << "Unflatten(dim=" << options.dim() << ", unflattened_size=(";
  for (std::size_t i = 0; i < options.sizes().size(); ++i) os << (i ? ", " : "") << options.sizes()[i];
  os << "))";
}

}  // namespace ag::nn
