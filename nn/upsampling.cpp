// nn::Upsample: the options checked once at construction (what does not depend on the
// input), forward through interpolate, printing as PyTorch's repr.
#include "attograd/nn/upsampling.h"

#include <charconv>
#include <ostream>
#include <string>

namespace ag::nn {
namespace {

// Python's repr of a float: the shortest text that reads back, with ".0" on whole numbers.
std::string py_float(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".einn") == std::string::npos) s += ".0";  // 2 -> 2.0; not 1e+20, inf, nan
  return s;
}

// PyTorch prints what it was given: one value bare, several as a tuple.
template <class T, class F>
void print_list(std::ostream& os, const std::vector<T>& v, F&& item) {
  if (v.size() == 1) {
    os << item(v[0]);
    return;
  }
  os << '(';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << item(v[i]);
  os << ')';
}

}  // namespace

UpsampleImpl::UpsampleImpl(const UpsampleOptions& o) : Module("Upsample"), options(o) {
  AG_CHECK(o.size().has_value() != o.scale_factor().has_value(), ValueError,
           "Upsample: exactly one of size or scale_factor should be defined, got ", o.size() ? "both" : "neither");
  const InterpolateMode m = o.mode();
  AG_CHECK(!o.align_corners() || m == InterpolateMode::linear || m == InterpolateMode::bilinear, ValueError,
           "Upsample: align_corners option can only be set with the interpolating modes linear | bilinear, not ",
           interpolate_mode_name(m));
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  InterpolateFuncOptions f;
  if (options.size()) f.size(*options.size());
  if (options.scale_factor()) f.scale_factor(*options.scale_factor());
  f.mode(options.mode())
      .align_corners(options.align_corners())
      .recompute_scale_factor(options.recompute_scale_factor());
  return interpolate(input, f);
}

// Upsample(scale_factor=2.0, mode=nearest), Upsample(size=(4, 6), mode=bilinear).
void UpsampleImpl::pretty_print(std::ostream& os) const {
  os << "Upsample(";
  if (options.scale_factor()) {
    os << "scale_factor=";
    print_list(os, *options.scale_factor(), py_float);
  } else {
    os << "size=";
    print_list(os, *options.size(), [](int64_t v) { return v; });
  }
  os << ", mode=" << interpolate_mode_name(options.mode()) << ')';
}

}  // namespace ag::nn
