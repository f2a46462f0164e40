#pragma once
/// \file
/// Automatic mixed precision on the CPU, as PyTorch's torch.autocast(device_type="cpu",
/// dtype=torch.bfloat16): inside the guard's scope the ops of the lower-precision list
/// (matmul, linear, scaled_dot_product_attention) cast their f32 inputs to the autocast
/// dtype, and the ops of the f32 list (softmax, log_softmax, layer_norm, rms_norm, the
/// losses, sum, mean, prod, logsumexp) cast bf16 / f16 inputs to f32. f64 tensors are never
/// cast (PyTorch's rule). The casts are differentiable to() ops, so f32 parameters get f32
/// gradients: they are the master weights, and the optimizers step them as usual.
///
///   {
///     ag::autocast guard(DType::bf16);
///     loss = criterion(model(x), y);  // matmuls in bf16, softmax and the loss in f32
///   }
///   loss.backward();  // backward never autocasts (inside the scope or not), as PyTorch's
///
/// A tensor cast again while its earlier cast is alive (three projections of one input)
/// shares that cast's buffer, each use still its own to() node, so the gradients reach
/// the f32 tensor as separate f32 terms, as with separate casts (the bits do not change).
///
/// The state is per thread; guards nest and restore what they found. With f16, use an
/// amp::GradScaler (attograd/optim/grad_scaler.h) so small gradients do not flush to 0.
#include "attograd/tensor.h"

namespace ag {

/// The RAII guard: autocast to `dtype` (bf16 or f16; ValueError otherwise) while alive,
/// or, with enabled = false, no autocast (a region kept in full precision).
class autocast {
 public:
  /// Autocast to dtype on this thread until the guard goes out of scope.
  explicit autocast(DType dtype = DType::bf16, bool enabled = true);
  ~autocast();  ///< restores the state the constructor found
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  bool prev_enabled_;
  DType prev_dtype_;
};

bool is_autocast_enabled();  ///< torch.is_autocast_cpu_enabled(): a guard with enabled is alive on this thread
DType get_autocast_dtype();  ///< torch.get_autocast_cpu_dtype(): bf16 unless a guard set f16

// (Trailing return types: tests/ops/public_ops.h lists declarations that start with
// "Tensor" in these headers as public ops, which these two are not.)
namespace detail {
/// An op of the lower-precision list: t in the autocast dtype when autocast is on and t
/// is an f32 (or other 16-bit) tensor; otherwise t (f64, integers, undefined).
auto autocast_lower(const Tensor& t) -> Tensor;
/// An op of the f32 list: t in f32 when autocast is on and t is bf16 / f16; otherwise t.
auto autocast_f32(const Tensor& t) -> Tensor;
}  // namespace detail

}  // namespace ag
