#pragma once
/// \file
/// Quantized weights and their linear product, for inference (torchao's int8_weight_only,
/// int4_weight_only and int8_dynamic_activation_int8_weight). Formats, layout and error bounds:
/// nn/QUANTIZATION.md. The modules and ag::quant::quantize_ are in attograd/nn/quantize.h.
///
/// Not op-table ops: they are not differentiable (weight_only_linear records a node whose
/// backward throws: inference only), so the functions returning a Tensor are declared
/// with a trailing return type, which the op-table scan (tests/ops/public_ops.h) skips.
#include <cstdint>
#include <string>

#include "attograd/tensor.h"

namespace ag::quant {

/// The weight formats.
enum class Format {
  int8_weight_only,  ///< int8 (N, K), one f32 scale per output row
  int4_weight_only,  ///< 4-bit, two per byte (N, K / 2) u8, one f32 scale per group of K
  /// int8 weights stored as int8_weight_only's; activations quantized per row at run time
  /// and multiplied in int8 x int8 -> int32 (int8_dynamic_linear)
  int8_dynamic_activation_int8_weight,
};

/// "int8_weight_only" / "int4_weight_only" / "int8_dynamic_activation_int8_weight".
std::string to_string(Format f);

/// A quantized weight W (N = out, K = in), symmetric: w ~= q * scale.
///   int8 (both int8 formats): data (N, K) i8, q in [-127, 127]; scale (N) f32 = max|w[n, :]| / 127.
///   int4: data (N, Kp / 2) u8 (nibble q + 8, low nibbles the first half of each group);
///         scale (N, Kp / G) f32 = max|w| / 7 over each group, q in [-7, 7]. Kp is K
///         rounded up to a multiple of G: when G does not divide K, the last group is
///         filled with Kp - K zero weights (q = 0), and the input is zero-padded to match.
struct QuantizedWeight {
  Format format = Format::int8_weight_only;  ///< int8 or int4
  int64_t group_size = 0;                    ///< G for int4 (32 or 64); 0 for int8
  Tensor data;                               ///< the packed codes (see above)
  Tensor scale;                              ///< f32 scales (see above)
  int64_t pad = 0;                           ///< int4: Kp - K, the zero columns that fill the last group

  bool defined() const { return data.defined(); }        ///< false for a default-constructed one
  int64_t out_features() const { return data.size(0); }  ///< N
  int64_t in_features() const {                          ///< K
    return format == Format::int4_weight_only ? data.size(1) * 2 - pad : data.size(1);
  }
};

/// Checks that w's fields fit together before any kernel reads them, and throws naming
/// `who` and the field otherwise: undefined (ValueError), an unknown format (ValueError),
/// codes not 2-D (ShapeError) or not i8 (int8 formats) / u8 (int4) (DTypeError), a group
/// size other than 32 or 64 for int4 or other than 0 for int8 (ValueError), int4 codes
/// whose packed length (2 x columns) is not a whole number of groups or whose pad is
/// outside [0, group size) or longer than a row (ValueError), scales not floating
/// (DTypeError) or not (N) / (N, packed length / G) (ShapeError), and dynamic int8's K over
/// 131072 (ValueError). dequantize, weight_only_linear, int8_dynamic_linear and
/// nn::Linear::set_quantized_weight call it; a QuantizedWeight made by quantize_weight or
/// empty_quantized_weight passes.
void validate(const QuantizedWeight& w, const std::string& who);

/// Quantizes w (N, K) (any float dtype, converted to f32): round half to even, clamped.
/// ValueError for a non-finite weight, an int4 group size other than 32 or 64, or (for
/// int8_dynamic_activation_int8_weight) K over kernels' int32 limit of 131072; ShapeError
/// for w not 2-D. Never records a graph.
QuantizedWeight quantize_weight(const Tensor& w, Format format, int64_t group_size = 0);

/// The f32 weight (N, K) that w stands for: q * scale, element by element.
auto dequantize(const QuantizedWeight& w) -> Tensor;

/// Empty buffers of the right shapes and dtypes (for loading a state dict into a model
/// built without the f32 weights).
QuantizedWeight empty_quantized_weight(int64_t out_features, int64_t in_features, Format format,
                                       int64_t group_size = 0);

/// y (..., N) = x (..., K) @ dequantize(w)^T (+ bias (N)), computed in f32 (bf16, f16 and
/// f64 inputs are converted, the result has x's dtype). `who` names the caller in errors
/// ("Linear"). Inference only: when x or bias requires grad under grad mode, the result
/// records a node whose backward throws AutogradError "<who>: quantized modules are
/// inference-only; backward is not supported". A dynamic int8 weight is a ValueError
/// (int8_dynamic_linear runs it).
auto weight_only_linear(const Tensor& x, const QuantizedWeight& w, const Tensor& bias = {},
                        const std::string& who = "weight_only_linear") -> Tensor;

/// Dynamic int8 (PyTorch's quantize_dynamic, torchao's int8_dynamic_activation_int8_weight):
/// each row of x (..., K) is quantized at run time to int8 (symmetric, scale max|row| / 127,
/// round half to even), multiplied by the int8 weight with exact int32 sums and scaled back:
/// y[m, n] = float(sum_k xq[m, k] q[n, k]) * xs[m] * scale[n] (+ bias[n]). w must be in that
/// format (ValueError otherwise); K at most 131072 (the int32 sums, ValueError); dtypes,
/// shapes and the inference-only node as weight_only_linear.
auto int8_dynamic_linear(const Tensor& x, const QuantizedWeight& w, const Tensor& bias = {},
                         const std::string& who = "int8_dynamic_linear") -> Tensor;

}  // namespace ag::quant
