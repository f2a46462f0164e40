// The tape engine: record() builds nodes; run_backward() / grad() walk them in reverse
// topological order (Kahn's algorithm over dependency counts: no recursion).
#include "attograd/autograd.h"

#include <unordered_map>
#include <unordered_set>

#include "attograd/factory.h"
#include "kernels/kernels.h"

namespace ag {
namespace {
thread_local bool g_grad_enabled = true;
}

bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : prev_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = prev_; }
EnableGradGuard::EnableGradGuard() : prev_(g_grad_enabled) { g_grad_enabled = true; }
EnableGradGuard::~EnableGradGuard() { g_grad_enabled = prev_; }

Node::~Node() {
  // Dropping the last reference to a long chain would recurse once per node; instead
  // take over every input node we alone own and let them die one at a time.
  std::vector<std::shared_ptr<Node>> stack;
  auto adopt = [&stack](Node& n) {
    for (auto& e : n.inputs)
      if (e.node && e.node.use_count() == 1) stack.push_back(std::move(e.node));
  };
  adopt(*this);
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    adopt(*n);
  }
}

Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn) {
  if (!g_grad_enabled) return out;
  bool any = false;
  for (const auto& t : inputs) any = any || (t.defined() && t.requires_grad());
  if (!any) return out;
  AG_ASSERT(out.is_leaf() && !out.requires_grad(), name, ": record needs a fresh output");
  auto node = std::make_shared<Node>();
  node->name = name;
  node->inputs.resize(inputs.size());
  node->input_shapes.resize(inputs.size());
  node->input_dtypes.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) continue;
    node->input_shapes[i] = t.shape();
    node->input_dtypes[i] = t.dtype();
    if (!t.requires_grad()) continue;
    if (t.grad_fn()) node->inputs[i].node = t.grad_fn();
    else node->inputs[i].leaf = t.impl_ptr();
  }
  node->backward = std::move(fn);
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
  return out;
}

const Tensor& Saved::get() const {
  if (t_.defined() && t_.storage()->version() != version_)
    throw VersionError(detail::cat("a tensor of shape ", t_.shape(), " saved for backward was "
                                   "modified in place afterwards (version ", t_.storage()->version(),
                                   ", saved at ", version_, ")"));
  return t_;
}

namespace {

// Adds g into an accumulated gradient slot, owning the result.
void accumulate(Tensor& slot, const Tensor& g) {
  if (!slot.defined()) {
    // Take g as is only when nothing else can see it (add's backward hands the same g
    // to both inputs; a leaf's .grad is later written in place).
    bool own = g.is_contiguous() && g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1;
    if (own) {
      slot = g;
    } else {
      slot = kernels::empty(g.shape(), g.dtype());
      kernels::copy(g, slot);
    }
  } else {
    slot = kernels::binary(kernels::Binary::add, slot, g, "backward");
  }
}

struct Capture {  // for ag::grad: where the requested gradients are collected
  // Result slots per leaf / node: the same tensor may be requested more than once.
  std::unordered_map<const TensorImpl*, std::vector<std::size_t>> leaves;
  std::unordered_map<const Node*, std::vector<std::size_t>> nodes;
  std::vector<Tensor> results;
};

void accumulate_leaf(const std::shared_ptr<TensorImpl>& leaf, const Tensor& g, Capture* cap) {
  if (cap) {
    auto it = cap->leaves.find(leaf.get());
    if (it != cap->leaves.end())
      for (std::size_t i : it->second) accumulate(cap->results[i], g);
    return;
  }
  if (!leaf->grad) {
    Tensor slot;
    accumulate(slot, g);
    leaf->grad = slot.impl_ptr();
  } else {
    // In place, so references to .grad (optimizers) see the sum.
    Tensor grad(leaf->grad);
    kernels::copy(kernels::binary(kernels::Binary::add, grad, g, "backward"), grad);
    grad.storage()->bump_version();
  }
}

void execute(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
             bool retain_graph, Capture* cap) {
  AG_CHECK(root_grads.empty() || root_grads.size() == roots.size(), ValueError, "backward: ",
           roots.size(), " outputs but ", root_grads.size(), " gradients");
  std::unordered_map<Node*, Tensor> buffers;
  std::vector<std::shared_ptr<Node>> root_nodes;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    AG_CHECK(r.defined(), ValueError, "backward: output ", i, " is undefined");
    AG_CHECK(r.requires_grad(), AutogradError, "backward: output of shape ", r.shape(),
             " does not require grad (no input of its computation requires grad)");
    Tensor g = root_grads.empty() ? Tensor() : root_grads[i];
    if (!g.defined()) {
      AG_CHECK(r.numel() == 1, AutogradError, "backward: a gradient can be created implicitly only "
               "for one-element outputs, got shape ", r.shape(), "; pass one");
      g = ones_like(r);
    }
    AG_CHECK(g.shape() == r.shape() && g.dtype() == r.dtype(), ShapeError, "backward: gradient ",
             g.shape(), " ", g.dtype(), " does not match output ", r.shape(), " ", r.dtype());
    if (r.grad_fn()) {
      accumulate(buffers[r.grad_fn().get()], g);
      root_nodes.push_back(r.grad_fn());
    } else {
      accumulate_leaf(r.impl_ptr(), g, cap);
    }
  }

