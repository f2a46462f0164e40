// The pooling modules: options checked once at construction, forward through ops/pool.h,
// printing as PyTorch's repr.
#include "attograd/nn/pooling.h"

#include <ostream>

namespace ag::nn {
namespace {

// "2" for one value, "(2, 3)" for several (PyTorch prints what it was given).
void print_arg(std::ostream& os, const std::vector<int64_t>& v) {
  if (v.size() == 1) {
    os << v[0];
    return;
  }
  os << '(';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ')';
}

void check_list(const char* module, const char* arg, const std::vector<int64_t>& v, std::size_t D, bool allow_empty) {
  AG_CHECK((allow_empty && v.empty()) || v.size() == 1 || v.size() == D, ValueError, module, ": ", arg,
           " must have 1 or ", D, " values, got ", v.size());
}

template <std::size_t D>
void check_max(const char* module, const MaxPoolOptions<D>& o) {
  check_list(module, "kernel_size", o.kernel_size(), D, false);
  check_list(module, "stride", o.stride(), D, true);
}

template <std::size_t D>
void print_max(std::ostream& os, const char* module, const MaxPoolOptions<D>& o) {
  os << module << "(kernel_size=";
  print_arg(os, o.kernel_size());
  os << ", stride=";
  print_arg(os, o.stride().empty() ? o.kernel_size() : o.stride());
  os << ", padding=";
  print_arg(os, o.padding());
  os << ", dilation=";
  print_arg(os, o.dilation());
  os << ", ceil_mode=" << (o.ceil_mode() ? "true" : "false") << ')';
}

template <std::size_t D>
void print_avg(std::ostream& os, const char* module, const AvgPoolOptions<D>& o) {
  os << module << "(kernel_size=";
  print_arg(os, o.kernel_size());
  os << ", stride=";
  print_arg(os, o.stride().empty() ? o.kernel_size() : o.stride());
  os << ", padding=";
  print_arg(os, o.padding());
  if (o.ceil_mode()) os << ", ceil_mode=true";
  if (!o.count_include_pad()) os << ", count_include_pad=false";
  if (o.divisor_override()) os << ", divisor_override=" << *o.divisor_override();
  os << ')';
}

template <std::size_t D>
void print_adaptive(std::ostream& os, const char* module, const AdaptivePoolOptions<D>& o) {
  os << module << "(output_size=";
  print_arg(os, o.output_size());
  os << ')';
}

}  // namespace

// ---- max ----
MaxPool1dImpl::MaxPool1dImpl(const MaxPool1dOptions& o) : Module("MaxPool1d"), options(o) { check_max("MaxPool1d", o); }
Tensor MaxPool1dImpl::forward(const Tensor& x) {
  return max_pool1d(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                    options.ceil_mode());
}
std::pair<Tensor, Tensor> MaxPool1dImpl::forward_with_indices(const Tensor& x) {
  return max_pool1d_with_indices(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                 options.ceil_mode());
}
void MaxPool1dImpl::pretty_print(std::ostream& os) const { print_max(os, "MaxPool1d", options); }

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& o) : Module("MaxPool2d"), options(o) { check_max("MaxPool2d", o); }
Tensor MaxPool2dImpl::forward(const Tensor& x) {
  return max_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                    options.ceil_mode());
}
std::pair<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& x) {
  return max_pool2d_with_indices(x, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                 options.ceil_mode());
}
void MaxPool2dImpl::pretty_print(std::ostream& os) const { print_max(os, "MaxPool2d", options); }

// ---- average ----
AvgPool1dImpl::AvgPool1dImpl(const AvgPool1dOptions& o) : Module("AvgPool1d"), options(o) {
  check_list("AvgPool1d", "kernel_size", o.kernel_size(), 1, false);
  AG_CHECK(!o.divisor_override(), ValueError, "AvgPool1d: divisor_override is a 2-d option (as in PyTorch)");
}
Tensor AvgPool1dImpl::forward(const Tensor& x) {
  return avg_pool1d(x, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                    options.count_include_pad());
}
void AvgPool1dImpl::pretty_print(std::ostream& os) const { print_avg(os, "AvgPool1d", options); }

AvgPool2dImpl::AvgPool2dImpl(const AvgPool2dOptions& o) : Module("AvgPool2d"), options(o) {
  check_list("AvgPool2d", "kernel_size", o.kernel_size(), 2, false);
}
Tensor AvgPool2dImpl::forward(const Tensor& x) {
  return avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                    options.count_include_pad(), options.divisor_override());
}
void AvgPool2dImpl::pretty_print(std::ostream& os) const { print_avg(os, "AvgPool2d", options); }

// ---- adaptive ----
AdaptiveAvgPool1dImpl::AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& o)
    : Module("AdaptiveAvgPool1d"), options(o) {
  check_list("AdaptiveAvgPool1d", "output_size", o.output_size(), 1, false);
}
Tensor AdaptiveAvgPool1dImpl::forward(const Tensor& x) { return adaptive_avg_pool1d(x, options.output_size()); }
void AdaptiveAvgPool1dImpl::pretty_print(std::ostream& os) const { print_adaptive(os, "AdaptiveAvgPool1d", options); }

AdaptiveAvgPool2dImpl::AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& o)
    : Module("AdaptiveAvgPool2d"), options(o) {
  check_list("AdaptiveAvgPool2d", "output_size", o.output_size(), 2, false);
}
Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) { return adaptive_avg_pool2d(x, options.output_size()); }
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const { print_adaptive(os, "AdaptiveAvgPool2d", options); }

AdaptiveMaxPool1dImpl::AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& o)
    : Module("AdaptiveMaxPool1d"), options(o) {
  check_list("AdaptiveMaxPool1d", "output_size", o.output_size(), 1, false);
}
Tensor AdaptiveMaxPool1dImpl::forward(const Tensor& x) { return adaptive_max_pool1d(x, options.output_size()); }
std::pair<Tensor, Tensor> AdaptiveMaxPool1dImpl::forward_with_indices(const Tensor& x) {
  return adaptive_max_pool1d_with_indices(x, options.output_size());
}
void AdaptiveMaxPool1dImpl::pretty_print(std::ostream& os) const { print_adaptive(os, "AdaptiveMaxPool1d", options); }

AdaptiveMaxPool2dImpl::AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& o)
    : Module("AdaptiveMaxPool2d"), options(o) {
  check_list("AdaptiveMaxPool2d", "output_size", o.output_size(), 2, false);
}
Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& x) { return adaptive_max_pool2d(x, options.output_size()); }
std::pair<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& x) {
  return adaptive_max_pool2d_with_indices(x, options.output_size());
}
void AdaptiveMaxPool2dImpl::pretty_print(std::ostream& os) const { print_adaptive(os, "AdaptiveMaxPool2d", options); }

}  // namespace ag::nn
