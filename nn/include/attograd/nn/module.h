#pragma once
/// \file
/// nn::Module: named parameters, buffers and children; train/eval; state dicts whose
/// keys are the dotted registration names (encoder.layers.0.linear1.weight), as in
/// PyTorch, so weights move between the two.
///
/// Modules are used through holders, as in LibTorch's TORCH_MODULE:
///   struct LinearImpl : Module { ... };  AG_MODULE(Linear);
///   nn::Linear lin(nn::LinearOptions(4, 5));  Tensor y = lin(x);  lin->weight;
#include <concepts>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attograd/safetensors.h"
#include "attograd/tensor.h"

/// Options fields with chainable setters: `LinearOptions(4, 5).bias(false)`; the reference
/// shows each field as a member variable.
#define AG_ARG(T, name) \
 public: \
  auto name(const T& value)->decltype(*this) { \
    this->name##_ = value; \
    return *this; \
  } \
  const T& name() const noexcept { return this->name##_; } \
\
 private: \
  T name##_

namespace ag::detail {
/// Module::zero_grad's and Optimizer::zero_grad's work on one parameter: drop its .grad,
/// or (set_to_none = false) zero it in place, detached from any graph first.
void zero_grad_param(Tensor& p, bool set_to_none);
}  // namespace ag::detail

namespace ag::nn {

class Module;

// ---- module hooks (PyTorch's register_forward_pre_hook, ...; see register_forward_hook) ----
/// A hook's replacement for the Tensor arguments / results / gradients it was given, or
/// nullopt to keep them (PyTorch's hook returning None).
using HookResult = std::optional<std::vector<Tensor>>;
/// fn(module, inputs): may replace the Tensor arguments before forward.
using ForwardPreHook = std::function<HookResult(Module&, const std::vector<Tensor>& inputs)>;
/// fn(module, inputs, outputs): may replace the Tensor results of forward.
using ForwardHook =
    std::function<HookResult(Module&, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs)>;
/// fn(module, grad_input, grad_output): may replace the gradients w.r.t. the inputs.
using BackwardHook =
    std::function<HookResult(Module&, const std::vector<Tensor>& grad_input, const std::vector<Tensor>& grad_output)>;
/// fn(module, grad_output): may replace the gradients w.r.t. the outputs.
using BackwardPreHook = std::function<HookResult(Module&, const std::vector<Tensor>& grad_output)>;

}  // namespace ag::nn

// In ag::detail, not ag::nn::detail: a public ag::nn::detail would hide ag::detail from
// code in ag::nn that writes detail::cat.
namespace ag::detail {
/// A module's hooks, each under its handle's id, in registration order.
struct ModuleHooks {
  std::vector<std::pair<int64_t, nn::ForwardPreHook>> forward_pre;    ///< register_forward_pre_hook
  std::vector<std::pair<int64_t, nn::ForwardHook>> forward;           ///< register_forward_hook
  std::vector<std::pair<int64_t, nn::BackwardHook>> backward;         ///< register_full_backward_hook
  std::vector<std::pair<int64_t, nn::BackwardPreHook>> backward_pre;  ///< register_full_backward_pre_hook
  /// No hook of any kind.
  bool empty() const { return forward_pre.empty() && forward.empty() && backward.empty() && backward_pre.empty(); }
};

/// Hook callables may return void or an undefined Tensor (keep), a Tensor (the one
/// replacement), a std::vector<Tensor> or a HookResult.
template <class Hook, class F>
Hook adapt_hook(F fn) {
  return Hook([fn = std::move(fn)](auto&... a) mutable -> nn::HookResult {
    using R = std::invoke_result_t<F&, decltype(a)...>;
    if constexpr (std::is_void_v<R>) {
      fn(a...);
      return std::nullopt;
    } else if constexpr (std::is_same_v<std::remove_cvref_t<R>, Tensor>) {
      Tensor t = fn(a...);
      return t.defined() ? nn::HookResult(std::vector<Tensor>{t}) : std::nullopt;
    } else {
      return nn::HookResult(fn(a...));
    }
  });
}
}  // namespace ag::detail

namespace ag::nn {

/// Base of every module: named parameters, buffers and children, train/eval, state dicts with PyTorch's keys.
class Module : public std::enable_shared_from_this<Module> {
 public:
  /// type_name is what printing shows ("Linear").
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  /// A custom module without a name, as PyTorch's `class Net(nn.Module)`: type_name() is
  /// the C++ class name without namespaces and a trailing "Impl" ("Net" for ns::NetImpl),
  /// found on first use (the dynamic type is not known yet in this constructor).
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Registered tensors are shared with the caller's handle (the module's member):
  ///   weight = register_parameter("weight", empty({out, in}));
  /// The registry keeps its own handle, so assigning the member afterwards is not seen.
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  /// Registers the member handle itself: the registry reads *member each time it lists
  /// parameters, so a later assignment to the member (weight tying,
  ///   head->weight = wte->weight;
  /// ) is what parameters(), state_dict(), save and optimizers see, as PyTorch's
  /// setattr. `member` must live as long as the module (a data member of it).
  ///   weight = empty({out, in});  register_parameter("weight", &weight);
  Tensor& register_parameter(const std::string& name, Tensor* member, bool requires_grad = true);
  /// A non-trainable tensor saved in the state dict (same forms as register_parameter).
  /// Parameters, buffers and submodules share one set of names: reusing a name of another
  /// kind is a KeyError "attribute 'w' already exists" (PyTorch's register_buffer).
  Tensor& register_buffer(const std::string& name, Tensor t);
  /// A non-trainable tensor saved in the state dict (same forms as register_parameter).
  Tensor& register_buffer(const std::string& name, Tensor* member);
  /// A child, whose parameters are listed under "name.".
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }
  /// A child given by its holder (nn::Linear, ...), listed under "name.".
  template <class Holder>
  requires requires(Holder h) { h.ptr(); }
  Holder register_module(const std::string& name, Holder h) {
    add_child(name, h.ptr());
    return h;
  }

  /// As PyTorch (remove_duplicate=True): a tensor reachable under several names (tied
  /// weights, a shared submodule) is listed once, under the first name in registration
  /// order; state_dict() keeps every name.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// Parameters under their dotted names (the state-dict keys).
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true, bool remove_duplicate = true) const;
  /// Buffers under their dotted names.
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true, bool remove_duplicate = true) const;
  /// LibTorch's replace_module: the child under `name` becomes m, in the same place (so
  /// state-dict order is kept); KeyError when there is no such child.
  std::shared_ptr<Module> replace_module(const std::string& name, std::shared_ptr<Module> m);
  /// LibTorch's unregister_module: removes the child; KeyError when there is none.
  void unregister_module(const std::string& name);
  /// Direct children, in registration order.
  std::vector<std::shared_ptr<Module>> children() const;
  /// Direct children with their names.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  /// PyTorch's order: this module first under "" (under `prefix` if given), then every
  /// descendant depth-first in registration order with dotted names ("encoder.layers.0");
  /// a module reachable twice is listed once. Needs the module to be owned by a
  /// shared_ptr (made through a holder or make_shared); ValueError otherwise.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules(const std::string& prefix = "",
                                                                             bool remove_duplicate = true) const;
  /// named_modules() without the names.
  std::vector<std::shared_ptr<Module>> modules() const;
  /// PyTorch's Module.apply: fn on every descendant first (children depth-first, each
  /// after its own children), this module last; for custom initialization:
  ///   model->apply([](nn::Module& m) {
  ///     if (auto* lin = m.as<nn::Linear>()) nn::init::normal_(lin->weight, 0, 0.02);
  ///   });
  /// (LibTorch's apply visits this module first; we follow PyTorch, whose order
  /// decides which init wins when two rules touch the same tensor.)
  Module& apply(const std::function<void(Module&)>& fn);
  /// LibTorch's Module::as (Python's isinstance): this module as T, given as the holder
  /// (nn::Linear) or the Impl (nn::LinearImpl), or nullptr when it is not one.
  template <class T>
  auto* as() noexcept {
    if constexpr (requires { typename T::ContainedType; })
      return dynamic_cast<typename T::ContainedType*>(this);
    else
      return dynamic_cast<T*>(this);
  }
  /// The same, const.
  template <class T>
  const auto* as() const noexcept {
    return const_cast<Module*>(this)->as<T>();
  }
  /// Number of parameter elements, each shared tensor counted once: PyTorch's
  /// sum(p.numel() for p in model.parameters()). The name and the flag are those of
  /// Hugging Face's PreTrainedModel.num_parameters(only_trainable=...), the count GPT
  /// code reports; trainable_only counts parameters with requires_grad.
  int64_t num_parameters(bool trainable_only = false) const;
  /// Sets requires_grad on every parameter (freezing / unfreezing), as PyTorch.
  Module& requires_grad_(bool on = true);

  /// Training mode on (dropout active) for this module and every descendant.
  virtual void train(bool on = true);
  /// train(false): dropout off.
  void eval() { train(false); }
  /// The mode train() last set.
  bool is_training() const { return training_; }
  /// Drops every parameter's .grad (PyTorch 2.x's default set_to_none = true), or with
  /// set_to_none = false sets each existing .grad to zeros in place (detached first).
  void zero_grad(bool set_to_none = true);
  /// Converts every parameter and floating buffer in place (handles stay valid).
  void to(DType dtype);

  /// Parameters and buffers by dotted name.
  TensorMap state_dict() const;
  /// Checks every key, shape and dtype first and changes nothing on error: shape
  /// mismatches name the key and both shapes; with strict, missing and unexpected keys
  /// are listed in one ShapeError / ValueError. Values are converted to each
  /// parameter's dtype.
  void load_state_dict(const TensorMap& state, bool strict = true);

  /// "Linear", "MultiheadAttention", ...: what printing shows.
  const std::string& type_name() const;
  /// LibTorch's spelling of type_name().
  const std::string& name() const { return type_name(); }
  /// One line: "Linear(in_features=4, out_features=5, bias=true)".
  virtual void pretty_print(std::ostream& os) const;

  // ---- hooks (PyTorch's; nn/PORTING.md "Hooks") ----
  // They run when the module is called through its holder, `module(x)` (PyTorch's
  // __call__), not for `module->forward(x)`, a plain C++ call (PyTorch's .forward()).
  // A hook sees the call's Tensor arguments (Tensor and std::optional<Tensor>, an absent
  // one undefined) as a std::vector<Tensor> in argument order; other arguments pass
  // through unseen. Results: a Tensor is {y}, a tuple or pair lists its Tensors, a
  // std::vector<Tensor> itself. A hook returns void or an undefined Tensor (keep), a
  // Tensor (the replacement of a one-element list), a std::vector<Tensor> of the same
  // length, or a HookResult. Hooks of a kind run in registration order, each seeing the
  // previous one's result; each register_* returns a handle whose remove() unregisters.

  /// fn(module, inputs) before forward; a replacement becomes forward's arguments.
  template <class F>
  RemovableHandle register_forward_pre_hook(F fn) {
    return add_forward_pre_hook(::ag::detail::adapt_hook<ForwardPreHook>(std::move(fn)));
  }
  /// fn(module, inputs, outputs) after forward; a replacement is what the call returns.
  template <class F>
  RemovableHandle register_forward_hook(F fn) {
    return add_forward_hook(::ag::detail::adapt_hook<ForwardHook>(std::move(fn)));
  }
  /// fn(module, grad_input, grad_output) in backward once the gradients w.r.t. the
  /// call's Tensor arguments are computed (undefined for those that need none; all
  /// undefined, and fn called when grad_output is ready, if none requires grad). A
  /// replacement grad_input is what flows on. As PyTorch's BackwardHook: identity nodes
  /// around the call's inputs and outputs.
  template <class F>
  RemovableHandle register_full_backward_hook(F fn) {
    return add_full_backward_hook(::ag::detail::adapt_hook<BackwardHook>(std::move(fn)));
  }
  /// fn(module, grad_output) in backward once the gradients w.r.t. the call's Tensor
  /// results are computed (undefined for those that got none), before they flow into the
  /// module; a replacement is what flows in (and what backward hooks see).
  template <class F>
  RemovableHandle register_full_backward_pre_hook(F fn) {
    return add_full_backward_pre_hook(::ag::detail::adapt_hook<BackwardPreHook>(std::move(fn)));
  }
  /// Whether any hook is registered (the holder then takes the hooked path).
  bool has_hooks() const { return hooks_ && !hooks_->empty(); }
  /// The hooks (empty when none was registered); for the holder's call.
  ::ag::detail::ModuleHooks hooks() const { return hooks_ ? *hooks_ : ::ag::detail::ModuleHooks{}; }

 protected:
  /// For containers (ParameterDict): the parameter under `name` becomes t, in the same
  /// place; KeyError when there is none.
  Tensor& replace_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  /// For containers (ParameterDict.pop): removes the parameter; KeyError when there is none.
  void unregister_parameter(const std::string& name);

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  /// ValueError for a bad name or one already used by the same kind; KeyError "attribute
  /// 'w' already exists" for one used by another kind (parameter, buffer, submodule).
  void check_new(const char* what, const std::string& name) const;
  void collect(const std::string& prefix, bool params, bool recurse,
               std::vector<std::pair<std::string, Tensor>>& out) const;

  std::string type_name_;  ///< empty for Module(): type_name() derives it from the dynamic type
  bool training_ = true;
  /// Each entry points at the handle to read: a member registered by address, or a
  /// handle in owned_ (a deque: references stay valid as it grows).
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Tensor*>> buffers_;
  std::deque<Tensor> owned_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  /// Shared so that a handle can hold a weak reference; made by the first register_*.
  std::shared_ptr<::ag::detail::ModuleHooks> hooks_;
  RemovableHandle add_forward_pre_hook(ForwardPreHook fn);
  RemovableHandle add_forward_hook(ForwardHook fn);
  RemovableHandle add_full_backward_hook(BackwardHook fn);
  RemovableHandle add_full_backward_pre_hook(BackwardPreHook fn);
};

