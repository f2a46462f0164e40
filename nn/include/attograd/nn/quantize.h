#pragma once
/// \file
/// torchao's quantize_ for attograd: swaps the weights of selected nn::Linear layers for
/// a quantized form (weight-only int8 per output row or 4-bit per group, or dynamic int8:
/// int8 weights and activations quantized per row at run time), in place, for inference. Formats, layout, error bounds and the state-dict names: nn/QUANTIZATION.md.
///
///   ag::quant::quantize_(*model, ag::quant::int8_weight_only());
///   ag::quant::quantize_(*model, ag::quant::int4_weight_only(32),
///                        [](nn::Module&, const std::string& fqn) { return fqn != "head"; });
#include <cstdint>
#include <functional>
#include <string>

#include "attograd/nn/layers.h"
#include "attograd/nn/module.h"
#include "attograd/quant.h"

namespace ag::quant {

/// What quantize_ does to each selected Linear (torchao's AOBaseConfig).
struct QuantConfig {
  Format format = Format::int8_weight_only;  ///< int8 or int4 weights, or dynamic int8
  int64_t group_size = 0;                    ///< int4: 32 or 64; 0 for int8
};

/// int8 weights, one f32 scale per output row (torchao's int8_weight_only / Int8WeightOnlyConfig).
QuantConfig int8_weight_only();
/// 4-bit weights, one f32 scale per group of `group_size` (32 or 64) along in_features
/// (torchao's int4_weight_only; symmetric here, no zero point).
QuantConfig int4_weight_only(int64_t group_size = 32);
/// int8 weights (one f32 scale per output row, stored as int8_weight_only's) and int8
/// activations, quantized per row at run time (symmetric, max|row| / 127), multiplied in
/// int8 x int8 -> int32 (torchao's int8_dynamic_activation_int8_weight; PyTorch's
/// quantize_dynamic with qint8, per row instead of per tensor: nn/QUANTIZATION.md).
QuantConfig int8_dynamic_activation_int8_weight();

/// A new quantized nn::Linear built from `linear` (left as it is): the same options, its
/// bias copied, its weight quantized per `config`. There is no separate quantized module
/// type: a quantized layer is an nn::Linear whose weight is quantized (nn/QUANTIZATION.md).
nn::Linear quantized_linear(const nn::Linear& linear, const QuantConfig& config);

/// filter_fn(module, fully-qualified name) -> whether to quantize it (torchao's filter_fn);
/// called for the nn::Linear modules only.
using FilterFn = std::function<bool(nn::Module&, const std::string&)>;

/// Quantizes, in place, every nn::Linear in `model` (itself included, name "") that
/// filter_fn selects (all of them without one). Each keeps its type, so the parents'
/// typed members keep working; forward then runs weight_only_linear (or
/// int8_dynamic_linear) and backward through it throws. Linears already quantized are
/// left alone. With int4, an in_features the group size does not divide gets a
/// zero-padded last group (attograd/quant.h). Returns how many Linears were quantized.
int64_t quantize_(nn::Module& model, const QuantConfig& config, const FilterFn& filter_fn = {});
/// The same on a module holder: quantize_(model, int8_weight_only()).
template <class Impl>
int64_t quantize_(const nn::ModuleHolder<Impl>& model, const QuantConfig& config, const FilterFn& filter_fn = {}) {
  return quantize_(*model.ptr(), config, filter_fn);
}

}  // namespace ag::quant
