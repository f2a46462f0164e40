// Conv1d / Conv2d / ConvTranspose1d / ConvTranspose2d: parameters under PyTorch's names
// and initialization, forward through ops/conv.h.
#include "attograd/nn/conv.h"

#include <cmath>
#include <ostream>

#include "attograd/nn/init.h"

namespace ag::nn {
namespace {

template <std::size_t D>
const char* conv_name() {
  return D == 1 ? "Conv1d" : "Conv2d";
}
template <std::size_t D>
const char* conv_transpose_name() {
  return D == 1 ? "ConvTranspose1d" : "ConvTranspose2d";
}

// kernel_size as D values (one value serves all), checked positive.
template <std::size_t D>
std::vector<int64_t> kernel_dims(const std::vector<int64_t>& k, const char* module) {
  AG_CHECK(k.size() == 1 || k.size() == D, ValueError, module, ": kernel_size must have 1 or ", D, " values, got ",
           k.size());
  std::vector<int64_t> r(D, k[0]);
  if (k.size() == D) r = k;
  for (int64_t v : r) AG_CHECK(v > 0, ValueError, module, ": kernel_size must be positive, got ", v);
  return r;
}

// PyTorch's _ConvNd.reset_parameters: kaiming_uniform_(a = sqrt(5)) is U(-b, b) with
// b = 1 / sqrt(fan_in); the bias the same bound.
void reset_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double fan_in = static_cast<double>(init::fans(weight).first);
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(fan_in) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

void print_list(std::ostream& os, const std::vector<int64_t>& v, std::size_t D) {
  os << '(';
  for (std::size_t i = 0; i < D; ++i) os << (i ? ", " : "") << v[v.size() == 1 ? 0 : i];
  os << (D == 1 ? ",)" : ")");
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

PadMode pad_mode(ConvPaddingMode m) {
  switch (m) {
    case ConvPaddingMode::reflect: return PadMode::reflect;
    case ConvPaddingMode::replicate: return PadMode::replicate;
    case ConvPaddingMode::circular: return PadMode::circular;
    case ConvPaddingMode::zeros: break;
  }
  return PadMode::constant;
}

}  // namespace

// ---- Conv1d / Conv2d ----
template <std::size_t D>
ConvNdImpl<D>::ConvNdImpl(const ConvOptions<D>& o) : Module(conv_name<D>()), options(o) {
  const char* name = conv_name<D>();
  const auto k = kernel_dims<D>(o.kernel_size(), name);
  AG_CHECK(o.in_channels() > 0 && o.out_channels() > 0, ValueError, name, ": in_channels ", o.in_channels(),
           " and out_channels ", o.out_channels(), " must be positive");
  AG_CHECK(o.groups() > 0 && o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0, ValueError, name,
           ": groups ", o.groups(), " must divide in_channels ", o.in_channels(), " and out_channels ",
           o.out_channels());
  Shape ws{o.out_channels(), o.in_channels() / o.groups()};
  for (int64_t v : k) ws.push_back(v);
  weight = empty(ws);
  register_parameter("weight", &weight);
  if (o.bias()) {
    bias = empty({o.out_channels()});
    register_parameter("bias", &bias);
  }
  reset_parameters();
}

template <std::size_t D>
void ConvNdImpl<D>::reset_parameters() {
  reset_conv(weight, bias);
}

template <std::size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  const ConvOptions<D>& o = options;
  if (o.padding_mode() == ConvPaddingMode::zeros)
    return D == 1 ? conv1d(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups())
                  : conv2d(input, weight, bias, o.stride(), o.padding(), o.dilation(), o.groups());
  // reflect / replicate / circular: F.pad with the padding each side (last dim first),
  // then a convolution without padding (PyTorch's _reversed_padding_repeated_twice).
  std::vector<int64_t> amounts(D);
  if (o.padding().same) {
    const auto k = kernel_dims<D>(o.kernel_size(), conv_name<D>());
    const auto& dil = o.dilation();
    std::vector<int64_t> pads;
    for (std::size_t d = D; d-- > 0;) {
      const int64_t total = dil[dil.size() == 1 ? 0 : d] * (k[d] - 1);
      pads.push_back(total / 2);
      pads.push_back(total - total / 2);
    }
    const Tensor padded = pad(input, pads, pad_mode(o.padding_mode()));
    return D == 1 ? conv1d(padded, weight, bias, o.stride(), {0}, o.dilation(), o.groups())
                  : conv2d(padded, weight, bias, o.stride(), {0}, o.dilation(), o.groups());
  }
  const auto& p = o.padding().amounts;
  AG_CHECK(p.size() == 1 || p.size() == D, ValueError, conv_name<D>(), ": padding must have 1 or ", D, " values");
  std::vector<int64_t> pads;
  for (std::size_t d = D; d-- > 0;) {
    const int64_t v = p[p.size() == 1 ? 0 : d];
    pads.push_back(v);
    pads.push_back(v);
  }
  const Tensor padded = pad(input, pads, pad_mode(o.padding_mode()));
  return D == 1 ? conv1d(padded, weight, bias, o.stride(), {0}, o.dilation(), o.groups())
                : conv2d(padded, weight, bias, o.stride(), {0}, o.dilation(), o.groups());
}

// Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)), as PyTorch's repr.
template <std::size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& os) const {
  const ConvOptions<D>& o = options;
  os << conv_name<D>() << '(' << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  print_list(os, o.kernel_size(), D);
  os << ", stride=";
  print_list(os, o.stride(), D);
  if (o.padding().same) {
    os << ", padding=same";
  } else if (!all_equal(o.padding().amounts, 0)) {
    os << ", padding=";
    print_list(os, o.padding().amounts, D);
  }
  if (!all_equal(o.dilation(), 1)) {
    os << ", dilation=";
    print_list(os, o.dilation(), D);
  }
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!o.bias()) os << ", bias=false";
  static const char* const modes[] = {"zeros", "reflect", "replicate", "circular"};
  if (o.padding_mode() != ConvPaddingMode::zeros) os << ", padding_mode=" << modes[int(o.padding_mode())];
  os << ')';
}

