// Module table lines: convolutions (attograd/nn/conv.h), pooling (pooling.h) and
// Upsample (upsampling.h). Printing differences from PyTorch: AvgPool1d's sizes as
// numbers (torch shows 1-tuples, "(2,)") and C++'s false.
#include "module_table.h"

namespace module_table {
namespace {
const char* padding_mode(nn::ConvPaddingMode m) {
  switch (m) {
    case nn::ConvPaddingMode::zeros: return "zeros";
    case nn::ConvPaddingMode::reflect: return "reflect";
    case nn::ConvPaddingMode::replicate: return "replicate";
    case nn::ConvPaddingMode::circular: return "circular";
  }
  return "?";
}
template <std::size_t D>
Json conv_defaults() {
  nn::ConvOptions<D> o(2, 3, 3);
  return Json{{"stride", one(o.stride())},
              {"padding", one(o.padding().amounts)},
              {"dilation", one(o.dilation())},
              {"groups", o.groups()},
              {"bias", o.bias()},
              {"padding_mode", padding_mode(o.padding_mode())}};
}
template <std::size_t D>
Json conv_transpose_defaults() {
  nn::ConvTransposeOptions<D> o(2, 3, 3);
  return Json{{"stride", one(o.stride())},
              {"padding", one(o.padding())},
              {"output_padding", one(o.output_padding())},
              {"groups", o.groups()},
              {"bias", o.bias()},
              {"dilation", one(o.dilation())}};
}
// An unset stride is torch's None (the kernel size).
inline Json stride_of(const nn::ExpandingArray& s) { return s.empty() ? Json(nullptr) : one(s); }
template <std::size_t D>
Json maxpool_defaults() {
  nn::MaxPoolOptions<D> o(2);
  return Json{{"stride", stride_of(o.stride())},
              {"padding", one(o.padding())},
              {"dilation", one(o.dilation())},
              {"ceil_mode", o.ceil_mode()}};
}
template <std::size_t D>
Json avgpool_defaults() {
  nn::AvgPoolOptions<D> o(2);
  Json j{{"stride", stride_of(o.stride())},
         {"padding", one(o.padding())},
         {"ceil_mode", o.ceil_mode()},
         {"count_include_pad", o.count_include_pad()}};
  if (D == 2) j["divisor_override"] = opt(o.divisor_override());
  return j;
}
}  // namespace

AG_MODULE_TABLE(conv) {
  return {
      {.name = "Conv1d",
       .make = [] { return unary(nn::Conv1d(2, 3, 3)); },
       .inputs = {{1, 2, 5}},
       .outputs = {{1, 3, 3}},
       .defaults = conv_defaults<1>},
      {.name = "Conv2d padding groups",
       .make = [] { return unary(nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1).groups(2))); },
       .inputs = {{1, 2, 3, 3}},
       .outputs = {{1, 4, 3, 3}},
       .defaults = conv_defaults<2>,
       .torch = "Conv2d"},
      {.name = "ConvTranspose1d stride 2",
       .make = [] { return unary(nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 3, 3).stride(2))); },
       .inputs = {{1, 2, 3}},
       .outputs = {{1, 3, 7}},
       .defaults = conv_transpose_defaults<1>,
       .torch = "ConvTranspose1d"},
      {.name = "ConvTranspose2d",
       .make = [] { return unary(nn::ConvTranspose2d(2, 3, 3)); },
       .inputs = {{1, 2, 2, 2}},
       .outputs = {{1, 3, 4, 4}},
       .defaults = conv_transpose_defaults<2>},

      // ---- pooling ----
      {.name = "MaxPool1d",
       .make = [] { return unary(nn::MaxPool1d(2)); },
       .inputs = {{1, 2, 4}},
       .outputs = {{1, 2, 2}},
       .defaults = maxpool_defaults<1>,
       .diffs = {kFalse}},
      {.name = "MaxPool2d",
       .make = [] { return unary(nn::MaxPool2d(2)); },
       .inputs = {{1, 2, 4, 4}},
       .outputs = {{1, 2, 2, 2}},
       .defaults = maxpool_defaults<2>,
       .diffs = {kFalse}},
      {.name = "AvgPool1d",
       .make = [] { return unary(nn::AvgPool1d(2)); },
       .inputs = {{1, 2, 4}},
       .outputs = {{1, 2, 2}},
       .defaults = avgpool_defaults<1>,
       .diffs = {{"(2,)", "2"}, {"(0,)", "0"}}},
      {.name = "AvgPool2d",
       .make = [] { return unary(nn::AvgPool2d(2)); },
       .inputs = {{1, 2, 4, 4}},
       .outputs = {{1, 2, 2, 2}},
       .defaults = avgpool_defaults<2>},
      {.name = "AdaptiveAvgPool1d",
       .make = [] { return unary(nn::AdaptiveAvgPool1d(2)); },
       .inputs = {{1, 2, 5}},
       .outputs = {{1, 2, 2}}},
      {.name = "AdaptiveAvgPool2d",
       .make = [] { return unary(nn::AdaptiveAvgPool2d(2)); },
       .inputs = {{1, 2, 5, 4}},
       .outputs = {{1, 2, 2, 2}}},
      {.name = "AdaptiveMaxPool1d",
       .make = [] { return unary(nn::AdaptiveMaxPool1d(2)); },
       .inputs = {{1, 2, 5}},
       .outputs = {{1, 2, 2}}},
      {.name = "AdaptiveMaxPool2d",
       .make = [] { return unary(nn::AdaptiveMaxPool2d(2)); },
       .inputs = {{1, 2, 5, 4}},
       .outputs = {{1, 2, 2, 2}}},
      {.name = "Upsample scale_factor 2",
       .make = [] { return unary(nn::Upsample(nn::UpsampleOptions().scale_factor({2.0}))); },
       .inputs = {{1, 2, 3}},
       .outputs = {{1, 2, 6}},
       .defaults =
           [] {
             nn::UpsampleOptions o;
             return Json{{"size", opt(o.size())},
                         {"scale_factor", opt(o.scale_factor())},
                         {"mode", o.mode() == InterpolateMode::nearest ? "nearest" : "other"},
                         {"align_corners", opt(o.align_corners())},
                         {"recompute_scale_factor", opt(o.recompute_scale_factor())}};
           },
       .torch = "Upsample"},
  };
}

}  // namespace module_table
