#pragma once
/// \file
/// The autograd engine (autograd layer, above the ops): Tensor::backward and ag::grad run
/// the nodes that record() built (attograd/tape.h) in reverse topological order, add
/// gradients up with the ops and check their shapes; gradcheck compares the result with
/// central differences. Including this header includes the tape too.
///
/// Higher-order gradients: with create_graph the engine runs the closures with grad mode
/// on, so the backward pass is itself recorded. Closures are written with differentiable
/// ops, and a Saved tensor hands back a graph-connected tensor in that mode (an input
/// through its own node or leaf; an op's output through the node being run); a fused op's
/// Composite is differentiated instead of its closure.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attograd/tape.h"

namespace ag {

/// Gradients of sum(outputs[i] * grad_outputs[i]) with respect to `inputs` (leaves or
/// intermediate tensors), returned without touching any .grad(); only the part of the
/// graph between them runs. An input the outputs do not depend on throws, unless
/// allow_unused (then its gradient is undefined). create_graph records the backward pass
/// so the results can be differentiated again; retain_graph defaults to create_graph.
/// (LibTorch's torch::autograd::grad, same argument order.)
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = {},
                         bool create_graph = false, bool allow_unused = false);

/// Queues `callback` to run once the backward pass now running on this thread has
/// finished every node (PyTorch's Variable._execution_engine.queue_callback): how a
/// post-accumulate-grad hook finishes work that needs the whole pass (DDP waits for its
/// all-reduces there). AutogradError outside a backward pass.
void queue_callback(std::function<void()> callback);

/// The engine behind Tensor::backward and grad().
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads, bool retain_graph,
                  bool create_graph = false);

// ---- gradcheck ----
/// Tolerances and step of gradcheck's central differences.
struct GradcheckOptions {
  /// step of the central differences
  double eps = 1e-6;
  /// Absolute tolerance between analytic and numeric gradients.
  double atol = 1e-5;
  /// Relative tolerance between analytic and numeric gradients.
  double rtol = 1e-3;
  /// the function's name in failure messages
  const char* name = "fn";  // shown in failure messages
};
/// gradcheck's verdict; converts to bool, message says what differed.
struct GradcheckResult {
  /// True when every checked element is within tolerance.
  bool ok = true;
  std::string message;                           ///< on failure: fn, input, worst element, analytic vs numeric
  explicit operator bool() const { return ok; }  ///< ok
};
/// Compares the analytic Jacobian (one backward per output element) with float64
/// central differences: |a - n| <= atol + rtol * |n|. Inputs must be f64; the ones that
/// require grad are checked. fn may return any shape.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt = {});
/// Second derivatives (PyTorch's gradgradcheck): gradcheck of the map
/// (inputs, v) -> grad(fn(inputs), inputs, v, create_graph) for a seeded random upstream
/// gradient v, so every closure's own backward is compared with central differences.
GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& inputs, const GradcheckOptions& opt = {});

}  // namespace ag
