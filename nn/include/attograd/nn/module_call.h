#pragma once
/// \file
/// How a module holder calls forward (included by attograd/nn/module.h): directly when
/// the module has no hooks, else through its forward pre-hooks, forward hooks and full
/// backward hooks (PyTorch's Module._call_impl). The hooks see the call's Tensor
/// arguments and results as std::vector<Tensor>; this header moves them between the
/// call's own C++ types and those lists. Include attograd/nn/module.h, not this.
#include <cstddef>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag::detail {

struct BackwardHookState;

/// One hooked call (non-template part, nn/module_hooks.cpp), with the hooks registered
/// when it started.
class HookedCall {
 public:
  explicit HookedCall(nn::Module& m);
  /// Forward pre-hooks on the inputs (replaced in place), then, with backward hooks,
  /// the identity nodes that catch the gradients w.r.t. the inputs.
  void before(std::vector<Tensor>& inputs);
  /// Forward hooks on the outputs (replaced in place), then, with backward hooks or
  /// backward pre-hooks, the identity nodes that catch the gradients w.r.t. the outputs.
  void after(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

 private:
  nn::Module& m_;
  ModuleHooks hooks_;
  std::shared_ptr<BackwardHookState> bw_;
};

/// A Tensor argument the hooks see (an absent std::optional<Tensor> as undefined).
template <class T>
inline constexpr bool is_tensor_slot_v = std::is_same_v<T, Tensor> || std::is_same_v<T, std::optional<Tensor>>;

template <class T>
struct is_tuple_like : std::false_type {};
template <class... T>
struct is_tuple_like<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

/// Appends the Tensors of a value: a Tensor or optional, each element of a tuple / pair
/// (recursively) or of a std::vector<Tensor>; nothing for other types.
template <class T>
void gather_tensors(const T& v, std::vector<Tensor>& out) {
  if constexpr (std::is_same_v<T, Tensor>) {
    out.push_back(v);
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    out.push_back(v ? *v : Tensor());
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    out.insert(out.end(), v.begin(), v.end());
  } else if constexpr (is_tuple_like<T>::value) {
    std::apply([&](const auto&... e) { (gather_tensors(e, out), ...); }, v);
  }
}

/// The reverse of gather_tensors: writes in[pos...] back into the value.
template <class T>
void scatter_tensors(T& v, const std::vector<Tensor>& in, std::size_t& pos) {
  if constexpr (std::is_same_v<T, Tensor>) {
    v = in[pos++];
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    const Tensor& t = in[pos++];
    v = t.defined() ? std::optional<Tensor>(t) : std::nullopt;
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (Tensor& t : v) t = in[pos++];
  } else if constexpr (is_tuple_like<T>::value) {
    std::apply([&](auto&... e) { (scatter_tensors(e, in, pos), ...); }, v);
  }
}

/// An argument as forward receives it: a Tensor slot (a copy a pre-hook may replace)
/// as an lvalue, any other argument (held as A&&) as the caller passed it.
template <class E>
decltype(auto) pass_arg(std::remove_reference_t<E>& e) {
  if constexpr (is_tensor_slot_v<E>)
    return (e);
  else
    return static_cast<E&&>(e);
}

/// m.forward(the arguments held in a).
template <class Impl, class Tuple, std::size_t... I>
decltype(auto) forward_args(Impl& m, Tuple& a, std::index_sequence<I...>) {
  return m.forward(pass_arg<std::tuple_element_t<I, Tuple>>(std::get<I>(a))...);
}

/// PyTorch's _call_impl for a module with hooks.
template <class Impl, class... Args>
auto call_with_hooks(Impl& m, Args&&... args) -> decltype(m.forward(std::forward<Args>(args)...)) {
  using R = decltype(m.forward(std::forward<Args>(args)...));
  // Tensor arguments as copies (a pre-hook may replace them), the others by reference.
  std::tuple<std::conditional_t<is_tensor_slot_v<std::remove_cvref_t<Args>>, std::remove_cvref_t<Args>, Args&&>...> a(
      std::forward<Args>(args)...);
  auto for_slots = [&](auto&& f) {
    std::apply(
        [&](auto&... e) {
          (..., [&](auto& x) {
            if constexpr (is_tensor_slot_v<std::remove_cvref_t<decltype(x)>>) f(x);
          }(e));
        },
        a);
  };
  std::vector<Tensor> inputs;
  for_slots([&](const auto& x) { gather_tensors(x, inputs); });
  HookedCall call(m);
  call.before(inputs);
  std::size_t pos = 0;
  for_slots([&](auto& x) { scatter_tensors(x, inputs, pos); });
  R out = forward_args(m, a, std::index_sequence_for<Args...>{});
  std::vector<Tensor> outputs;
  gather_tensors(out, outputs);
  call.after(inputs, outputs);
  pos = 0;
  scatter_tensors(out, outputs, pos);
  return out;
}

/// ModuleHolder::operator(): forward directly, or with the hooks when there are any.
template <class Impl, class... Args>
decltype(auto) call_module(Impl& m, Args&&... args) {
  using R = decltype(m.forward(std::forward<Args>(args)...));
  if constexpr (std::is_base_of_v<nn::Module, Impl> && std::is_object_v<R>) {
    if (m.has_hooks()) [[unlikely]]
      return call_with_hooks(m, std::forward<Args>(args)...);
  } else if constexpr (std::is_base_of_v<nn::Module, Impl>) {
    AG_CHECK(!m.has_hooks(), ValueError, m.type_name(),
             ": module hooks need a forward that returns a value, not void or a reference");
  }
  return m.forward(std::forward<Args>(args)...);
}

}  // namespace ag::detail
