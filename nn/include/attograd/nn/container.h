#pragma once
/// \file
/// Containers, as LibTorch's / PyTorch's: ModuleList (children "0", "1", ...), ModuleDict
/// (children under their keys), ParameterList (parameters "0", "1", ...), ParameterDict
/// (parameters under their keys) and Sequential (calls its children in order). State-dict
/// keys are PyTorch's: "layers.0.weight", "heads.cls.bias", "scales.1", "gains.a".
#include <concepts>
#include <deque>
#include <functional>
#include <map>

#include "attograd/nn/module.h"

namespace ag::nn {

namespace detail {
/// Python's list index: i in [-n, n), negative counts from the end; IndexError otherwise
/// ("<who>: index 5 is out of range for 2 ...").
std::size_t wrap_index(int64_t i, std::size_t n, const char* who, const char* what);
/// A holder (nn::Linear) or a shared_ptr to a module.
template <class M>
concept ModuleRef = std::convertible_to<M, std::shared_ptr<Module>> || requires(const M& m) {
  { m.ptr() } -> std::convertible_to<std::shared_ptr<Module>>;
};
/// The shared_ptr<Module> of a holder (nn::Linear) or of a shared_ptr<M>.
template <ModuleRef M>
std::shared_ptr<Module> module_ptr(const M& m) {
  if constexpr (requires { m.ptr(); })
    return m.ptr();
  else
    return m;
}
}  // namespace detail

// ---- ModuleList ----
/// An indexable list of child modules registered as "0", "1", ...; no forward.
///   nn::ModuleList layers(nn::Linear(4, 8), nn::ReLU());  layers->append(nn::Linear(8, 2));
///   (*layers)[-1]  // the last one, as Python's layers[-1]
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  /// LibTorch's variadic constructor: holders or shared_ptrs, in order.
  template <detail::ModuleRef... Ms>
  requires(sizeof...(Ms) > 0) explicit ModuleListImpl(const Ms&... ms) : Module("ModuleList") { (push_back(ms), ...); }
  /// Appends m (a holder or a shared_ptr), registered under the next index.
  template <class M>
  void push_back(const M& m) {
    push_back_ptr(detail::module_ptr(m));
  }
  /// PyTorch's spelling of push_back.
  template <class M>
  void append(const M& m) {
    push_back(m);
  }
  /// Appends a module given by pointer.
  void push_back_ptr(std::shared_ptr<Module> m);
  /// Appends every module of another ModuleList (or of a vector of holders / pointers).
  template <class Container>
  void extend(const Container& ms) {
    if constexpr (requires { ms.ptr(); }) {
      auto items = ms->items_;  // a copy: extending a list by itself stays finite
      for (auto& m : items) push_back_ptr(m);
    } else {
      for (const auto& m : ms) push_back(m);
    }
  }
  /// Python's list.insert for index in [-n, n]: m lands at index and later modules are
  /// renamed one up ("1" -> "2"); IndexError outside.
  template <class M>
  void insert(int64_t index, const M& m) {
    insert_ptr(index, detail::module_ptr(m));
  }
  /// insert() for a module given by pointer.
  void insert_ptr(int64_t index, std::shared_ptr<Module> m);
  /// Number of modules.
  std::size_t size() const { return items_.size(); }
  /// True with no modules (LibTorch's is_empty).
  bool is_empty() const { return items_.empty(); }
  /// Module i as a base pointer; negative i counts from the end, as Python; IndexError
  /// when out of range.
  const std::shared_ptr<Module>& operator[](int64_t i) const;
  /// LibTorch's ptr(i): operator[].
  const std::shared_ptr<Module>& ptr(int64_t i) const { return (*this)[i]; }
  /// LibTorch's ptr<T>(i): the i-th module as its concrete type, without a cast at the
  /// call; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> ptr(int64_t i) const {
    return at<T>(i);
  }
  /// The i-th module as its concrete type; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
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

