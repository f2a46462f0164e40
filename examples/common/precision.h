#pragma once
// --precision f32 | bf16 | f16 of the training examples (lm, copy_task): mixed precision
// as torch.autocast on the CPU. The forward and the loss run under ag::autocast (matmul,
// linear and attention in the 16-bit dtype; softmax, norms and losses in f32), the
// parameters and optimizer state stay f32 (master weights), and f16, whose 5 exponent
// bits underflow small gradients, scales the loss with amp::GradScaler.
#include <attograd/attograd.h>

#include <string>

namespace examples {

// "f32", "bf16", "f16" -> the DType; ValueError naming the option otherwise.
inline ag::DType precision_from_name(const std::string& name) {
  if (name == "f32") return ag::DType::f32;
  if (name == "bf16") return ag::DType::bf16;
  if (name == "f16") return ag::DType::f16;
  AG_CHECK(false, ValueError, "--precision must be f32, bf16 or f16, got '", name, "'");
  return ag::DType::f32;
}

// The precision's autocast guard; for f32 a disabled one (no autocast inside).
inline ag::autocast autocast_for(ag::DType precision) {
  return ag::autocast(precision == ag::DType::f32 ? ag::DType::bf16 : precision, precision != ag::DType::f32);
}

// A GradScaler enabled for f16 only (a pass-through for f32 and bf16, whose 8 exponent
// bits keep small gradients), with PyTorch's defaults.
inline ag::amp::GradScaler scaler_for(ag::DType precision) {
  return ag::amp::GradScaler(ag::amp::GradScalerOptions().enabled(precision == ag::DType::f16));
}

// The scaler's state in a checkpoint's extra metadata, PyTorch's keys under
// "grad_scaler." (nothing for a disabled scaler), and back; a checkpoint without them
// (another precision) leaves the scaler as it is.
inline void save_scaler_state(const ag::amp::GradScaler& scaler, ag::Metadata& extra) {
  for (const auto& [key, value] : scaler.state_dict()) extra["grad_scaler." + key] = value;
}
inline void load_scaler_state(ag::amp::GradScaler& scaler, const ag::Metadata& extra) {
  const std::string prefix = "grad_scaler.";
  ag::Metadata state;
  for (const auto& [key, value] : extra)
    if (key.rfind(prefix, 0) == 0) state[key.substr(prefix.size())] = value;
  if (!state.empty()) scaler.load_state_dict(state);
}

}  // namespace examples
