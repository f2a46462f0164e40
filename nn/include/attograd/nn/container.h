#pragma once
// ModuleList (children named "0", "1", ...) and Sequential (calls them in order).
#include <functional>

#include "attograd/nn/module.h"

namespace ag::nn {

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class Holder>
  void push_back(const Holder& m) {
    push_back_ptr(m.ptr());
  }
  void push_back_ptr(std::shared_ptr<Module> m) {
    register_module(std::to_string(items_.size()), m);
    items_.push_back(std::move(m));
  }
  std::size_t size() const { return items_.size(); }
  const std::shared_ptr<Module>& operator[](std::size_t i) const;
  // The i-th module as its concrete type; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> at(std::size_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    AG_CHECK(p != nullptr, ValueError, "ModuleList: item ", i, " is a ", (*this)[i]->type_name(),
             ", not the requested type");
    return p;
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> items_;
};
AG_MODULE(ModuleList);

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Holders>
  explicit SequentialImpl(const Holders&... ms) : Module("Sequential") {
    (push_back(ms), ...);
  }
  // Any module whose forward maps one Tensor to one Tensor.
  template <class Holder>
  void push_back(const Holder& m) {
    auto impl = m.ptr();
    register_module(std::to_string(steps_.size()), impl);
    steps_.push_back([impl](const Tensor& x) { return impl->forward(x); });
  }
  Tensor forward(const Tensor& x) const {
    Tensor y = x;
    for (const auto& f : steps_) y = f(y);
    return y;
  }
  std::size_t size() const { return steps_.size(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};
AG_MODULE(Sequential);

}  // namespace ag::nn