// ---- ConvTranspose1d / ConvTranspose2d ----
template <std::size_t D>
ConvTransposeNdImpl<D>::ConvTransposeNdImpl(const ConvTransposeOptions<D>& o)
    : Module(conv_transpose_name<D>()), options(o) {
  const char* name = conv_transpose_name<D>();
  const auto k = kernel_dims<D>(o.kernel_size(), name);
  AG_CHECK(o.in_channels() > 0 && o.out_channels() > 0, ValueError, name, ": in_channels ", o.in_channels(),
           " and out_channels ", o.out_channels(), " must be positive");
  AG_CHECK(o.groups() > 0 && o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0, ValueError, name,
           ": groups ", o.groups(), " must divide in_channels ", o.in_channels(), " and out_channels ",
           o.out_channels());
  Shape ws{o.in_channels(), o.out_channels() / o.groups()};
  for (int64_t v : k) ws.push_back(v);
  weight = empty(ws);
  register_parameter("weight", &weight);
  if (o.bias()) {
    bias = empty({o.out_channels()});
    register_parameter("bias", &bias);
  }
  reset_parameters();
}

template <std::size_t D>
void ConvTransposeNdImpl<D>::reset_parameters() {
  reset_conv(weight, bias);
}

template <std::size_t D>
Tensor ConvTransposeNdImpl<D>::forward(const Tensor& input, const std::optional<std::vector<int64_t>>& output_size) {
  const ConvTransposeOptions<D>& o = options;
  const char* name = conv_transpose_name<D>();
  auto at = [](const std::vector<int64_t>& v, std::size_t d) { return v[v.size() == 1 ? 0 : d]; };
  std::vector<int64_t> opad = o.output_padding();
  if (output_size) {
    // PyTorch's _output_padding: the requested size minus the smallest one reachable,
    // the requested size between that and stride - 1 more.
    std::vector<int64_t> want = *output_size;
    if (want.size() == D + 2 || want.size() == D + 1) want.erase(want.begin(), want.end() - int64_t(D));
    AG_CHECK(want.size() == D, ValueError, name, ": output_size must have ", D, " (or ", D + 2, ") values, got ",
             want.size());
    AG_CHECK(input.dim() >= int64_t(D), ShapeError, name, ": input shape ", input.shape(), " has fewer than ", D,
             " dims");
    opad.assign(D, 0);
    const auto k = kernel_dims<D>(o.kernel_size(), name);
    for (std::size_t d = 0; d < D; ++d) {
      const int64_t n = input.shape()[input.dim() - int64_t(D) + int64_t(d)];
      const int64_t min_size =
          (n - 1) * at(o.stride(), d) - 2 * at(o.padding(), d) + at(o.dilation(), d) * (k[d] - 1) + 1;
      const int64_t max_size = min_size + at(o.stride(), d) - 1;
      AG_CHECK(want[d] >= min_size && want[d] <= max_size, ValueError, name, ": requested an output size of ", want[d],
               " along spatial dim ", d, ", but valid sizes range from ", min_size, " to ", max_size,
               " (for an input of shape ", input.shape(), ")");
      opad[d] = want[d] - min_size;
    }
  }
  return D == 1 ? conv_transpose1d(input, weight, bias, o.stride(), o.padding(), opad, o.groups(), o.dilation())
                : conv_transpose2d(input, weight, bias, o.stride(), o.padding(), opad, o.groups(), o.dilation());
}

template <std::size_t D>
void ConvTransposeNdImpl<D>::pretty_print(std::ostream& os) const {
  const ConvTransposeOptions<D>& o = options;
  os << conv_transpose_name<D>() << '(' << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  print_list(os, o.kernel_size(), D);
  os << ", stride=";
  print_list(os, o.stride(), D);
  if (!all_equal(o.padding(), 0)) {
    os << ", padding=";
    print_list(os, o.padding(), D);
  }
  if (!all_equal(o.output_padding(), 0)) {
    os << ", output_padding=";
    print_list(os, o.output_padding(), D);
  }
  if (!all_equal(o.dilation(), 1)) {
    os << ", dilation=";
    print_list(os, o.dilation(), D);
  }
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!o.bias()) os << ", bias=false";
  os << ')';
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;
template class ConvTransposeNdImpl<1>;
template class ConvTransposeNdImpl<2>;

}  // namespace ag::nn
