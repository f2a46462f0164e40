#include "attograd/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>

#include "attograd/autograd.h"

namespace ag::nn {

namespace {
using Registry = std::vector<std::pair<std::string, Tensor*>>;
bool has(const Registry& reg, const std::string& name) {
  return std::any_of(reg.begin(), reg.end(), [&](const auto& e) { return e.first == name; });
}
}  // namespace

// Module(): the demangled dynamic type, "ns::NetImpl" -> "Net". Computed on first use,
// after construction, when typeid sees the most derived class.
// A module made with Module() keeps type_name_ empty for good and takes its name from one
// table per dynamic type, filled under a lock: two threads asking at once do not race.
const std::string& Module::type_name() const {
  if (!type_name_.empty()) return type_name_;  // set by the constructor, never written again
  static std::mutex mu;
  static std::unordered_map<std::type_index, std::string> names;  // node-based: references stay valid
  const std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = names.try_emplace(std::type_index(typeid(*this)));
  if (!inserted) return it->second;
  const char* mangled = typeid(*this).name();
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> dem(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string n = status == 0 && dem ? dem.get() : mangled;
  if (auto lt = n.find('<'); lt != std::string::npos) {  // keep template arguments whole
    auto colon = n.rfind("::", lt);
    if (colon != std::string::npos) n = n.substr(colon + 2);
  } else if (auto colon = n.rfind("::"); colon != std::string::npos) {
    n = n.substr(colon + 2);
  }
  if (n.size() > 4 && n.ends_with("Impl")) n.resize(n.size() - 4);
  it->second = std::move(n);
  return it->second;
}

// One namespace for parameters, buffers and submodules, as a PyTorch module's attributes:
// a buffer named like a parameter would shadow it in the state dict (two tensors under
// one key). The same kind twice stays the ValueError it was.
void Module::check_new(const char* what, const std::string& name) const {
  AG_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError, type_name(), ": ", what, " name '", name,
           "' must be non-empty and contain no '.'");
  const bool param = has(params_, name), buffer = has(buffers_, name);
  const bool child = std::any_of(children_.begin(), children_.end(), [&](const auto& c) { return c.first == name; });
  const std::string_view kind = what;
  AG_CHECK(!(kind == "parameter" ? param
             : kind == "buffer"  ? buffer
                                 : child),
           ValueError, type_name(), ": ", what, " '", name, "' is already registered");
  AG_CHECK(!param && !buffer && !child, KeyError, type_name(), ": cannot register ", what, " '", name, "': attribute '",
           name, "' already exists (as a ",
           param    ? "parameter"
           : buffer ? "buffer"
                    : "submodule",
           ")");
}

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_new("parameter", name);  // before owned_ grows
  AG_CHECK(t.defined(), ValueError, type_name(), ": parameter '", name, "' is undefined");
  owned_.push_back(std::move(t));
  return register_parameter(name, &owned_.back(), requires_grad);
}

Tensor& Module::register_parameter(const std::string& name, Tensor* member, bool requires_grad) {
  check_new("parameter", name);
  AG_CHECK(member != nullptr && member->defined(), ValueError, type_name(), ": parameter '", name, "' is undefined");
  if (requires_grad) member->requires_grad_(true);
  params_.emplace_back(name, member);
  return *member;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
  check_new("buffer", name);
  owned_.push_back(std::move(t));
  return register_buffer(name, &owned_.back());
}

Tensor& Module::register_buffer(const std::string& name, Tensor* member) {
  check_new("buffer", name);
  AG_CHECK(member != nullptr, ValueError, type_name(), ": buffer '", name, "' is a null pointer");
  buffers_.emplace_back(name, member);
  return *member;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  AG_CHECK(m != nullptr, ValueError, type_name(), ": submodule '", name, "' is empty");
  check_new("submodule", name);
  children_.emplace_back(name, std::move(m));
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t->defined()) out.emplace_back(prefix + n, *t);
  if (!recurse) return;
  for (const auto& [n, c] : children_) c->collect(prefix + n + ".", params, true, out);
}

namespace {
// Keeps the first name of each tensor (by handle identity, as PyTorch's memo set).
std::vector<std::pair<std::string, Tensor>> unique(std::vector<std::pair<std::string, Tensor>> all) {
  std::unordered_set<const TensorImpl*> seen;
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& e : all)
    if (seen.insert(e.second.impl()).second) out.push_back(std::move(e));
  return out;
}
}  // namespace

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse, bool remove_duplicate) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, recurse, out);
  return remove_duplicate ? unique(std::move(out)) : out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse, bool remove_duplicate) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, recurse, out);
  return remove_duplicate ? unique(std::move(out)) : out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

namespace {
template <class Reg>
auto find_entry(Reg& reg, const std::string& name) {
  return std::find_if(reg.begin(), reg.end(), [&](const auto& e) { return e.first == name; });
}
}  // namespace

std::shared_ptr<Module> Module::replace_module(const std::string& name, std::shared_ptr<Module> m) {
  AG_CHECK(m != nullptr, ValueError, type_name(), ".replace_module: submodule '", name, "' is empty");
  auto it = find_entry(children_, name);
  AG_CHECK(it != children_.end(), KeyError, type_name(), ".replace_module: there is no submodule '", name, "'");
  it->second = std::move(m);
  return it->second;
}

void Module::unregister_module(const std::string& name) {
  auto it = find_entry(children_, name);
  AG_CHECK(it != children_.end(), KeyError, type_name(), ".unregister_module: there is no submodule '", name, "'");
  children_.erase(it);
}

