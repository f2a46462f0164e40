// Quantized weights and their linear products (attograd/quant.h); the kernels are in
// ops/kernels/quant.cpp, s8_gemm.cpp and isa/. Shapes: N out, K in, G group, M rows of x.
#include "attograd/quant.h"

#include <cmath>

#include "attograd/error.h"
#include "attograd/factory.h"
#include "attograd/ops/shape.h"
#include "attograd/tape.h"
#include "kernels/quant_rows.h"
#include "kernels/s8_gemm.h"

namespace ag::quant {

std::string to_string(Format f) {
  switch (f) {
    case Format::int8_weight_only: return "int8_weight_only";
    case Format::int4_weight_only: return "int4_weight_only";
    case Format::int8_dynamic_activation_int8_weight: return "int8_dynamic_activation_int8_weight";
  }
  return "unknown";
}

namespace {
void check_format(Format format, int64_t group_size, int64_t N, int64_t K, const char* op) {
  if (format == Format::int8_dynamic_activation_int8_weight)
    AG_CHECK(K <= kernels::kS8MaxK, ValueError, op, ": weight shape (", N, ", ", K, "): in_features ", K,
             " is larger than ", kernels::kS8MaxK,
             " (int8_dynamic_activation_int8_weight sums 127 * 127 * in_features in int32)");
  if (format != Format::int4_weight_only) return;
  AG_CHECK(group_size == 32 || group_size == 64, ValueError, op, ": int4_weight_only group_size must be 32 or 64, got ",
           group_size);
}

bool known(Format f) {
  return f == Format::int8_weight_only || f == Format::int4_weight_only ||
         f == Format::int8_dynamic_activation_int8_weight;
}

// K rounded up to whole groups (int4); K itself for the int8 formats.
int64_t packed_k(const QuantizedWeight& q, int64_t K) {
  return q.format == Format::int4_weight_only ? (K + q.group_size - 1) / q.group_size * q.group_size : K;
}
}  // namespace

void validate(const QuantizedWeight& q, const std::string& who) {
  // Every field before any size derived from them: the kernels index codes and scales by
  // group_size and the packed length, so a field that does not fit is an out-of-bounds
  // access there (a group size of 16 wrote past the output; 0 divided by zero).
  AG_CHECK(q.defined(), ValueError, who, ": the quantized weight is undefined");
  AG_CHECK(known(q.format), ValueError, who, ": unknown quantized format ", static_cast<int>(q.format));
  const bool int4 = q.format == Format::int4_weight_only;
  AG_CHECK(q.data.dim() == 2, ShapeError, who, ": ", to_string(q.format), " codes must be 2-D (out, packed in), got ",
           q.data.shape());
  AG_CHECK(q.data.dtype() == (int4 ? DType::u8 : DType::i8), DTypeError, who, ": ", to_string(q.format), " expects ",
           int4 ? "u8" : "i8", " codes, got ", q.data.dtype());
  AG_CHECK(q.scale.defined() && q.scale.is_floating_point(), DTypeError, who, ": ", to_string(q.format),
           " expects floating scales, got ", q.scale.defined() ? q.scale.dtype() : DType::f32,
           q.scale.defined() ? "" : " (undefined)");
  const int64_t N = q.data.size(0);
  if (!int4) {
    AG_CHECK(q.group_size == 0 && q.pad == 0, ValueError, who, ": ", to_string(q.format),
             " has no groups: group_size must be 0 and pad 0, got ", q.group_size, " and ", q.pad);
    AG_CHECK(q.scale.shape() == Shape{N}, ShapeError, who, ": scale shape ", q.scale.shape(), " does not match codes ",
             q.data.shape(), " (expected [", N, "])");
    if (q.format == Format::int8_dynamic_activation_int8_weight)
      AG_CHECK(q.data.size(1) <= kernels::kS8MaxK, ValueError, who, ": in_features ", q.data.size(1),
               " is larger than ", kernels::kS8MaxK, " (int8 x int8 sums in int32)");
    return;
  }
  const int64_t G = q.group_size, Kp = 2 * q.data.size(1);
  AG_CHECK(G == 32 || G == 64, ValueError, who, ": int4_weight_only group_size must be 32 or 64, got ", G);
  AG_CHECK(Kp % G == 0, ValueError, who, ": int4 codes ", q.data.shape(), " pack ", Kp,
           " values a row, not a whole number of groups of ", G);
  AG_CHECK(q.pad >= 0 && q.pad < G && q.pad <= Kp, ValueError, who, ": int4 codes ", q.data.shape(), " with pad ",
           q.pad, " do not fill whole groups of ", G, " (pad must be in [0, ", G, "))");
  const Shape want{N, Kp / G};
  AG_CHECK(q.scale.shape() == want, ShapeError, who, ": scale shape ", q.scale.shape(), " does not match codes ",
           q.data.shape(), " (expected ", want, ")");
}

QuantizedWeight empty_quantized_weight(int64_t N, int64_t K, Format format, int64_t group_size) {
  check_format(format, group_size, N, K, "empty_quantized_weight");
  AG_CHECK(N >= 0 && K >= 0, ShapeError, "empty_quantized_weight: negative shape (", N, ", ", K, ")");
  QuantizedWeight q;
  q.format = format;
  if (format != Format::int4_weight_only) {  // both int8 formats
    q.data = zeros({N, K}, DType::i8);
    q.scale = zeros({N}, DType::f32);
  } else {
    q.group_size = group_size;
    const int64_t Kp = packed_k(q, K);
    q.pad = Kp - K;
    q.data = full({N, Kp / 2}, 0x88, DType::u8);  // every nibble 8: q = 0
    q.scale = zeros({N, Kp / group_size}, DType::f32);
  }
  return q;
}

QuantizedWeight quantize_weight(const Tensor& w_in, Format format, int64_t group_size) {
  AG_CHECK(w_in.dim() == 2, ShapeError, "quantize_weight: weight must be 2-D (out, in), got shape ", w_in.shape());
  AG_CHECK(w_in.is_floating_point(), DTypeError, "quantize_weight: weight must be floating, got ", w_in.dtype());
  const int64_t N = w_in.size(0), K = w_in.size(1);
  check_format(format, group_size, N, K, "quantize_weight");
  Tensor w = w_in.detach().to(DType::f32).contiguous();  // (N, K)
  const float* wp = w.data<float>();
  for (int64_t i = 0; i < N * K; ++i)
    AG_CHECK(std::isfinite(wp[i]), ValueError, "quantize_weight: weight of shape ", w.shape(),
             " holds a non-finite value (", wp[i], " at flat index ", i, ")");
  QuantizedWeight q = empty_quantized_weight(N, K, format, group_size);
  if (format != Format::int4_weight_only) {
    kernels::quantize_q8(q.data.data<int8_t>(), q.scale.data<float>(), wp, N, K);
  } else {
    // (N, Kp): zeros after K change no group's max, and quantize to q = 0.
    if (q.pad > 0) w = pad(w, {0, q.pad}).contiguous();
    kernels::quantize_q4(q.data.data<uint8_t>(), q.scale.data<float>(), w.data<float>(), N, K + q.pad, group_size);
  }
  return q;
}

Tensor dequantize(const QuantizedWeight& q) {
  validate(q, "dequantize");
  const int64_t N = q.out_features(), K = q.in_features(), Kp = packed_k(q, K);
  Tensor out = empty({N, Kp}, DType::f32);
  const Tensor data = q.data.contiguous(), scale = q.scale.to(DType::f32).contiguous();
  if (q.format != Format::int4_weight_only)
    kernels::q8_dequant_rows(out.data<float>(), data.data<int8_t>(), scale.data<float>(), K, 0, N);
  else
    kernels::q4_dequant_rows(out.data<float>(), data.data<uint8_t>(), scale.data<float>(), Kp, q.group_size, 0, N);
  return Kp == K ? out : out.narrow(1, 0, K).contiguous();
}

namespace {
// The checks both products share; returns M. x (..., K), bias (N) or undefined.
int64_t check_linear(const Tensor& x_in, const QuantizedWeight& q, const Tensor& bias_in, const char* op) {
  validate(q, op);
  const int64_t N = q.out_features(), K = q.in_features();
  AG_CHECK(x_in.is_floating_point(), DTypeError, op, ": input must be floating, got ", x_in.dtype());
  AG_CHECK(x_in.dim() >= 1 && x_in.size(-1) == K, ShapeError, op, ": input shape ", x_in.shape(),
           " does not match the quantized weight (", N, ", ", K, ") (expected last dim ", K, ")");
  if (bias_in.defined())
    AG_CHECK(bias_in.dim() == 1 && bias_in.size(0) == N, ShapeError, op, ": bias shape ", bias_in.shape(),
             " does not match the quantized weight (", N, ", ", K, ")");
  return K == 0 ? 0 : x_in.numel() / K;
}

// y (..., N) from x (..., K) in f32 through `kernel(y, x, bias)`, converted back to x's
// dtype, with the inference-only node. int4 with a padded last group: x (M, Kp), its
// zero columns meeting the zero weights.
template <class Kernel>
Tensor run_linear(const Tensor& x_in, const QuantizedWeight& q, const Tensor& bias_in, const std::string& who,
                  const char* node, Kernel kernel) {
  Tensor x = x_in.detach().to(DType::f32).contiguous();  // (M, K) rows
  if (q.pad > 0) x = pad(x, {0, q.pad}).contiguous();
  const Tensor bias = bias_in.defined() ? bias_in.detach().to(DType::f32).contiguous() : Tensor{};
  Shape out_shape = x.shape();
  out_shape[out_shape.size() - 1] = q.out_features();
  Tensor y = empty(out_shape, DType::f32);  // (..., N)
  kernel(y.data<float>(), x.data<float>(), bias.defined() ? bias.data<float>() : nullptr);
  if (x_in.dtype() != DType::f32) y = y.to(x_in.dtype());
  // Inference only: a node whose backward refuses, so a forward under grad mode still runs
  // (upstream embeddings may require grad) and only backward through it fails.
  return record(node, y, {x_in, bias_in}, [name = who](const Tensor&, NeedsGrad) -> Grads {
    throw AutogradError(name + ": quantized modules are inference-only; backward is not supported");
  });
}
}  // namespace

Tensor weight_only_linear(const Tensor& x_in, const QuantizedWeight& q, const Tensor& bias_in, const std::string& who) {
  const char* op = who.c_str();
  AG_CHECK(!q.defined() || q.format != Format::int8_dynamic_activation_int8_weight, ValueError, op,
           ": weight_only_linear takes a weight-only format, got int8_dynamic_activation_int8_weight (use "
           "int8_dynamic_linear)");
  const int64_t M = check_linear(x_in, q, bias_in, op), N = q.out_features(), K = q.in_features();
  const Tensor data = q.data.contiguous(), scale = q.scale.to(DType::f32).contiguous();  // f32 unless module.to()
  return run_linear(x_in, q, bias_in, who, "weight_only_linear", [&](float* y, const float* x, const float* b) {
    if (q.format == Format::int4_weight_only)
      kernels::q4_linear(y, x, M, N, K + q.pad, q.group_size, data.data<uint8_t>(), scale.data<float>(), b);
    else
      kernels::q8_linear(y, x, M, N, K, data.data<int8_t>(), scale.data<float>(), b);
  });
}

Tensor int8_dynamic_linear(const Tensor& x_in, const QuantizedWeight& q, const Tensor& bias_in,
                           const std::string& who) {
  const char* op = who.c_str();
  AG_CHECK(!q.defined() || q.format == Format::int8_dynamic_activation_int8_weight, ValueError, op,
           ": int8_dynamic_linear takes an int8_dynamic_activation_int8_weight weight, got ", to_string(q.format));
  const int64_t M = check_linear(x_in, q, bias_in, op), N = q.out_features(), K = q.in_features();
  AG_CHECK(K <= kernels::kS8MaxK, ValueError, op, ": in_features ", K, " is larger than ", kernels::kS8MaxK,
           " (int8_dynamic_activation_int8_weight sums 127 * 127 * in_features in int32)");
  const Tensor data = q.data.contiguous(), scale = q.scale.to(DType::f32).contiguous();
  return run_linear(x_in, q, bias_in, who, "int8_dynamic_linear", [&](float* y, const float* x, const float* b) {
    kernels::s8_linear(y, x, M, N, K, data.data<int8_t>(), scale.data<float>(), b);
  });
}

}  // namespace ag::quant
