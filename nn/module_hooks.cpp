// Module hooks (PyTorch's Module._call_impl and torch.utils.hooks.BackwardHook):
// registration, and the non-template part of a hooked call (detail::HookedCall; the
// template that moves Tensors between forward's C++ types and lists is in
// attograd/nn/module_call.h).
//
// Full backward hooks, as PyTorch's BackwardHook: the call's Tensor inputs that require
// grad go through identity nodes before forward, its outputs after the forward hooks.
// PyTorch's identity (BackwardHookFunction) is one node with several outputs, so its
// hook sees every gradient at once; a node here has one output, so each wrapped tensor
// gets its own identity node, which stores its gradient and hands a zero scalar to a
// shared hub node. The hub runs after every wrapper that backward reaches (they all feed
// it), calls the hooks with the stored gradients and returns the results to the wrapped
// tensors' own graph:
//   x ─┬─> hub_in ─> id(x') ─> forward ─> y ─┬─> hub_out ─> id(y') ─> loss
//  (grads of x' gathered at hub_in)          (grads of y' gathered at hub_out)
#include <string>
#include <utility>

#include "attograd/autograd.h"
#include "attograd/factory.h"
#include "attograd/nn/module.h"

namespace ag::detail {

using nn::BackwardHook;
using nn::BackwardPreHook;
using nn::Module;

/// What a call's wrappers and hubs share: the hooks of the call, and the gradients on
/// their way through.
struct BackwardHookState {
  Module* module = nullptr;
  /// The module when a shared_ptr owns it (a holder's): the hooks are skipped once it is
  /// gone. A weak reference, unlike PyTorch's, so a module that keeps its own output
  /// makes no reference cycle.
  std::weak_ptr<Module> owner;
  bool owned = false;
  /// The module, or null when it was destroyed before backward.
  Module* alive() const { return owned && owner.expired() ? nullptr : module; }
  std::vector<std::pair<int64_t, BackwardHook>> hooks;
  std::vector<std::pair<int64_t, BackwardPreHook>> pre_hooks;
  std::size_t n_inputs = 0;
  bool inputs_wrapped = false;
  /// Set by the output hub, used and cleared by the input hub (PyTorch's grad_outputs).
  std::optional<std::vector<Tensor>> grad_outputs;
};

namespace {

/// Replaces each tensor of `ts` that requires grad by an identity of it whose gradient
/// `on_all` sees with the others' (a full list, undefined where none); its result is what
/// flows back to the originals. Nothing happens outside grad mode or when no tensor
/// requires grad; returns whether something was wrapped.
bool wrap(std::vector<Tensor>& ts, std::function<std::vector<Tensor>(std::vector<Tensor>)> on_all) {
  std::vector<std::size_t> idx;
  std::vector<Tensor> originals;
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (ts[i].defined() && ts[i].requires_grad()) {
      idx.push_back(i);
      originals.push_back(ts[i]);
    }
  if (idx.empty() || !grad_enabled()) return false;
  const DType dt = originals[0].dtype();
  auto slots = std::make_shared<std::vector<Tensor>>(idx.size());
  const std::size_t n = ts.size();
  Tensor hub = record("BackwardHookFunctionBackward", zeros(Shape{}, dt), originals,
                      [slots, idx, n, on_all = std::move(on_all)](const Tensor&, NeedsGrad) {
                        std::vector<Tensor> full(n);
                        for (std::size_t k = 0; k < idx.size(); ++k) full[idx[k]] = std::move((*slots)[k]);
                        slots->assign(idx.size(), Tensor());
                        full = on_all(std::move(full));
                        Grads g(idx.size());
                        for (std::size_t k = 0; k < idx.size(); ++k) g[k] = full[idx[k]];
                        return g;
                      });
  for (std::size_t k = 0; k < idx.size(); ++k)
    ts[idx[k]] = record("BackwardHookFunctionBackward", originals[k].detach(), {hub},
                        [slots, k, dt](const Tensor& g, NeedsGrad) {
                          (*slots)[k] = g;
                          return Grads{zeros(Shape{}, dt)};
                        });
  return true;
}

/// A hook's replacement list: as many entries as it was given, each of the same shape
/// and dtype as the one it replaces (undefined allowed: no gradient).
void check_replacement(const std::vector<Tensor>& old, const std::vector<Tensor>& now, const Module& m,
                       const char* what) {
  AG_CHECK(now.size() == old.size(), ValueError, m.type_name(), ": ", what, " returned ", now.size(),
           " tensors, expected ", old.size());
  for (std::size_t i = 0; i < now.size(); ++i)
    if (now[i].defined() && old[i].defined())
      AG_CHECK(now[i].shape() == old[i].shape() && now[i].dtype() == old[i].dtype(), ShapeError, m.type_name(), ": ",
               what, " returned a tensor ", i, " of shape ", now[i].shape(), " ", now[i].dtype(), ", expected ",
               old[i].shape(), " ", old[i].dtype());
}

bool all_undefined(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.defined()) return false;
  return true;
}

}  // namespace

