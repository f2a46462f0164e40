#pragma once
/// \file
/// The tape (core layer): each differentiable op calls record() once; record() is the
/// only place that builds graph nodes. A node keeps its op name, one edge per input (the
/// input's own node, or the leaf tensor itself), the inputs' shapes, and a backward
/// closure that returns one gradient per input. The engine that runs the nodes
/// (Tensor::backward, ag::grad: attograd/autograd.h) sits in the autograd layer, above
/// the ops, since adding gradients up is an op.
///
/// Ownership only points from newer to older (output -> node -> inputs' nodes / leaves),
/// so the graph has no shared_ptr cycles and dies with the last tensor that uses it.
///
/// Closures are written with differentiable ops so that a create_graph backward records
/// them too (double backward; attograd/autograd.h).
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// Which inputs of a node need a gradient; a closure may skip the others.
class NeedsGrad {
 public:
  /// One flag per input of the node.
  explicit NeedsGrad(const std::vector<bool>& v) : v_(&v) {}
  /// Whether input i needs a gradient (skip its computation if not).
  bool operator[](std::size_t i) const { return (*v_)[i]; }
  /// The number of inputs.
  std::size_t size() const { return v_->size(); }

 private:
  const std::vector<bool>* v_;
};

using Grads = std::vector<Tensor>;  ///< one per input; undefined = zero / not needed
/// A node's backward: output gradient and which inputs need one -> one gradient per input.
using BackwardFn = std::function<Grads(const Tensor& grad, NeedsGrad needs)>;

struct AnomalyTrace;  // where a node was created (attograd/detail/tape.h)
struct Composite;     // a fused op's differentiable definition (below)

/// Where an input's gradient goes: the node that made it, or the leaf itself.
struct Edge {
  std::shared_ptr<Node> node;        ///< the input was made by this node, or
  std::shared_ptr<TensorImpl> leaf;  ///< the input is a leaf that requires grad
  /// False when the input needs no gradient.
  bool active() const { return node || leaf; }
};

/// One recorded op in the tape: its backward closure, input edges and the shapes and dtypes to check gradients against.
struct Node : std::enable_shared_from_this<Node> {
  /// the op that made this node ("mul", "matmul"): error messages and hooks name it
  const char* name = "";
  /// One edge per input, in the op's argument order.
  std::vector<Edge> inputs;
  /// Each input's shape: the engine checks every gradient against it.
  std::vector<Shape> input_shapes;
  /// Each input's dtype: gradients are converted back to it.
  std::vector<DType> input_dtypes;
  BackwardFn backward;  ///< reset after a backward without retain_graph
  /// True after a backward without retain_graph freed the saved tensors.
  bool released = false;
  /// Where the node was created; set only under anomaly mode (DetectAnomalyGuard).
  std::shared_ptr<const AnomalyTrace> anomaly;
  /// Creation order over all threads (PyTorch's Node::sequence_nr): a node with a smaller
  /// number was recorded earlier. Activation checkpointing (attograd/activation_checkpoint.h) tells
  /// the nodes a function recorded from older ones with it.
  uint64_t sequence_nr = 0;
  /// Fused ops only: the same math from differentiable ops. Under create_graph the engine
  /// differentiates it instead of running `backward`, so the gradient can be
  /// differentiated again. Reset with `backward`.
  std::unique_ptr<Composite> composite;
  /// Tensor::register_hook on this node's output (a non-leaf): run in order on its whole
  /// gradient before `backward` (PyTorch's tensor pre-hooks on grad_fn).
  std::vector<std::pair<int64_t, TensorHook>> tensor_pre_hooks;
  /// Tensor::retain_grad on this node's output: where its gradient is stored, after the hooks.
  std::weak_ptr<TensorImpl> retains_grad;
  ~Node();  ///< iterative teardown: a 100,000-node chain must not recurse
};