// ---- ModuleDict ----
/// Child modules under string keys, in insertion order; no forward.
///   nn::ModuleDict heads({{"cls", nn::Linear(8, 3).ptr()}, {"reg", nn::Linear(8, 1).ptr()}});
///   heads["cls"], heads->at<nn::LinearImpl>("cls"), state-dict keys "cls.weight", ...
class ModuleDictImpl : public Module {
 public:
  /// (key, module) pairs, as LibTorch's constructor.
  using Items = std::vector<std::pair<std::string, std::shared_ptr<Module>>>;
  ModuleDictImpl() : Module("ModuleDict") {}
  /// The modules in order; a key twice is a ValueError.
  explicit ModuleDictImpl(const Items& modules) : Module("ModuleDict") { update(modules); }
  /// Adds m under key, or replaces the module already there in its place (Python's
  /// d[key] = m). A key must be non-empty without '.' (ValueError).
  template <class M>
  void insert(const std::string& key, const M& m) {
    insert_ptr(key, detail::module_ptr(m));
  }
  /// insert() for a module given by pointer.
  void insert_ptr(const std::string& key, std::shared_ptr<Module> m);
  /// insert() of each pair, in order.
  void update(const Items& modules);
  /// insert() of every item of another ModuleDict.
  void update(const ModuleDictImpl& other) { update(other.items()); }
  /// The module under key; KeyError when absent.
  const std::shared_ptr<Module>& operator[](const std::string& key) const;
  /// The module under key as its concrete type; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> at(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[key]);
    AG_CHECK(p != nullptr, ValueError, "ModuleDict: item '", key, "' is a ", (*this)[key]->type_name(),
             ", not the requested type");
    return p;
  }
  /// True when a module is stored under key.
  bool contains(const std::string& key) const;
  /// Removes and returns the module under key; KeyError when absent.
  std::shared_ptr<Module> pop(const std::string& key);
  /// Removes every module.
  void clear();
  /// The keys in insertion order.
  std::vector<std::string> keys() const;
  /// The modules in insertion order.
  std::vector<std::shared_ptr<Module>> values() const;
  /// (key, module) pairs in insertion order.
  const Items& items() const { return named_children(); }
  /// Number of modules.
  std::size_t size() const { return items().size(); }
  /// True with no modules.
  bool is_empty() const { return items().empty(); }
  /// First (key, module) pair.
  auto begin() const { return items().begin(); }
  /// Past the last pair.
  auto end() const { return items().end(); }
};
/// The holder of ModuleDictImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ModuleDict);

// ---- ParameterList ----
/// Parameters registered as "0", "1", ... (state-dict keys "scales.0", ...); each gets
/// requires_grad, as PyTorch's nn.Parameter.
class ParameterListImpl : public Module {
 public:
  ParameterListImpl() : Module("ParameterList") {}
  /// The parameters in order.
  explicit ParameterListImpl(const std::vector<Tensor>& params) : Module("ParameterList") { extend(params); }
  /// Appends p under the next index; returns the registered handle.
  Tensor& append(Tensor p);
  /// append() of each tensor, in order.
  void extend(const std::vector<Tensor>& params) {
    for (const auto& p : params) append(p);
  }
  /// Parameter i; negative i counts from the end; IndexError when out of range.
  Tensor& operator[](int64_t i);
  /// Parameter i; negative i counts from the end; IndexError when out of range.
  const Tensor& operator[](int64_t i) const;
  /// LibTorch's at(i): operator[].
  Tensor& at(int64_t i) { return (*this)[i]; }
  /// Number of parameters.
  std::size_t size() const { return items_.size(); }
  /// True with no parameters.
  bool is_empty() const { return items_.empty(); }
  /// First parameter.
  auto begin() const { return items_.begin(); }
  /// Past the last parameter.
  auto end() const { return items_.end(); }

 private:
  std::deque<Tensor> items_;  ///< registered by address: a deque keeps them in place
};
/// The holder of ParameterListImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ParameterList);

