#pragma once
/// \file
/// In-place initializers (no graph), as torch.nn.init. Each draws from `gen` or the
/// default generator, in row-major order.
#include "attograd/generator.h"
#include "attograd/tensor.h"

namespace ag::nn::init {

/// Which fan kaiming_* scales by (LibTorch's torch::kFanIn / torch::kFanOut).
enum class FanModeType { FanIn, FanOut };
inline constexpr FanModeType kFanIn = FanModeType::FanIn;    ///< preserves the forward variance
inline constexpr FanModeType kFanOut = FanModeType::FanOut;  ///< preserves the backward variance

/// The nonlinearity calculate_gain is asked about (LibTorch's torch::kReLU, ...).
enum class NonlinearityType {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU
};
inline constexpr NonlinearityType kLinear = NonlinearityType::Linear;                    ///< gain 1
inline constexpr NonlinearityType kConv1D = NonlinearityType::Conv1D;                    ///< gain 1
inline constexpr NonlinearityType kConv2D = NonlinearityType::Conv2D;                    ///< gain 1
inline constexpr NonlinearityType kConv3D = NonlinearityType::Conv3D;                    ///< gain 1
inline constexpr NonlinearityType kConvTranspose1D = NonlinearityType::ConvTranspose1D;  ///< gain 1
inline constexpr NonlinearityType kConvTranspose2D = NonlinearityType::ConvTranspose2D;  ///< gain 1
inline constexpr NonlinearityType kConvTranspose3D = NonlinearityType::ConvTranspose3D;  ///< gain 1
inline constexpr NonlinearityType kSigmoid = NonlinearityType::Sigmoid;                  ///< gain 1
inline constexpr NonlinearityType kTanh = NonlinearityType::Tanh;                        ///< gain 5/3
inline constexpr NonlinearityType kReLU = NonlinearityType::ReLU;                        ///< gain sqrt(2)
inline constexpr NonlinearityType kLeakyReLU = NonlinearityType::LeakyReLU;              ///< sqrt(2 / (1 + slope^2))
inline constexpr NonlinearityType kSELU = NonlinearityType::SELU;                        ///< gain 3/4

/// PyTorch's recommended gain for a nonlinearity; param is leaky_relu's negative slope
/// (ignored by the others), ValueError unless finite.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);

/// In place: U[low, high).
void uniform_(Tensor& t, double low, double high, Generator* gen = nullptr);
/// In place: N(mean, std^2).
void normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
/// In place: every element value.
void constant_(Tensor& t, double value);
/// In place: 0.
void zeros_(Tensor& t);
/// In place: 1.
void ones_(Tensor& t);
/// fan_in, fan_out of a weight (out, in, k...) as PyTorch computes them: in * prod(k),
/// out * prod(k). ValueError below 2 dims, as PyTorch.
std::pair<int64_t, int64_t> fans(const Tensor& t);
/// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// N(0, s) with s = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
/// U(-b, b), b = sqrt(3) * calculate_gain(nonlinearity, a) / sqrt(fan), fan by mode.
/// PyTorch's default for Linear weights is a = sqrt(5): b = 1 / sqrt(fan_in).
void kaiming_uniform_(Tensor& t, double a = 0.0, FanModeType mode = kFanIn, NonlinearityType nonlinearity = kLeakyReLU,
                      Generator* gen = nullptr);
/// N(0, s^2), s = calculate_gain(nonlinearity, a) / sqrt(fan), fan by mode.
void kaiming_normal_(Tensor& t, double a = 0.0, FanModeType mode = kFanIn, NonlinearityType nonlinearity = kLeakyReLU,
                     Generator* gen = nullptr);
/// N(mean, std^2) truncated to [a, b] by PyTorch's inverse-CDF method (every value lies
/// in [a, b]); ValueError unless std > 0 and a < b.
void trunc_normal_(Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                   Generator* gen = nullptr);
/// A (semi-)orthogonal matrix times gain, from the QR of a normal draw, as PyTorch: with
/// t viewed as (rows, cols = numel / rows), W W^T = gain^2 I when rows <= cols, else
/// W^T W = gain^2 I. ValueError below 2 dims ("Only tensors with 2 or more dimensions
/// are supported").
void orthogonal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);

}  // namespace ag::nn::init