HookedCall::HookedCall(Module& m) : m_(m), hooks_(m.hooks()) {}

void HookedCall::before(std::vector<Tensor>& inputs) {
  for (auto& [id, hook] : hooks_.forward_pre)
    if (auto r = hook(m_, inputs)) {
      AG_CHECK(r->size() == inputs.size(), ValueError, m_.type_name(), ": forward pre-hook returned ", r->size(),
               " inputs, expected ", inputs.size(), " (the call's Tensor arguments)");
      inputs = std::move(*r);
    }
  if (hooks_.backward.empty() && hooks_.backward_pre.empty()) return;
  bw_ = std::make_shared<BackwardHookState>();
  bw_->module = &m_;
  bw_->owner = m_.weak_from_this();
  bw_->owned = !bw_->owner.expired();
  bw_->hooks = hooks_.backward;
  bw_->pre_hooks = hooks_.backward_pre;
  bw_->n_inputs = inputs.size();
  if (bw_->hooks.empty()) return;
  // The input hub: grad_input is ready, call the backward hooks (PyTorch's
  // BackwardHook._set_user_hook). Both hubs own the state (the graph keeps it alive
  // until backward); it holds no tensor but while a backward passes through.
  bw_->inputs_wrapped = wrap(inputs, [st = bw_](std::vector<Tensor> grad_input) {
    Module* alive = st->alive();
    if (!alive || !st->grad_outputs) return grad_input;  // no gradient reached the outputs
    Module& m = *alive;
    for (auto& [id, hook] : st->hooks)
      if (auto r = hook(m, grad_input, *st->grad_outputs)) {
        check_replacement(grad_input, *r, m, "full backward hook");
        grad_input = std::move(*r);
      }
    st->grad_outputs.reset();
    return grad_input;
  });
}

void HookedCall::after(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  for (auto& [id, hook] : hooks_.forward)
    if (auto r = hook(m_, inputs, outputs)) {
      AG_CHECK(r->size() == outputs.size(), ValueError, m_.type_name(), ": forward hook returned ", r->size(),
               " outputs, expected ", outputs.size(), " (the Tensors of forward's result)");
      outputs = std::move(*r);
    }
  if (!bw_) return;
  wrap(outputs, [st = bw_](std::vector<Tensor> grad_output) {
    Module* alive = st->alive();
    if (!alive) return grad_output;
    Module& m = *alive;
    for (auto& [id, hook] : st->pre_hooks)
      if (auto r = hook(m, grad_output)) {
        check_replacement(grad_output, *r, m, "full backward pre-hook");
        grad_output = std::move(*r);
      }
    if (st->inputs_wrapped) {
      st->grad_outputs = grad_output;
    } else {
      // No input requires grad: the hooks run now, with every grad_input undefined.
      std::vector<Tensor> grad_input(st->n_inputs);
      for (auto& [id, hook] : st->hooks)
        if (auto r = hook(m, grad_input, grad_output))
          AG_CHECK(all_undefined(*r), AutogradError, m.type_name(),
                   ": a full backward hook for a call where no input requires gradient should always return "
                   "nothing or undefined tensors");
    }
    return grad_output;
  });
}

}  // namespace ag::detail

namespace ag::nn {

namespace {

template <class Hook>
RemovableHandle add(std::shared_ptr<ag::detail::ModuleHooks>& hooks,
                    std::vector<std::pair<int64_t, Hook>> ag::detail::ModuleHooks::*list, Hook fn, const Module& m,
                    const char* what) {
  AG_CHECK(fn != nullptr, ValueError, m.type_name(), ".", what, ": empty hook");
  if (!hooks) hooks = std::make_shared<ag::detail::ModuleHooks>();
  const int64_t id = ag::detail::next_hook_id();
  ((*hooks).*list).emplace_back(id, std::move(fn));
  return RemovableHandle([weak = std::weak_ptr<ag::detail::ModuleHooks>(hooks), list, id] {
    if (auto h = weak.lock()) std::erase_if((*h).*list, [&](const auto& e) { return e.first == id; });
  });
}

}  // namespace

RemovableHandle Module::add_forward_pre_hook(ForwardPreHook fn) {
  return add(hooks_, &ag::detail::ModuleHooks::forward_pre, std::move(fn), *this, "register_forward_pre_hook");
}
RemovableHandle Module::add_forward_hook(ForwardHook fn) {
  return add(hooks_, &ag::detail::ModuleHooks::forward, std::move(fn), *this, "register_forward_hook");
}
RemovableHandle Module::add_full_backward_hook(BackwardHook fn) {
  return add(hooks_, &ag::detail::ModuleHooks::backward, std::move(fn), *this, "register_full_backward_hook");
}
RemovableHandle Module::add_full_backward_pre_hook(BackwardPreHook fn) {
  return add(hooks_, &ag::detail::ModuleHooks::backward_pre, std::move(fn), *this, "register_full_backward_pre_hook");
}

}  // namespace ag::nn