/// Prints the module tree:  Seq2Seq(
///                             (encoder): Linear(in_features=4, ...)
///                           )
std::ostream& operator<<(std::ostream& os, const Module& m);

/// Saves / loads a module's state_dict as safetensors (loadable in PyTorch with
/// safetensors.torch.load_file + load_state_dict).
void save(const Module& m, const std::string& path);
/// Loads a save()d file into m (see load_state_dict for strict).
void load(Module& m, const std::string& path, bool strict = true);

}  // namespace ag::nn

#include "attograd/nn/module_call.h"  // detail::call_module: a call with hooks

namespace ag::nn {

/// A shared handle to an Impl module (LibTorch's ModuleHolder): copies share the module; m(x) calls forward.
template <class Impl>
class ModuleHolder {
 public:
  /// The held module type (LibTorch's name).
  using ContainedType = Impl;
  /// Like LibTorch: constructs the Impl from the arguments. A single holder argument is
  /// a copy, never an Impl built from it: without that exclusion `Sequential copy(seq)`
  /// would wrap seq in a new Sequential.
  template <class... Args>
  requires(sizeof...(Args) > 0 && std::constructible_from<Impl, Args&&...> &&
           !(sizeof...(Args) == 1 &&
             (std::is_same_v<std::remove_cvref_t<Args>, ModuleHolder> && ...))) explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  /// Default-constructs the Impl when it can (Sequential, ModuleList); for modules with
  /// required options it stops the build with one readable message instead of pages
  /// of failed overloads.
  ModuleHolder() : impl_(make_default()) {}
  /// An empty holder (nullptr), or one sharing an existing Impl.
  ModuleHolder(std::nullptr_t) {}
  /// An empty holder (nullptr), or one sharing an existing Impl.
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  /// The module; ValueError when empty.
  Impl* operator->() const { return checked(); }
  /// LibTorch's holder[i]: the Impl's operator[] (Sequential, ModuleList, ModuleDict, ...).
  template <class Arg>
  requires requires(Impl& m, Arg&& a) { m[std::forward<Arg>(a)]; }
  decltype(auto) operator[](Arg&& a) const { return (*checked())[std::forward<Arg>(a)]; }
  /// The module; ValueError when empty.
  Impl& operator*() const { return *checked(); }
  /// The shared pointer (null when empty).
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  /// True for a holder made from nullptr.
  bool is_empty() const { return impl_ == nullptr; }

