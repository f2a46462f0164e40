#pragma once
/// \file
/// Pooling modules with LibTorch's options (`nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2))`);
/// no parameters. forward calls the functional ops of attograd/ops/pool.h.
#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attograd/nn/conv.h"  // ExpandingArray
#include "attograd/nn/module.h"
#include "attograd/ops.h"

namespace ag::nn {

/// Options of nn::MaxPool1d / MaxPool2d (LibTorch's MaxPoolOptions<D>).
template <std::size_t D>
struct MaxPoolOptions {
  /// The required option; the others keep their PyTorch defaults.
  MaxPoolOptions(ExpandingArray kernel_size) : kernel_size_(std::move(kernel_size)) {}  ///< one value or one per dim
  template <std::integral I>
  MaxPoolOptions(I kernel_size) : kernel_size_(kernel_size) {}  ///< the same on every dim
  AG_ARG(ExpandingArray, kernel_size);                          ///< the window
  AG_ARG(ExpandingArray, stride);                               ///< empty: kernel_size
  AG_ARG(ExpandingArray, padding) = {0};                        ///< implicit -inf on both sides
  AG_ARG(ExpandingArray, dilation) = {1};                       ///< spacing of the window's elements
  AG_ARG(bool, ceil_mode) = false;                              ///< ceil instead of floor for the output size
};
using MaxPool1dOptions = MaxPoolOptions<1>;  ///< nn::MaxPool1d's options
using MaxPool2dOptions = MaxPoolOptions<2>;  ///< nn::MaxPool2d's options

/// Options of nn::AvgPool1d / AvgPool2d (LibTorch's AvgPoolOptions<D>).
template <std::size_t D>
struct AvgPoolOptions {
  /// The required option; the others keep their PyTorch defaults.
  AvgPoolOptions(ExpandingArray kernel_size) : kernel_size_(std::move(kernel_size)) {}  ///< one value or one per dim
  template <std::integral I>
  AvgPoolOptions(I kernel_size) : kernel_size_(kernel_size) {}  ///< the same on every dim
  AG_ARG(ExpandingArray, kernel_size);                          ///< the window
  AG_ARG(ExpandingArray, stride);                               ///< empty: kernel_size
  AG_ARG(ExpandingArray, padding) = {0};                        ///< implicit zeros on both sides
  AG_ARG(bool, ceil_mode) = false;                              ///< ceil instead of floor for the output size
  AG_ARG(bool, count_include_pad) = true;                       ///< padding counts in the divisor
  AG_ARG(std::optional<int64_t>, divisor_override);             ///< 2-d only: every window's divisor
};
using AvgPool1dOptions = AvgPoolOptions<1>;  ///< nn::AvgPool1d's options
using AvgPool2dOptions = AvgPoolOptions<2>;  ///< nn::AvgPool2d's options

/// Options of the adaptive pools: the output's spatial size.
template <std::size_t D>
struct AdaptivePoolOptions {
  AdaptivePoolOptions(ExpandingArray output_size)
      : output_size_(std::move(output_size)) {}  ///< one value or one per dim
  template <std::integral I>
  AdaptivePoolOptions(I output_size) : output_size_(output_size) {}  ///< the same on every dim
  AG_ARG(ExpandingArray, output_size);                               ///< (L_out) or (H_out, W_out)
};
using AdaptiveAvgPool1dOptions = AdaptivePoolOptions<1>;  ///< nn::AdaptiveAvgPool1d's options
using AdaptiveAvgPool2dOptions = AdaptivePoolOptions<2>;  ///< nn::AdaptiveAvgPool2d's options
using AdaptiveMaxPool1dOptions = AdaptivePoolOptions<1>;  ///< nn::AdaptiveMaxPool1d's options
using AdaptiveMaxPool2dOptions = AdaptivePoolOptions<2>;  ///< nn::AdaptiveMaxPool2d's options

/// torch.nn.MaxPool1d: (N, C, L) -> (N, C, L_out).
class MaxPool1dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit MaxPool1dImpl(const MaxPool1dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  /// (values, i64 indices into each plane), as PyTorch with return_indices=True.
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  MaxPool1dOptions options;  ///< the options it was built with
};
/// The holder of MaxPool1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(MaxPool1d);

/// torch.nn.MaxPool2d: (N, C, H, W) -> (N, C, H_out, W_out).
class MaxPool2dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit MaxPool2dImpl(const MaxPool2dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  /// (values, i64 indices into each plane), as PyTorch with return_indices=True.
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  MaxPool2dOptions options;  ///< the options it was built with
};
/// The holder of MaxPool2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(MaxPool2d);

/// torch.nn.AvgPool1d: (N, C, L) -> (N, C, L_out).
class AvgPool1dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AvgPool1dImpl(const AvgPool1dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  void pretty_print(std::ostream& os) const override;
  AvgPool1dOptions options;  ///< the options it was built with
};
/// The holder of AvgPool1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AvgPool1d);

/// torch.nn.AvgPool2d: (N, C, H, W) -> (N, C, H_out, W_out).
class AvgPool2dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AvgPool2dImpl(const AvgPool2dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  void pretty_print(std::ostream& os) const override;
  AvgPool2dOptions options;  ///< the options it was built with
};
/// The holder of AvgPool2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AvgPool2d);

/// torch.nn.AdaptiveAvgPool1d: (N, C, L) -> (N, C, output_size).
class AdaptiveAvgPool1dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  void pretty_print(std::ostream& os) const override;
  AdaptiveAvgPool1dOptions options;  ///< the options it was built with
};
/// The holder of AdaptiveAvgPool1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AdaptiveAvgPool1d);

/// torch.nn.AdaptiveAvgPool2d: (N, C, H, W) -> (N, C, *output_size); {1} is global average pooling.
class AdaptiveAvgPool2dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  void pretty_print(std::ostream& os) const override;
  AdaptiveAvgPool2dOptions options;  ///< the options it was built with
};
/// The holder of AdaptiveAvgPool2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AdaptiveAvgPool2d);

/// torch.nn.AdaptiveMaxPool1d: (N, C, L) -> (N, C, output_size).
class AdaptiveMaxPool1dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  /// (values, i64 indices into each plane), as PyTorch with return_indices=True.
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  AdaptiveMaxPool1dOptions options;  ///< the options it was built with
};
/// The holder of AdaptiveMaxPool1dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AdaptiveMaxPool1d);

/// torch.nn.AdaptiveMaxPool2d: (N, C, H, W) -> (N, C, *output_size).
class AdaptiveMaxPool2dImpl : public Module {
 public:
  /// Builds the module from its options (no parameters).
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options);
  Tensor forward(const Tensor& input);  ///< the pooled input
  /// (values, i64 indices into each plane), as PyTorch with return_indices=True.
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  AdaptiveMaxPool2dOptions options;  ///< the options it was built with
};
/// The holder of AdaptiveMaxPool2dImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(AdaptiveMaxPool2d);

}  // namespace ag::nn