// ---- grad mode ----
/// False inside a NoGradGuard.
bool grad_enabled();
/// RAII: no graph is recorded while it lives (inference, optimizer updates); nests.
class NoGradGuard {  // thread-local, RAII
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};
/// RAII: recording back on inside a NoGradGuard scope (for double backward).
class EnableGradGuard {
 public:
  EnableGradGuard();
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// ---- anomaly mode (torch.autograd.detect_anomaly / set_detect_anomaly) ----
// While on, each node records where it was created (the forward call chain), and a
// backward closure that returns a gradient with nan or inf throws AutogradError naming
// the op, its inputs' shapes and that call chain; a node recorded by a create_graph
// backward also names the node whose backward recorded it. The flag is global, as in
// PyTorch: it applies to every thread. Off, it costs one relaxed atomic load per
// recorded op and per backward step. Function names come from the dynamic symbol
// table: link a program with -rdynamic (CMake ENABLE_EXPORTS) to see its own functions.

/// Turns anomaly mode on or off for every thread (torch.autograd.set_detect_anomaly).
void set_detect_anomaly(bool enabled);
/// Whether anomaly mode is on.
bool is_anomaly_enabled();
/// RAII (torch.autograd.detect_anomaly): anomaly mode on for its scope, then the previous setting.
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();   ///< turns the mode on, remembering the previous setting
  ~DetectAnomalyGuard();  ///< restores the previous setting
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

/// The sequence_nr the next recorded node will get: nodes recorded from now on have this
/// number or a larger one.
uint64_t next_sequence_nr();

namespace detail {
/// Whether record() builds a node for these inputs: grad mode on and one of them requires grad.
inline bool records_any(std::initializer_list<std::reference_wrapper<const Tensor>> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}
}  // namespace detail

/// Records `out` as made by op `name` from `inputs`. Does nothing (returns `out`) under
/// NoGradGuard or when no input requires grad. `out` must be a fresh tensor.
Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn);

/// The same for the usual call `record("mul", out, {a, b}, [..](const Tensor& g, NeedsGrad n) {..})`:
/// the inputs are referred to, not copied, and the closure becomes a BackwardFn only when
/// a node is built, so an op that records nothing (no grad, NoGradGuard) pays for no
/// heap allocation here.
template <class F>
requires std::is_invocable_r_v<Grads, F&, const Tensor&, NeedsGrad> Tensor
record(const char* name, Tensor out, std::initializer_list<std::reference_wrapper<const Tensor>> inputs, F&& fn) {
  if (!detail::records_any(inputs)) return out;
  return record(name, std::move(out), std::vector<Tensor>(inputs.begin(), inputs.end()),
                BackwardFn(std::forward<F>(fn)));
}

/// A tensor saved for backward, stamped with its storage version: get() throws
/// VersionError if the storage was written in place since it was saved. It holds no
/// reference to the node that saves it (no cycles). Under grad mode (a create_graph
/// backward), get() returns the tensor connected to its graph, so that the closure's
/// result can be differentiated again:
///   Saved(x)          an input of the op (or any tensor made before the op);
///   Saved::output(y)  the op's own output, reconnected to the node being run.
/// Outside grad mode get() returns the detached tensor.
class Saved {
 public:
  Saved() = default;
  /// Saves t for backward, detached, with its storage version.
  explicit Saved(const Tensor& t);
  /// Saves an op's own output without a shared_ptr cycle to its node.
  static Saved output(const Tensor& y);
  /// The saved tensor; VersionError if it was changed in place since.
  Tensor get() const;

 private:
  Tensor t_;  ///< detached
  uint64_t version_ = 0;
  std::shared_ptr<Node> fn_;          ///< t's node when t is not a leaf
  std::shared_ptr<TensorImpl> leaf_;  ///< t itself when it is a leaf that requires grad
  bool output_ = false;
};

/// A fused op's definition from differentiable ops, for gradients of its gradient: a
/// fused kernel's backward (layer_norm, rms_norm, attention) is fast but not itself
/// differentiable, so under create_graph the engine differentiates `fn` at `inputs`
/// instead (identity views of each, so every gradient is the partial derivative with
/// respect to that argument alone). `fn` may throw when the op cannot be differentiated
/// twice (the error reaches the backward's caller).
struct Composite {
  std::function<Tensor(const std::vector<Tensor>&)> fn;  ///< the op's math, from differentiable ops
  std::vector<Saved> inputs;                             ///< the op's inputs, in its argument order
};

/// record() for a fused op: `fn` is the fast first-order backward, `composite` what a
/// create_graph backward differentiates instead.
Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn, Composite composite);

/// The same as the call `record("layer_norm", y, {x, w, b}, [..](..) {..}, [&] { return Composite{..}; })`:
/// the composite is made by `make_composite` only when a node is built, so a fused op
/// that records nothing builds no closures and saves nothing (layer_norm of 128 floats
/// under NoGradGuard: 1.26-1.30 -> 1.00 us a call).
template <class F, class G>
requires std::is_invocable_r_v<Grads, F&, const Tensor&, NeedsGrad> && std::is_invocable_r_v<Composite, G&> Tensor
record(const char* name, Tensor out, std::initializer_list<std::reference_wrapper<const Tensor>> inputs, F&& fn,
       G&& make_composite) {
  if (!detail::records_any(inputs)) return out;
  return record(name, std::move(out), std::vector<Tensor>(inputs.begin(), inputs.end()),
                BackwardFn(std::forward<F>(fn)), make_composite());
}

}  // namespace ag
