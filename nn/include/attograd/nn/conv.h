#pragma once
/// \file
/// Convolution modules with LibTorch's options (`nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1))`)
/// and PyTorch's state-dict names ("weight", "bias") and initialization: weight
/// kaiming_uniform_(a = sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.size(1)
/// times the kernel's elements. forward calls the functional ops of attograd/ops/conv.h.
#include <array>
#include <concepts>
#include <initializer_list>
#include <cstdint>
#include <optional>
#include <vector>

#include "attograd/nn/module.h"
#include "attograd/ops.h"

namespace ag::nn {

/// A per-spatial-dim size in module options (LibTorch's ExpandingArray): one value for
/// every dim (`.stride(2)`), or one per dim (`.stride({2, 1})`).
struct ExpandingArray : std::vector<int64_t> {
  ExpandingArray(std::initializer_list<int64_t> v) : std::vector<int64_t>(v) {}   ///< {2} or {2, 1}
  ExpandingArray(std::vector<int64_t> v) : std::vector<int64_t>(std::move(v)) {}  ///< per dim
  template <std::integral I>
  ExpandingArray(I v) : std::vector<int64_t>{static_cast<int64_t>(v)} {}  ///< the same on every dim
  ExpandingArray() = default;                                             ///< empty (a pool's stride: the kernel size)
};

/// Conv's padding_mode: zeros (the op's own padding), or the input padded by F.pad's mode
/// first (then the op pads nothing), as PyTorch's `_conv_forward`.
enum class ConvPaddingMode { zeros, reflect, replicate, circular };

/// Options of nn::Conv1d / Conv2d (LibTorch's ConvOptions<D>); one value serves every
/// spatial dim, as LibTorch's ExpandingArray.
template <std::size_t D>
struct ConvOptions {
  /// The required options; the others keep their PyTorch defaults.
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  AG_ARG(int64_t, in_channels);                                    ///< C_in
  AG_ARG(int64_t, out_channels);                                   ///< C_out
  AG_ARG(ExpandingArray, kernel_size);                             ///< (k) or (kH, kW)
  AG_ARG(ExpandingArray, stride) = {1};                            ///< per spatial dim, or one for all
  AG_ARG(ConvPadding, padding) = {0};                              ///< amounts, or "same" / "valid"
  AG_ARG(ExpandingArray, dilation) = {1};                          ///< per spatial dim, or one for all
  AG_ARG(int64_t, groups) = 1;                                     ///< C_in and C_out split into groups
  AG_ARG(bool, bias) = true;                                       ///< learn an additive bias (C_out)
  AG_ARG(ConvPaddingMode, padding_mode) = ConvPaddingMode::zeros;  ///< how padding is filled
};
using Conv1dOptions = ConvOptions<1>;  ///< nn::Conv1d's options
using Conv2dOptions = ConvOptions<2>;  ///< nn::Conv2d's options

/// Options of nn::ConvTranspose1d / ConvTranspose2d (LibTorch's ConvTransposeOptions<D>).
template <std::size_t D>
struct ConvTransposeOptions {
  /// The required options; the others keep their PyTorch defaults.
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  AG_ARG(int64_t, in_channels);                  ///< C_in
  AG_ARG(int64_t, out_channels);                 ///< C_out
  AG_ARG(ExpandingArray, kernel_size);           ///< (k) or (kH, kW)
  AG_ARG(ExpandingArray, stride) = {1};          ///< per spatial dim, or one for all
  AG_ARG(ExpandingArray, padding) = {0};         ///< removed from each side of the output
  AG_ARG(ExpandingArray, output_padding) = {0};  ///< added to one side of the output
  AG_ARG(int64_t, groups) = 1;                   ///< C_in and C_out split into groups
  AG_ARG(bool, bias) = true;                     ///< learn an additive bias (C_out)
  AG_ARG(ExpandingArray, dilation) = {1};        ///< per spatial dim, or one for all
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;  ///< nn::ConvTranspose1d's options
using ConvTranspose2dOptions = ConvTransposeOptions<2>;  ///< nn::ConvTranspose2d's options

/// The shared body of Conv1d and Conv2d.
template <std::size_t D>
class ConvNdImpl : public Module {
 public:
  /// Builds the module from its options; parameters start as in PyTorch.
  explicit ConvNdImpl(const ConvOptions<D>& options);
  void reset_parameters();  ///< PyTorch's default initialization (see the file comment)
  /// (N, C_in, *spatial) or (C_in, *spatial) -> (N, C_out, *spatial_out).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;  ///< PyTorch's repr, e.g. Conv2d(1, 16, kernel_size=(3, 3), ...)

