#pragma once
/// \file
/// nn::functional: the stateless forms the modules delegate to (LibTorch's layout:
/// `namespace F = ag::nn::functional; F::gelu(x, "tanh")`).
///
/// Complete by construction: the namespace nominates all of ag, so every op reaches it
/// as ag::nn::functional::NAME the moment it is declared in its family header, with no
/// list to keep in step by hand (the lists it replaces, spread over three headers, had
/// missed sigmoid, one_hot, the attention masks, SdpaOptions and GeluApprox). A qualified
/// F::name finds the ag declaration through the using-directive. The price is that F::
/// also reaches ag's non-functional names (F::add, F::Tensor), which LibTorch's does not;
/// that is harmless.
///
/// A functional-only name (one that ag itself lacks) is declared here as usual. A
/// functional-only overload of a name that ag has, though, would hide ag's overloads from
/// F::name (a declaration in this namespace stops qualified lookup before the directive),
/// so it must come with `using ag::NAME;` beside it.
///
/// test_ops checks the promise: a source generated from the op family headers whose ops
/// are functional forms (activation, attention, loss, norm, position, softmax) and from
/// the functional ops of other families (dropout, embedding, linear, one_hot, pad; see
/// tests/ops/functional_names.cmake) names each op and option type as
/// ag::nn::functional::NAME, so test_ops stops compiling if one is not reachable.
#include "attograd/ops.h"

namespace ag::nn::functional {
using namespace ag;  // NOLINT(google-build-using-namespace): the point of this header

/// F.unfold: ag::im2col under torch.nn.functional's name (torch.Tensor.unfold, a
/// different op, keeps that name for itself): (N, C, H, W) -> (N, C kH kW, L).
inline Tensor unfold(const Tensor& input, const std::vector<int64_t>& kernel_size,
                     const std::vector<int64_t>& dilation = {1}, const std::vector<int64_t>& padding = {0},
                     const std::vector<int64_t>& stride = {1}) {
  return im2col(input, kernel_size, dilation, padding, stride);
}
/// F.fold: ag::col2im under torch.nn.functional's name: (N, C kH kW, L) -> (N, C, H, W).
inline Tensor fold(const Tensor& input, const std::vector<int64_t>& output_size,
                   const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& dilation = {1},
                   const std::vector<int64_t>& padding = {0}, const std::vector<int64_t>& stride = {1}) {
  return col2im(input, output_size, kernel_size, dilation, padding, stride);
}
}  // namespace ag::nn::functional
