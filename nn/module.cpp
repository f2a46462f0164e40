#include "attograd/nn/module.h"

#include <algorithm>
#include <sstream>

#include "attograd/autograd.h"

namespace ag::nn {

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  AG_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError, type_name_,
           ": parameter name '", name, "' must be non-empty and contain no '.'");
  AG_CHECK(t.defined(), ValueError, type_name_, ": parameter '", name, "' is undefined");
  for (auto& [n, p] : params_)
    AG_CHECK(n != name, ValueError, type_name_, ": parameter '", name, "' is already registered");
  if (requires_grad) t.requires_grad_(true);
  params_.emplace_back(name, t);
  return params_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
  AG_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError, type_name_,
           ": buffer name '", name, "' must be non-empty and contain no '.'");
  buffers_.emplace_back(name, t);
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  AG_CHECK(m != nullptr, ValueError, type_name_, ": submodule '", name, "' is empty");
  AG_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError, type_name_,
           ": submodule name '", name, "' must be non-empty and contain no '.'");
  for (auto& [n, c] : children_)
    AG_CHECK(n != name, ValueError, type_name_, ": submodule '", name, "' is already registered");
  children_.emplace_back(name, std::move(m));
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t.defined()) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (const auto& [n, c] : children_) c->collect(prefix + n + ".", params, true, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, recurse, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, recurse, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [n, c] : children_) out.push_back(c);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zero_grad() {
  for (auto& t : parameters()) t.zero_grad();
}

void Module::to(DType dtype) {
  AG_CHECK(is_floating(dtype), DTypeError, type_name_, ".to: modules convert to floating dtypes only, got ",
           dtype);
  NoGradGuard no_grad;
  auto convert = [dtype](Tensor& t) {
    if (!t.is_floating_point() || t.dtype() == dtype) return;
    Tensor c = t.to(dtype);
    TensorImpl* impl = t.impl();  // swap the data under the handle everyone holds
    impl->storage = c.storage();
    impl->shape = c.shape();
    impl->strides = c.strides();
    impl->offset = c.offset();
    impl->dtype = dtype;
    impl->grad.reset();
  };
  for (auto& [n, t] : named_parameters()) convert(t);
  for (auto& [n, t] : named_buffers()) convert(t);
}

TensorMap Module::state_dict() const {
  TensorMap out;
  for (auto& [n, t] : named_parameters()) out.insert(n, t.detach());
  for (auto& [n, t] : named_buffers()) out.insert(n, t.detach());
  return out;
}

void Module::load_state_dict(const TensorMap& state, bool strict) {
  auto own = named_parameters();
  for (auto& b : named_buffers()) own.push_back(b);
  std::vector<std::string> missing, unexpected, mismatched;
  for (auto& [n, t] : own) {
    if (!state.contains(n)) {
      missing.push_back(n);
      continue;
    }
    const Tensor& src = state.at(n);
    if (!(src.shape() == t.shape()))
      mismatched.push_back(detail::cat("'", n, "': checkpoint shape ", src.shape(), ", module shape ",
                                       t.shape()));
    else if (t.is_floating_point() != src.is_floating_point())
      mismatched.push_back(detail::cat("'", n, "': checkpoint dtype ", src.dtype(), ", module dtype ",
                                       t.dtype()));
  }
  for (auto& [n, t] : state) {
    bool known = std::any_of(own.begin(), own.end(), [&](auto& p) { return p.first == n; });
    if (!known) unexpected.push_back(n);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  AG_CHECK(mismatched.empty(), ShapeError, type_name_, ".load_state_dict: ", join(mismatched));
  AG_CHECK(!strict || (missing.empty() && unexpected.empty()), ValueError, type_name_,
           ".load_state_dict: missing keys: [", join(missing), "]; unexpected keys: [", join(unexpected),
           "]");
  NoGradGuard no_grad;
  for (auto& [n, t] : own)
    if (state.contains(n)) t.copy_(state.at(n));
}

void Module::pretty_print(std::ostream& os) const { os << type_name_; }

namespace {
void print_tree(std::ostream& os, const Module& m, int indent) {
  m.pretty_print(os);
  if (m.named_children().empty()) return;
  os << "(\n";
  for (auto& [n, c] : m.named_children()) {
    os << std::string(indent + 2, ' ') << '(' << n << "): ";
    print_tree(os, *c, indent + 2);
    os << '\n';
  }
  os << std::string(indent, ' ') << ')';
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& m) {
  print_tree(os, m, 0);
  return os;
}

void save(const Module& m, const std::string& path) { save_safetensors(path, m.state_dict()); }

void load(Module& m, const std::string& path, bool strict) {
  m.load_state_dict(load_safetensors(path), strict);
}

}  // namespace ag::nn
