// Weight-only quantized weights and their linear product (attograd/quant.h); the kernels
// are in ops/kernels/quant.cpp and isa/quant_rows.cpp. Shapes: N out, K in, G group.
#include "attograd/quant.h"

#include <cmath>

#include "attograd/error.h"
#include "attograd/factory.h"
#include "attograd/ops/shape.h"
#include "attograd/tape.h"
#include "kernels/quant_rows.h"

namespace ag::quant {

std::string to_string(Format f) { return f == Format::int4_weight_only ? "int4_weight_only" : "int8_weight_only"; }

namespace {
void check_format(Format format, int64_t group_size, const char* op) {
  if (format != Format::int4_weight_only) return;
  AG_CHECK(group_size == 32 || group_size == 64, ValueError, op, ": int4_weight_only group_size must be 32 or 64, got ",
           group_size);
}

// K rounded up to whole groups (int4); K itself for int8.
int64_t packed_k(const QuantizedWeight& q, int64_t K) {
  return q.format == Format::int4_weight_only ? (K + q.group_size - 1) / q.group_size * q.group_size : K;
}
}  // namespace

QuantizedWeight empty_quantized_weight(int64_t N, int64_t K, Format format, int64_t group_size) {
  check_format(format, group_size, "empty_quantized_weight");
  AG_CHECK(N >= 0 && K >= 0, ShapeError, "empty_quantized_weight: negative shape (", N, ", ", K, ")");
  QuantizedWeight q;
  q.format = format;
  if (format == Format::int8_weight_only) {
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
  check_format(format, group_size, "quantize_weight");
  Tensor w = w_in.detach().to(DType::f32).contiguous();  // (N, K)
  const float* wp = w.data<float>();
  for (int64_t i = 0; i < N * K; ++i)
    AG_CHECK(std::isfinite(wp[i]), ValueError, "quantize_weight: weight of shape ", w.shape(),
             " holds a non-finite value (", wp[i], " at flat index ", i, ")");
  QuantizedWeight q = empty_quantized_weight(N, K, format, group_size);
  if (format == Format::int8_weight_only) {
    kernels::quantize_q8(q.data.data<int8_t>(), q.scale.data<float>(), wp, N, K);
  } else {
    // (N, Kp): zeros after K change no group's max, and quantize to q = 0.
    if (q.pad > 0) w = pad(w, {0, q.pad}).contiguous();
    kernels::quantize_q4(q.data.data<uint8_t>(), q.scale.data<float>(), w.data<float>(), N, K + q.pad, group_size);
  }
  return q;
}

Tensor dequantize(const QuantizedWeight& q) {
  AG_CHECK(q.defined(), ValueError, "dequantize: the quantized weight is undefined");
  const int64_t N = q.out_features(), K = q.in_features(), Kp = packed_k(q, K);
  Tensor out = empty({N, Kp}, DType::f32);
  const Tensor data = q.data.contiguous(), scale = q.scale.to(DType::f32).contiguous();
  if (q.format == Format::int8_weight_only)
    kernels::q8_dequant_rows(out.data<float>(), data.data<int8_t>(), scale.data<float>(), K, 0, N);
  else
    kernels::q4_dequant_rows(out.data<float>(), data.data<uint8_t>(), scale.data<float>(), Kp, q.group_size, 0, N);
  return Kp == K ? out : out.narrow(1, 0, K).contiguous();
}

Tensor weight_only_linear(const Tensor& x_in, const QuantizedWeight& q, const Tensor& bias_in, const std::string& who) {
  const char* op = who.c_str();
  AG_CHECK(q.defined(), ValueError, op, ": the quantized weight is undefined");
  const int64_t N = q.out_features(), K = q.in_features(), Kp = packed_k(q, K);
  const bool int4 = q.format == Format::int4_weight_only;
  AG_CHECK(q.data.dtype() == (int4 ? DType::u8 : DType::i8) && q.scale.is_floating_point(), DTypeError, op, ": ",
           to_string(q.format), " expects ", int4 ? "u8" : "i8", " codes and floating scales, got ", q.data.dtype(),
           " and ", q.scale.dtype());
  AG_CHECK(!int4 || (q.pad >= 0 && q.pad == Kp - K), ValueError, op, ": int4 codes ", q.data.shape(), " with pad ",
           q.pad, " do not fill whole groups of ", q.group_size);
  const Shape scale_shape = int4 ? Shape{N, Kp / q.group_size} : Shape{N};
  AG_CHECK(q.scale.shape() == scale_shape, ShapeError, op, ": scale shape ", q.scale.shape(), " does not match codes ",
           q.data.shape(), " (expected ", scale_shape, ")");
  AG_CHECK(x_in.is_floating_point(), DTypeError, op, ": input must be floating, got ", x_in.dtype());
  AG_CHECK(x_in.dim() >= 1 && x_in.size(-1) == K, ShapeError, op, ": input shape ", x_in.shape(),
           " does not match the quantized weight (", N, ", ", K, ") (expected last dim ", K, ")");
  if (bias_in.defined())
    AG_CHECK(bias_in.dim() == 1 && bias_in.size(0) == N, ShapeError, op, ": bias shape ", bias_in.shape(),
             " does not match the quantized weight (", N, ", ", K, ")");

  Tensor x = x_in.detach().to(DType::f32).contiguous();  // (M, K) rows
  if (Kp != K) x = pad(x, {0, Kp - K}).contiguous();     // (M, Kp): the zero columns meet zero weights
  const Tensor bias = bias_in.defined() ? bias_in.detach().to(DType::f32).contiguous() : Tensor{};
  const Tensor data = q.data.contiguous(), scale = q.scale.to(DType::f32).contiguous();  // f32 unless module.to()
  const int64_t M = Kp == 0 ? 0 : x.numel() / Kp;
  Shape out_shape = x.shape();
  out_shape[out_shape.size() - 1] = N;
  Tensor y = empty(out_shape, DType::f32);  // (..., N)
  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  if (int4)
    kernels::q4_linear(y.data<float>(), x.data<float>(), M, N, Kp, q.group_size, data.data<uint8_t>(),
                       scale.data<float>(), b);
  else
    kernels::q8_linear(y.data<float>(), x.data<float>(), M, N, K, data.data<int8_t>(), scale.data<float>(), b);
  if (x_in.dtype() != DType::f32) y = y.to(x_in.dtype());
  // Inference only: a node whose backward refuses, so a forward under grad mode still runs
  // (upstream embeddings may require grad) and only backward through it fails.
  return record("weight_only_linear", y, {x_in, bias_in}, [name = who](const Tensor&, NeedsGrad) -> Grads {
    throw AutogradError(name + ": quantized modules are inference-only; backward is not supported");
  });
}

}  // namespace ag::quant