// ---- ParameterDict ----
/// Parameters under string keys, in insertion order (state-dict keys "gains.a", ...); each
/// gets requires_grad, as PyTorch's nn.Parameter.
class ParameterDictImpl : public Module {
 public:
  /// (key, tensor) pairs.
  using Items = std::vector<std::pair<std::string, Tensor>>;
  ParameterDictImpl() : Module("ParameterDict") {}
  /// The parameters in order.
  explicit ParameterDictImpl(const Items& params) : Module("ParameterDict") { update(params); }
  /// Adds p under key, or replaces the parameter already there in its place (Python's
  /// d[key] = p); returns the registered handle.
  Tensor& insert(const std::string& key, Tensor p);
  /// insert() of each pair, in order.
  void update(const Items& params);
  /// insert() of every item of another ParameterDict.
  void update(const ParameterDictImpl& other) { update(other.items()); }
  /// The parameter under key; KeyError when absent.
  Tensor& get(const std::string& key);
  /// The parameter under key; KeyError when absent.
  const Tensor& get(const std::string& key) const;
  /// get(key).
  Tensor& operator[](const std::string& key) { return get(key); }
  /// get(key).
  const Tensor& operator[](const std::string& key) const { return get(key); }
  /// True when a parameter is stored under key.
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  /// Removes and returns the parameter under key; KeyError when absent.
  Tensor pop(const std::string& key);
  /// Removes every parameter.
  void clear();
  /// The keys in insertion order.
  std::vector<std::string> keys() const;
  /// The parameters in insertion order.
  std::vector<Tensor> values() const;
  /// (key, parameter) pairs in insertion order.
  Items items() const { return named_parameters(false, false); }
  /// Number of parameters.
  std::size_t size() const { return index_.size(); }
  /// True with no parameters.
  bool is_empty() const { return index_.empty(); }

 private:
  std::map<std::string, Tensor*> index_;  ///< key -> the registered handle
};
/// The holder of ParameterDictImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(ParameterDict);

// ---- Sequential ----
/// Children applied in order, each to the previous one's output.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  /// Shorthand for the options constructor.
  template <class... Holders>
  explicit SequentialImpl(const Holders&... ms) : Module("Sequential") {
    (push_back(ms), ...);
  }
  /// Any module whose forward maps one Tensor to one Tensor; it is called as through its
  /// holder, so its hooks run (as PyTorch's Sequential calls module(input)).
  template <class Holder>
  void push_back(const Holder& m) {
    auto impl = m.ptr();
    register_module(std::to_string(steps_.size()), impl);
    steps_.push_back([impl](const Tensor& x) -> Tensor { return ::ag::detail::call_module(*impl, x); });
    modules_.push_back(impl);
  }
  /// Module i (LibTorch's seq[i]); negative i counts from the end; IndexError when out of range.
  const std::shared_ptr<Module>& operator[](int64_t i) const;
  /// LibTorch's ptr(i): operator[].
  const std::shared_ptr<Module>& ptr(int64_t i) const { return (*this)[i]; }
  /// LibTorch's ptr<T>(i): module i as its concrete type; ValueError when it is not a T.
  template <class T>
  std::shared_ptr<T> ptr(int64_t i) const {
    auto p = std::dynamic_pointer_cast<T>((*this)[i]);
    AG_CHECK(p != nullptr, ValueError, "Sequential: item ", i, " is a ", (*this)[i]->type_name(),
             ", not the requested type");
    return p;
  }
  /// The same (LibTorch's at<T>(i) returns a reference; here the shared pointer, as ModuleList's).
  template <class T>
  std::shared_ptr<T> at(int64_t i) const {
    return ptr<T>(i);
  }
  /// Runs every child in order on x; the last child's output.
  Tensor forward(const Tensor& x) const {
    Tensor y = x;
    for (const auto& f : steps_) y = f(y);
    return y;
  }
  /// Number of modules.
  std::size_t size() const { return steps_.size(); }
  /// The first module (iteration as LibTorch's Sequential).
  auto begin() const { return modules_.begin(); }
  /// Past the last module.
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
  std::vector<std::shared_ptr<Module>> modules_;
};
/// The holder of SequentialImpl (LibTorch's TORCH_MODULE): copies share one module.
AG_MODULE(Sequential);

}  // namespace ag::nn
