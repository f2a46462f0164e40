#pragma once
/// \file
/// ModuleList (children named "0", "1", ...) and Sequential (calls them in order).
#include <functional>

#include "attograd/nn/module.h"

namespace ag::nn {

/// An indexable list of child modules registered as "0", "1", ...; no forward.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  /// Appends m, registered under the next index.
  template <class Holder>
  void push_back(const Holder& m) {
    push_back_ptr(m.ptr());
  }
  /// Appends a module given by pointer.
  void push_back_ptr(std::shared_ptr<Module> m) {
    register_module(std::to_string(items_.size()), m);
    items_.push_back(std::move(m));
  }
  /// Number of modules.
  std::size_t size() const { return items_.size(); }
  /// Module i as a base pointer (IndexError when out of range).
  const std::shared_ptr<Module>& operator[](std::size_t i) const;
  /// The i-th module as its concrete type; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> at(std::size_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    AG_CHECK(p != nullptr, ValueError, "ModuleList: item ", i, " is a ", (*this)[i]->type_name(),
             ", not the requested type");
    return p;
  }
  /// First module.
  auto begin() const { return items_.begin(); }
  /// Past the last module.
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> items_;
};
/// The holder of ModuleListImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ModuleList);

/// Children applied in order, each to the previous one's output.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  /// Shorthand for the options constructor.
  template <class... Holders>
  explicit SequentialImpl(const Holders&... ms) : Module("Sequential") {
    (push_back(ms), ...);
  }
  /// Any module whose forward maps one Tensor to one Tensor.
  template <class Holder>
  void push_back(const Holder& m) {
    auto impl = m.ptr();
    register_module(std::to_string(steps_.size()), impl);
    steps_.push_back([impl](const Tensor& x) { return impl->forward(x); });
  }
  /// Runs every child in order on x; the last child's output.
  Tensor forward(const Tensor& x) const {
    Tensor y = x;
    for (const auto& f : steps_) y = f(y);
    return y;
  }
  /// Number of modules.
  std::size_t size() const { return steps_.size(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};
/// The holder of SequentialImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Sequential);

}  // namespace ag::nn