  // Dependency counts: how many edges of reachable nodes point at each node.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (auto& n : root_nodes)
    if (seen.insert(n.get()).second) stack.push_back(n.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (auto& e : n->inputs) {
      if (!e.node) continue;
      ++deps[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }

  std::vector<Node*> ready;
  std::unordered_set<Node*> queued;
  for (auto& n : root_nodes)
    if (deps[n.get()] == 0 && queued.insert(n.get()).second) ready.push_back(n.get());

  NoGradGuard no_grad;  // backward closures build no graph
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    Tensor g = std::move(buffers[n]);
    buffers.erase(n);
    if (cap) {
      auto it = cap->nodes.find(n);
      if (it != cap->nodes.end())
        for (std::size_t i : it->second) accumulate(cap->results[i], g);
    }
    AG_CHECK(!n->released, AutogradError, "backward: the graph through '", n->name,
             "' was already freed by an earlier backward; pass retain_graph=true to the first "
             "backward to go through it twice");
    std::vector<bool> needs(n->inputs.size());
    for (std::size_t i = 0; i < needs.size(); ++i) needs[i] = n->inputs[i].active();
    Grads grads;
    try {
      grads = n->backward(g, NeedsGrad(needs));
    } catch (const VersionError& e) {
      throw VersionError(detail::cat("backward of ", n->name, ": ", e.what()));
    }
    AG_ASSERT(grads.size() == n->inputs.size(), "backward of ", n->name, " returned ",
              grads.size(), " gradients for ", n->inputs.size(), " inputs");
    for (std::size_t i = 0; i < grads.size(); ++i) {
      Edge& e = n->inputs[i];
      if (!e.active()) continue;
      const Tensor& gi = grads[i];
      if (gi.defined()) {
        AG_CHECK(gi.shape() == n->input_shapes[i] && gi.dtype() == n->input_dtypes[i],
                 AutogradError, "backward of ", n->name, ": gradient for input ", i, " has shape ",
                 gi.shape(), " ", gi.dtype(), ", expected ", n->input_shapes[i], " ",
                 n->input_dtypes[i]);
        if (e.leaf) accumulate_leaf(e.leaf, gi, cap);
        else accumulate(buffers[e.node.get()], gi);
      }
      if (e.node && --deps[e.node.get()] == 0) {
        // A node that received no gradient at all (every path gave undefined) is zero.
        Tensor& slot = buffers[e.node.get()];
        if (!slot.defined()) slot = zeros(n->input_shapes[i], n->input_dtypes[i]);
        ready.push_back(e.node.get());
      }
    }
    if (!retain_graph) {
      n->backward = nullptr;  // frees the saved tensors
      n->released = true;
    }
  }
}

}  // namespace

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
                  bool retain_graph) {
  execute(roots, root_grads, retain_graph, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool allow_unused) {
  Capture cap;
  cap.results.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    AG_CHECK(x.defined() && x.requires_grad(), AutogradError, "grad: input ", i,
             " does not require grad");
    if (x.grad_fn()) cap.nodes[x.grad_fn().get()].push_back(i);
    else cap.leaves[x.impl()].push_back(i);
  }
  execute(outputs, grad_outputs, retain_graph, &cap);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    AG_CHECK(allow_unused || cap.results[i].defined(), AutogradError, "grad: input ", i,
             " of shape ", inputs[i].shape(), " was not used to compute the outputs "
             "(pass allow_unused=true to get an undefined gradient instead)");
  return cap.results;
}

}  // namespace ag