Tensor& Module::replace_parameter(const std::string& name, Tensor t, bool requires_grad) {
  auto it = find_entry(params_, name);
  AG_CHECK(it != params_.end(), KeyError, type_name(), ": there is no parameter '", name, "' to replace");
  AG_CHECK(t.defined(), ValueError, type_name(), ": parameter '", name, "' is undefined");
  if (requires_grad) t.requires_grad_(true);
  owned_.push_back(std::move(t));
  it->second = &owned_.back();
  return owned_.back();
}

void Module::unregister_parameter(const std::string& name) {
  auto it = find_entry(params_, name);
  AG_CHECK(it != params_.end(), KeyError, type_name(), ": there is no parameter '", name, "'");
  params_.erase(it);
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [n, c] : children_) out.push_back(c);
  return out;
}

namespace {
void walk(const std::string& name, const std::shared_ptr<Module>& m, bool remove_duplicate,
          std::unordered_set<const Module*>& seen, std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
  if (remove_duplicate && !seen.insert(m.get()).second) return;
  out.emplace_back(name, m);
  for (auto& [n, c] : m->named_children()) walk(name.empty() ? n : name + "." + n, c, remove_duplicate, seen, out);
}
}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(const std::string& prefix,
                                                                                   bool remove_duplicate) const {
  // Children are handed out as shared_ptr<Module> from a const module already.
  auto self = std::const_pointer_cast<Module>(weak_from_this().lock());
  AG_CHECK(self != nullptr, ValueError, type_name(),
           ".named_modules: the module is not owned by a shared_ptr (make it through a holder, "
           "nn::Linear(...), or std::make_shared)");
  std::unordered_set<const Module*> seen;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  walk(prefix, self, remove_duplicate, seen, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [n, m] : named_modules()) out.push_back(m);
  return out;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  AG_CHECK(fn != nullptr, ValueError, type_name(), ".apply: the function is empty");  // not std::bad_function_call
  for (auto& [n, c] : children_) c->apply(fn);
  fn(*this);
  return *this;
}

int64_t Module::num_parameters(bool trainable_only) const {
  int64_t n = 0;
  for (auto& t : parameters())
    if (!trainable_only || t.requires_grad()) n += t.numel();
  return n;
}

Module& Module::requires_grad_(bool on) {
  for (auto& t : parameters()) t.requires_grad_(on);
  return *this;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& t : parameters()) ag::detail::zero_grad_param(t, set_to_none);
}

void Module::to(DType dtype) {
  AG_CHECK(is_floating(dtype), DTypeError, type_name(), ".to: modules convert to floating dtypes only, got ", dtype);
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
  // Every name, tied ones included (PyTorch's state_dict keeps both keys), in PyTorch's
  // order: each module's parameters, then its buffers, then its children's, depth first
  // (bn.weight, bn.bias, bn.running_mean, ... before the next layer's weight).
  std::vector<std::pair<std::string, Tensor>> entries;
  auto visit = [&entries](auto&& self, const Module& m, const std::string& prefix) -> void {
    m.collect(prefix, true, false, entries);
    m.collect(prefix, false, false, entries);
    for (const auto& [n, c] : m.children_) self(self, *c, prefix + n + ".");
  };
  visit(visit, *this, "");
  for (auto& [n, t] : entries) out.insert(n, t.detach());
  return out;
}

void Module::load_state_dict(const TensorMap& state, bool strict) {
  // Every name, tied ones included: each name is copied into its tensor in order, so
  // for a tied pair the later name wins, as torch's load_state_dict (which copies
  // module by module, parents before children, without checking that they agree).
  auto own = named_parameters(true, false);
  for (auto& b : named_buffers(true, false)) own.push_back(b);
  std::vector<std::string> missing, unexpected, mismatched;
  std::unordered_set<std::string> own_names;  // a set: a 100k-tensor file loads in O(n)
  for (auto& [n, t] : own) {
    own_names.insert(n);
    if (!state.contains(n)) {
      missing.push_back(n);
      continue;
    }
    const Tensor& src = state.at(n);
    if (!(src.shape() == t.shape()))
      mismatched.push_back(ag::detail::cat("'", n, "': checkpoint shape ", src.shape(), ", module shape ", t.shape()));
    else if (t.is_floating_point() != src.is_floating_point())
      mismatched.push_back(ag::detail::cat("'", n, "': checkpoint dtype ", src.dtype(), ", module dtype ", t.dtype()));
  }
  for (auto& entry : state)
    if (!own_names.count(entry.first)) unexpected.push_back(entry.first);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  AG_CHECK(mismatched.empty(), ShapeError, type_name(), ".load_state_dict: ", join(mismatched));
  AG_CHECK(!strict || (missing.empty() && unexpected.empty()), ValueError, type_name(),
           ".load_state_dict: missing keys: [", join(missing), "]; unexpected keys: [", join(unexpected), "]");
  NoGradGuard no_grad;
  for (auto& [n, t] : own)
    if (state.contains(n)) t.copy_(state.at(n));
}

void Module::pretty_print(std::ostream& os) const { os << type_name(); }

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

void load(Module& m, const std::string& path, bool strict) { m.load_state_dict(load_safetensors(path), strict); }

}  // namespace ag::nn

namespace ag::detail {

void zero_grad_param(Tensor& p, bool set_to_none) {
  if (set_to_none) return p.zero_grad();
  Tensor g = p.grad();
  if (!g.defined()) return;
  NoGradGuard no_grad;
  if (!g.is_leaf() || g.requires_grad()) {  // a create_graph gradient: keep its values, not its graph
    g = g.detach().clone();
    p.set_grad(g);
  }
  g.fill_(0);
}

}  // namespace ag::detail