  /// Indexes the module, as LibTorch's holder: list[-1], dict["key"] (ModuleList,
  /// ModuleDict, ParameterList, ParameterDict).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*checked())[std::forward<Arg>(arg)];
  }

  /// Calls the module's forward with these arguments, running its hooks if it has any
  /// (PyTorch's __call__; `holder->forward(x)` runs none). Constrained on forward taking
  /// them, so that asking whether a holder is callable (std::function's constructor,
  /// ag::checkpoint(module, x)) is a clean "no" instead of an error inside the body.
  template <class... Args>
  requires requires(Impl& m, Args&&... a) { m.forward(std::forward<Args>(a)...); }
  decltype(auto) operator()(Args&&... args) const {
    return ::ag::detail::call_module(*checked(), std::forward<Args>(args)...);
  }

 private:
  template <class>
  static constexpr bool dependent_false = false;
  static std::shared_ptr<Impl> make_default() {
    if constexpr (std::is_default_constructible_v<Impl>) {
      return std::make_shared<Impl>();
    } else {
      static_assert(dependent_false<Impl>,
                    "attograd: this module has no default constructor. Declare module members "
                    "as `nn::Linear head{nullptr};` and register them in the constructor: "
                    "`head = register_module(\"head\", nn::Linear(512, 100));`");
      return nullptr;
    }
  }
  Impl* checked() const {
    if (!impl_) throw ValueError("ModuleHolder: the module is empty (constructed from nullptr)");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

/// Prints the held module's tree.
template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& h) {
  return os << *h;
}

}  // namespace ag::nn

/// `AG_MODULE(Linear)` declares `using Linear = ModuleHolder<LinearImpl>`, as LibTorch's
/// TORCH_MODULE.
#define AG_MODULE(Name) using Name = ::ag::nn::ModuleHolder<Name##Impl>
