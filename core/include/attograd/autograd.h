#pragma once
// The tape: each differentiable op calls record() once; record() is the only place
// that builds graph nodes. A node keeps its op name, one edge per input (the input's
// own node, or the leaf tensor itself), the inputs' shapes, and a backward closure that
// returns one gradient per input. The engine (Tensor::backward, ag::grad) runs nodes in
// reverse topological order, adds gradients up and checks their shapes.
//
// Ownership only points from newer to older (output -> node -> inputs' nodes / leaves),
// so the graph has no shared_ptr cycles and dies with the last tensor that uses it.
#include <functional>
#include <memory>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

// Which inputs of a node need a gradient; a closure may skip the others.
class NeedsGrad {
 public:
  explicit NeedsGrad(const std::vector<bool>& v) : v_(&v) {}
  bool operator[](std::size_t i) const { return (*v_)[i]; }
  std::size_t size() const { return v_->size(); }

 private:
  const std::vector<bool>* v_;
};

using Grads = std::vector<Tensor>;  // one per input; undefined = zero / not needed
using BackwardFn = std::function<Grads(const Tensor& grad, NeedsGrad needs)>;

struct Edge {
  std::shared_ptr<Node> node;        // the input was made by this node, or
  std::shared_ptr<TensorImpl> leaf;  // the input is a leaf that requires grad
  bool active() const { return node || leaf; }
};

struct Node {
  const char* name = "";
  std::vector<Edge> inputs;
  std::vector<Shape> input_shapes;
  std::vector<DType> input_dtypes;
  BackwardFn backward;  // reset after a backward without retain_graph
  bool released = false;
  ~Node();  // iterative teardown: a 100,000-node chain must not recurse
};

// ---- grad mode ----
bool grad_enabled();
class NoGradGuard {  // thread-local, RAII
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};
class EnableGradGuard {
 public:
  EnableGradGuard();
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// Records `out` as made by op `name` from `inputs`. Does nothing (returns `out`) under
// NoGradGuard or when no input requires grad. `out` must be a fresh tensor.
Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn);

// A tensor saved for backward: detached (no graph references, so no cycles) and
// stamped with its storage version. get() throws VersionError if the storage was
// written in place since it was saved.
class Saved {
 public:
  Saved() = default;
  explicit Saved(const Tensor& t) : t_(t.defined() ? t.detach() : Tensor{}),
                                    version_(t.defined() ? t.storage()->version() : 0) {}
  const Tensor& get() const;

 private:
  Tensor t_;
  uint64_t version_ = 0;
};

// Gradients of sum(outputs[i] * grad_outputs[i]) with respect to `inputs` (leaves or
// intermediate tensors), returned without touching any .grad(). An input the outputs do
// not depend on throws, unless allow_unused (then its gradient is undefined).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         bool retain_graph = false, bool allow_unused = false);

// The engine behind Tensor::backward and grad().
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
                  bool retain_graph);

// ---- gradcheck ----
struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  const char* name = "fn";  // shown in failure messages
};
struct GradcheckResult {
  bool ok = true;
  std::string message;  // on failure: fn, input, worst element, analytic vs numeric
  explicit operator bool() const { return ok; }
};
// Compares the analytic Jacobian (one backward per output element) with float64
// central differences: |a - n| <= atol + rtol * |n|. Inputs must be f64; the ones that
// require grad are checked. fn may return any shape.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt = {});

}  // namespace ag
