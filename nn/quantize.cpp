// ag::quant::quantize_ (attograd/nn/quantize.h): walks the module tree and swaps the
// weights of the selected Linears for their quantized form.
#include "attograd/nn/quantize.h"

#include <memory>

#include "attograd/detail/error_context.h"

namespace ag::quant {

QuantConfig int8_weight_only() { return {Format::int8_weight_only, 0}; }

QuantConfig int8_dynamic_activation_int8_weight() { return {Format::int8_dynamic_activation_int8_weight, 0}; }

QuantConfig int4_weight_only(int64_t group_size) {
  AG_CHECK(group_size == 32 || group_size == 64, ValueError, "int4_weight_only: group_size must be 32 or 64, got ",
           group_size);
  return {Format::int4_weight_only, group_size};
}

nn::Linear quantized_linear(const nn::Linear& linear, const QuantConfig& config) {
  AG_CHECK(!linear->is_quantized(), ValueError, "quantized_linear: the Linear is quantized already (",
           to_string(linear->qweight.format), ")");
  nn::Linear out(linear->options);
  if (linear->bias.defined()) {
    NoGradGuard ng;
    out->bias.copy_(linear->bias);
  }
  out->set_quantized_weight(quantize_weight(linear->weight, config.format, config.group_size));
  return out;
}

int64_t quantize_(nn::Module& model, const QuantConfig& config, const FilterFn& filter_fn) {
  int64_t count = 0;
  // named_modules of a shared module needs shared_from_this; a stack-built module has
  // none, so walk from the children of `model` and handle `model` itself by hand.
  std::vector<std::pair<std::string, nn::Module*>> all{{"", &model}};
  for (const auto& [name, child] : model.named_children())
    for (const auto& [sub, m] : child->named_modules(name)) all.emplace_back(sub, m.get());
  for (const auto& [fqn, m] : all) {
    auto* lin = dynamic_cast<nn::LinearImpl*>(m);
    if (!lin || lin->is_quantized()) continue;
    if (filter_fn && !filter_fn(*lin, fqn)) continue;
    const std::string who = fqn.empty() ? "quantize_" : "quantize_: " + fqn;
    detail::in_op(who.c_str(),
                  [&] { lin->set_quantized_weight(quantize_weight(lin->weight, config.format, config.group_size)); });
    ++count;
  }
  return count;
}

}  // namespace ag::quant
