#include "attograd/nn/container.h"

namespace ag::nn {

std::size_t detail::wrap_index(int64_t i, std::size_t n, const char* who, const char* what) {
  const auto size = static_cast<int64_t>(n);
  AG_CHECK(i >= -size && i < size, IndexError, who, ": index ", i, " is out of range for ", n, " ", what);
  return static_cast<std::size_t>(i < 0 ? i + size : i);
}

// ---- ModuleList ----
void ModuleListImpl::push_back_ptr(std::shared_ptr<Module> m) {
  register_module(std::to_string(items_.size()), m);
  items_.push_back(std::move(m));
}

void ModuleListImpl::insert_ptr(int64_t index, std::shared_ptr<Module> m) {
  const auto n = static_cast<int64_t>(items_.size());
  AG_CHECK(index >= -n && index <= n, IndexError, "ModuleList.insert: index ", index, " is out of range for ", n,
           " modules");
  AG_CHECK(m != nullptr, ValueError, "ModuleList.insert: the module is empty");
  const auto at = static_cast<std::size_t>(index < 0 ? index + n : index);
  // Children at..n-1 are the last ones registered: re-register them one name up, so the
  // registration (and state-dict) order stays the list order.
  for (std::size_t k = at; k < items_.size(); ++k) unregister_module(std::to_string(k));
  items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(at), std::move(m));
  for (std::size_t k = at; k < items_.size(); ++k) register_module(std::to_string(k), items_[k]);
}

const std::shared_ptr<Module>& ModuleListImpl::operator[](int64_t i) const {
  return items_[detail::wrap_index(i, items_.size(), "ModuleList", "modules")];
}

const std::shared_ptr<Module>& SequentialImpl::operator[](int64_t i) const {
  return modules_[detail::wrap_index(i, modules_.size(), "Sequential", "modules")];
}

// ---- ModuleDict ----
void ModuleDictImpl::insert_ptr(const std::string& key, std::shared_ptr<Module> m) {
  AG_CHECK(m != nullptr, ValueError, "ModuleDict: the module for key '", key, "' is empty");
  if (contains(key))
    replace_module(key, std::move(m));
  else
    register_module(key, std::move(m));
}

void ModuleDictImpl::update(const Items& modules) {
  for (const auto& [key, m] : modules) insert_ptr(key, m);
}

const std::shared_ptr<Module>& ModuleDictImpl::operator[](const std::string& key) const {
  for (const auto& item : items())
    if (item.first == key) return item.second;
  throw KeyError(ag::detail::cat("ModuleDict: there is no module under key '", key, "'"));
}

bool ModuleDictImpl::contains(const std::string& key) const {
  for (const auto& item : items())
    if (item.first == key) return true;
  return false;
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  auto m = (*this)[key];
  unregister_module(key);
  return m;
}

void ModuleDictImpl::clear() {
  for (const auto& key : keys()) unregister_module(key);
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items()) out.push_back(item.first);
  return out;
}

std::vector<std::shared_ptr<Module>> ModuleDictImpl::values() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& item : items()) out.push_back(item.second);
  return out;
}

// ---- ParameterList ----
Tensor& ParameterListImpl::append(Tensor p) {
  AG_CHECK(p.defined(), ValueError, "ParameterList.append: the tensor is undefined");
  items_.push_back(std::move(p));
  return register_parameter(std::to_string(items_.size() - 1), &items_.back());
}

Tensor& ParameterListImpl::operator[](int64_t i) {
  return items_[detail::wrap_index(i, items_.size(), "ParameterList", "parameters")];
}

const Tensor& ParameterListImpl::operator[](int64_t i) const {
  return items_[detail::wrap_index(i, items_.size(), "ParameterList", "parameters")];
}

// ---- ParameterDict ----
Tensor& ParameterDictImpl::insert(const std::string& key, Tensor p) {
  AG_CHECK(p.defined(), ValueError, "ParameterDict: the tensor for key '", key, "' is undefined");
  Tensor& registered = contains(key) ? replace_parameter(key, std::move(p)) : register_parameter(key, std::move(p));
  index_[key] = &registered;
  return registered;
}

void ParameterDictImpl::update(const Items& params) {
  for (const auto& [key, p] : params) insert(key, p);
}

Tensor& ParameterDictImpl::get(const std::string& key) {
  auto it = index_.find(key);
  AG_CHECK(it != index_.end(), KeyError, "ParameterDict: there is no parameter under key '", key, "'");
  return *it->second;
}

const Tensor& ParameterDictImpl::get(const std::string& key) const {
  auto it = index_.find(key);
  AG_CHECK(it != index_.end(), KeyError, "ParameterDict: there is no parameter under key '", key, "'");
  return *it->second;
}

Tensor ParameterDictImpl::pop(const std::string& key) {
  Tensor p = get(key);
  unregister_parameter(key);
  index_.erase(key);
  return p;
}

void ParameterDictImpl::clear() {
  for (const auto& key : keys()) unregister_parameter(key);
  index_.clear();
}

std::vector<std::string> ParameterDictImpl::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items()) out.push_back(item.first);
  return out;
}

std::vector<Tensor> ParameterDictImpl::values() const {
  std::vector<Tensor> out;
  for (const auto& item : items()) out.push_back(item.second);
  return out;
}

}  // namespace ag::nn