  ConvOptions<D> options;  ///< the options it was built with
  Tensor weight;           ///< (C_out, C_in / groups, *kernel_size)
  Tensor bias;             ///< (C_out) or undefined
};

/// torch.nn.Conv1d: (N, C_in, L) -> (N, C_out, L_out).
class Conv1dImpl : public ConvNdImpl<1> {
 public:
  using ConvNdImpl<1>::ConvNdImpl;
  /// Shorthand for the options constructor.
  Conv1dImpl(int64_t in, int64_t out, int64_t kernel_size) : ConvNdImpl<1>(ConvOptions<1>(in, out, kernel_size)) {}
};
/// The holder of Conv1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Conv1d);

/// torch.nn.Conv2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out).
class Conv2dImpl : public ConvNdImpl<2> {
 public:
  using ConvNdImpl<2>::ConvNdImpl;
  /// Shorthand for the options constructor.
  Conv2dImpl(int64_t in, int64_t out, int64_t kernel_size) : ConvNdImpl<2>(ConvOptions<2>(in, out, kernel_size)) {}
};
/// The holder of Conv2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Conv2d);

/// The shared body of ConvTranspose1d and ConvTranspose2d.
template <std::size_t D>
class ConvTransposeNdImpl : public Module {
 public:
  /// Builds the module from its options; parameters start as in PyTorch.
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options);
  void reset_parameters();  ///< PyTorch's default initialization (fan_in from weight.size(1))
  /// (N, C_in, *spatial) -> (N, C_out, *spatial_out). output_size (the spatial sizes, as
  /// PyTorch's forward(input, output_size)) picks output_padding; ValueError when no
  /// output_padding below max(stride, dilation) reaches it.
  Tensor forward(const Tensor& input, const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  void pretty_print(std::ostream& os) const override;  ///< PyTorch's repr, e.g. Conv2d(1, 16, kernel_size=(3, 3), ...)

  ConvTransposeOptions<D> options;  ///< the options it was built with
  Tensor weight;                    ///< (C_in, C_out / groups, *kernel_size)
  Tensor bias;                      ///< (C_out) or undefined
};

/// torch.nn.ConvTranspose1d: (N, C_in, L) -> (N, C_out, L_out).
class ConvTranspose1dImpl : public ConvTransposeNdImpl<1> {
 public:
  using ConvTransposeNdImpl<1>::ConvTransposeNdImpl;
  /// Shorthand for the options constructor.
  ConvTranspose1dImpl(int64_t in, int64_t out, int64_t kernel_size)
      : ConvTransposeNdImpl<1>(ConvTransposeOptions<1>(in, out, kernel_size)) {}
};
/// The holder of ConvTranspose1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ConvTranspose1d);

/// torch.nn.ConvTranspose2d: (N, C_in, H, W) -> (N, C_out, H_out, W_out).
class ConvTranspose2dImpl : public ConvTransposeNdImpl<2> {
 public:
  using ConvTransposeNdImpl<2>::ConvTransposeNdImpl;
  /// Shorthand for the options constructor.
  ConvTranspose2dImpl(int64_t in, int64_t out, int64_t kernel_size)
      : ConvTransposeNdImpl<2>(ConvTransposeOptions<2>(in, out, kernel_size)) {}
};
/// The holder of ConvTranspose2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ConvTranspose2d);

extern template class ConvNdImpl<1>;
extern template class ConvNdImpl<2>;
extern template class ConvTransposeNdImpl<1>;
extern template class ConvTransposeNdImpl<2>;

}  // namespace ag::nn
