// Whole tensor-parallel Transformer stacks, built from single-process ones, and the
// gradient-norm clipping that knows which parameters are sharded.
#include <cmath>
#include <unordered_set>

#include "attograd/autograd.h"
#include "attograd/dist.h"
#include "attograd/nn/tensor_parallel.h"
#include "tensor_parallel_util.h"
#include "transformer_util.h"

namespace ag::nn {

TensorParallelTransformerEncoderImpl::TensorParallelTransformerEncoderImpl(const TransformerEncoderImpl& full)
    : TensorParallelModule("TensorParallelTransformerEncoder") {
  layers = register_module("layers", ModuleList());
  for (std::size_t i = 0; i < full.layers->size(); ++i)
    layers->push_back(TensorParallelTransformerEncoderLayer(*full.layers->at<TransformerEncoderLayerImpl>(i)));
  if (!full.norm.is_empty()) norm = register_module("norm", detail::replica(*full.norm));
  train(full.is_training());
}

Tensor TensorParallelTransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                                     const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TensorParallelTransformerEncoderLayerImpl>(i)->forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm(x);
}

TensorParallelTransformerDecoderImpl::TensorParallelTransformerDecoderImpl(const TransformerDecoderImpl& full)
    : TensorParallelModule("TensorParallelTransformerDecoder") {
  layers = register_module("layers", ModuleList());
  for (std::size_t i = 0; i < full.layers->size(); ++i)
    layers->push_back(TensorParallelTransformerDecoderLayer(*full.layers->at<TransformerDecoderLayerImpl>(i)));
  if (!full.norm.is_empty()) norm = register_module("norm", detail::replica(*full.norm));
  train(full.is_training());
}

Tensor TensorParallelTransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                                     const TransformerMasks& masks) {
  Tensor x = tgt;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TensorParallelTransformerDecoderLayerImpl>(i)->forward(x, memory, masks);
  return norm.is_empty() ? x : norm(x);
}

TensorParallelTransformerImpl::TensorParallelTransformerImpl(const TransformerImpl& full)
    : TensorParallelModule("TensorParallelTransformer"), options(full.options) {
  encoder = register_module("encoder", TensorParallelTransformerEncoder(*full.encoder));
  decoder = register_module("decoder", TensorParallelTransformerDecoder(*full.decoder));
  train(full.is_training());
}

Tensor TensorParallelTransformerImpl::encode(const Tensor& src, const Tensor& src_mask,
                                             const Tensor& src_key_padding_mask) {
  return encoder(src, src_mask, src_key_padding_mask);
}

Tensor TensorParallelTransformerImpl::decode(const Tensor& tgt, const Tensor& memory, const TransformerMasks& masks) {
  return decoder(tgt, memory, masks);
}

Tensor TensorParallelTransformerImpl::forward(const Tensor& src, const Tensor& tgt, const TransformerMasks& masks) {
  detail::check_transformer_inputs("TensorParallelTransformer", src, tgt, options.d_model(), options.batch_first());
  return decode(tgt, encode(src, masks.src_mask, detail::src_key_padding("TensorParallelTransformer", masks)), masks);
}

double clip_grad_norm_tensor_parallel_(const Module& model, double max_norm) {
  AG_CHECK(max_norm >= 0 && std::isfinite(max_norm), ValueError, "clip_grad_norm_tensor_parallel_: max_norm ", max_norm,
           " must be finite and >= 0");
  std::unordered_set<const TensorImpl*> sharded;
  for (const auto& [name, m] : model.named_modules()) {
    (void)name;
    if (auto* tp = dynamic_cast<const TensorParallelModule*>(m.get()))
      for (const auto& [pname, p] : tp->named_parameters(/*recurse=*/false))
        if (tp->shard_spec(pname)) sharded.insert(p.impl());
  }
  NoGradGuard no_grad;
  double sums[2] = {0.0, 0.0};  // sharded (summed over ranks), replicated (counted once)
  std::vector<Tensor> grads;
  for (const Tensor& p : model.parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    const double s = sum(square(g.to(DType::f64))).item<double>();
    sums[sharded.count(p.impl()) ? 0 : 1] += s;
  }
  Tensor shard_sum = Tensor::from_vector(std::vector<double>{sums[0]});
  dist::all_reduce(shard_sum);
  const double norm = std::sqrt(shard_sum.item<double>() + sums[1]);
  const double coef = max_norm / (norm + 1e-6);  // torch.nn.utils.clip_grad_norm_'s rule
  if (coef < 1.0)
    for (Tensor& g : grads) g.mul_(coef);
  return norm;
}

}  // namespace ag::nn
