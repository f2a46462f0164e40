// The engine: run_backward() / grad() walk the nodes record() built (core/tape.cpp) in
// reverse topological order (Kahn's algorithm over dependency counts: no recursion),
// adding gradients up with the ops (a recorded add under create_graph).
#include "attograd/autograd.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "anomaly.h"
#include "attograd/autocast.h"
#include "attograd/factory.h"
#include "attograd/ops.h"
#include "kernels/kernels.h"

namespace ag {

namespace {

// Adds g into an accumulated gradient slot, owning the result. With create_graph the
// sum is a recorded add, so the slot stays connected to the graph. g is taken by value:
// a caller that moves its last handle in lets the slot adopt g's buffer, so a gradient
// passed straight through (add, reshape, views' backward) costs no copy. A node's input
// buffer (`shared_ok`) takes the first g as is even when it is shared, as PyTorch's
// InputBuffer does: buffers are only ever replaced, never written in place, so sharing
// g with another buffer is safe and saves a copy per residual add.
void accumulate(Tensor& slot, Tensor g, bool create_graph, bool shared_ok = false) {
  if (!slot.defined()) {
    // Otherwise take g as is only when nothing else can see it (add's backward hands the
    // same g to both inputs; a leaf's .grad is later written in place).
    bool own = g.is_contiguous() && g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1;
    if (own || shared_ok || create_graph) {
      slot = std::move(g);
    } else {
      slot = kernels::empty(g.shape(), g.dtype());
      kernels::copy(g, slot);
    }
  } else if (create_graph) {
    slot = add(slot, g);
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

void accumulate_leaf(const std::shared_ptr<TensorImpl>& leaf, Tensor g, Capture* cap, bool create_graph) {
  if (cap) {
    auto it = cap->leaves.find(leaf.get());
    if (it != cap->leaves.end())
      for (std::size_t i : it->second) accumulate(cap->results[i], g, create_graph);
    return;
  }
  if (!leaf->grad) {
    Tensor slot;
    accumulate(slot, std::move(g), create_graph);
    leaf->grad = slot.impl_ptr();
  } else if (create_graph) {
    // Out of place, as PyTorch does: the new .grad is part of the recorded graph.
    leaf->grad = add(Tensor(leaf->grad), g).impl_ptr();
  } else {
    // In place, so references to .grad (optimizers) see the sum.
    Tensor grad(leaf->grad);
    kernels::copy(kernels::binary(kernels::Binary::add, grad, g, "backward"), grad);
    grad.storage()->bump_version();
  }
}

// Tensor::register_hook's hooks, in registration order, each on the previous result; an
// undefined result keeps the gradient. A copy of the list: a hook may remove itself.
Tensor run_tensor_hooks(std::vector<std::pair<int64_t, TensorHook>> hooks, Tensor g) {
  for (auto& h : hooks) {
    Tensor r = h.second(g);
    if (!r.defined()) continue;
    AG_CHECK(r.shape() == g.shape() && r.dtype() == g.dtype(), ShapeError,
             "register_hook: hook has changed the size or dtype of the gradient: expected ", g.shape(), " ", g.dtype(),
             ", got ", r.shape(), " ", r.dtype());
    g = std::move(r);
  }
  return g;
}

// Tensor::retain_grad on a non-leaf: a copy of its gradient in .grad, or the sum with
// what is there (out of place, recorded under create_graph), as PyTorch's retains_grad hook.
void retain(TensorImpl& t, const Tensor& g) { t.grad = (t.grad ? add(Tensor(t.grad), g) : ag::clone(g)).impl_ptr(); }

// For ag::grad: the nodes from which a requested input can be reached. Only they run,
// so the graph beyond the inputs is neither computed nor freed. Iterative post-order.
std::unordered_set<Node*> nodes_leading_to(const std::vector<std::shared_ptr<Node>>& roots, const Capture& cap) {
  std::unordered_set<Node*> useful, done;
  std::vector<std::pair<Node*, bool>> stack;  // (node, children pushed)
  for (auto& r : roots) stack.push_back({r.get(), false});
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    if (!expanded) {
      if (done.count(n)) {
        stack.pop_back();
        continue;
      }
      stack.back().second = true;
      for (auto& e : n->inputs)
        if (e.node && !done.count(e.node.get())) stack.push_back({e.node.get(), false});
      continue;
    }
    stack.pop_back();
    if (!done.insert(n).second) continue;
    bool u = cap.nodes.count(n) > 0;
    for (auto& e : n->inputs)
      u = u || (e.node && useful.count(e.node.get())) || (e.leaf && cap.leaves.count(e.leaf.get()));
    if (u) useful.insert(n);
  }
  return useful;
}

// Sets the node whose closure runs (for Saved::output) and restores the previous one.
class CurrentNode {
 public:
  explicit CurrentNode(Node* n) : prev_(detail::current_node()) { detail::set_current_node(n); }
  ~CurrentNode() { detail::set_current_node(prev_); }
  CurrentNode(const CurrentNode&) = delete;
  CurrentNode& operator=(const CurrentNode&) = delete;

 private:
  Node* prev_;
};

// A fused op's backward under create_graph (grad mode on): its Composite recomputes the
// same math from differentiable ops on identity views of the saved inputs, and the
// recorded gradient of that (which can be differentiated again) is returned. The views
// make each gradient the partial derivative with respect to that argument alone, even
// when the inputs depend on each other.
Grads composite_backward(const Composite& c, const Tensor& g, NeedsGrad need) {
  std::vector<Tensor> args(c.inputs.size()), wrt;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    Tensor x = c.inputs[i].get();
    if (x.defined() && x.requires_grad() && need[i]) {
      args[i] = view(x, x.shape());
      wrt.push_back(args[i]);
      where.push_back(i);
    } else {
      args[i] = x;
    }
  }
  Grads grads(c.inputs.size());
  if (wrt.empty()) return grads;
  Tensor out = c.fn(args);
  if (!out.requires_grad()) return grads;
  std::vector<Tensor> gs = grad({out}, wrt, {g}, /*retain_graph=*/true, /*create_graph=*/true,
                                /*allow_unused=*/true);
  for (std::size_t j = 0; j < where.size(); ++j) grads[where[j]] = gs[j];
  return grads;
}

// One backward pass (backward() or ag::grad), phase by phase: seed the roots' gradients,
// count how many edges feed each node (and each hooked leaf), run the hooks of root
// leaves nothing else feeds, then run the nodes in a ready queue (Kahn's algorithm).
class BackwardPass {
 public:
  BackwardPass(bool retain_graph, bool create_graph, Capture* cap)
      : retain_graph_(retain_graph), create_graph_(create_graph), cap_(cap) {}

  void seed(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads);
  void count_dependencies();
  void flush_root_leaves(const std::vector<Tensor>& roots);
  void run();

 private:
  void run_node(Node* n);
  void pass_on(Node* n, Grads& grads, const std::vector<bool>& needs);
  void run_hooks(const std::shared_ptr<TensorImpl>& leaf);

  // Leaves with tensor hooks collect their pass's gradient in leaf_buffers_ first, so the
  // hooks see the whole of it (PyTorch's AccumulateGrad input buffer); for ag::grad only
  // the requested ones. Which leaves is decided before any hook runs, so a hook that adds
  // or removes another leaf's hook cannot strand a buffer.
  void mark_buffered(TensorImpl* leaf) {
    if (!leaf->hooks.empty() && (!cap_ || cap_->leaves.count(leaf) > 0)) buffered_leaves_.insert(leaf);
  }
  bool buffered(TensorImpl* leaf) const { return !buffered_leaves_.empty() && buffered_leaves_.count(leaf) > 0; }
  // Post-accumulate hooks are for backward only: ag::grad touches no .grad.
  bool post_hooked(const TensorImpl* leaf) const { return !cap_ && !leaf->post_accumulate_grad_hooks.empty(); }
  bool hooked(const Edge& e) const { return e.leaf && (buffered(e.leaf.get()) || post_hooked(e.leaf.get())); }
  // ag::grad runs only the nodes that lead to a requested input.
  bool runs(Node* n) const { return !cap_ || useful_.count(n) > 0; }

  bool retain_graph_, create_graph_;
  Capture* cap_;
  std::vector<std::shared_ptr<Node>> root_nodes_;
  std::unordered_map<Node*, Tensor> buffers_;  // each node's summed output gradient
  std::unordered_map<TensorImpl*, Tensor> leaf_buffers_;
  std::unordered_set<TensorImpl*> buffered_leaves_;
  std::unordered_set<Node*> useful_;
  std::unordered_map<Node*, int> deps_;             // edges of running nodes still to come
  std::unordered_map<TensorImpl*, int> leaf_deps_;  // the same for hooked leaves
  std::vector<Node*> ready_;
};

void BackwardPass::seed(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads) {
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    AG_CHECK(r.defined(), ValueError, "backward: output ", i, " is undefined");
    AG_CHECK(r.requires_grad(), AutogradError, "backward: output of shape ", r.shape(),
             " does not require grad (no input of its computation requires grad)");
    Tensor g = root_grads.empty() ? Tensor() : root_grads[i];
    if (!g.defined()) {
      AG_CHECK(r.numel() == 1, AutogradError,
               "backward: a gradient can be created implicitly only "
               "for one-element outputs, got shape ",
               r.shape(), "; pass one");
      g = ones_like(r);
    }
    AG_CHECK(g.shape() == r.shape() && g.dtype() == r.dtype(), ShapeError, "backward: gradient ", g.shape(), " ",
             g.dtype(), " does not match output ", r.shape(), " ", r.dtype());
    if (r.grad_fn()) {
      accumulate(buffers_[r.grad_fn().get()], std::move(g), create_graph_);
      root_nodes_.push_back(r.grad_fn());
    } else {
      mark_buffered(r.impl());
      if (buffered(r.impl()))
        accumulate(leaf_buffers_[r.impl()], std::move(g), create_graph_, /*shared_ok=*/true);
      else
        accumulate_leaf(r.impl_ptr(), std::move(g), cap_, create_graph_);
    }
  }
}

void BackwardPass::count_dependencies() {
  if (cap_) useful_ = nodes_leading_to(root_nodes_, *cap_);
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (auto& n : root_nodes_)
    if (runs(n.get()) && seen.insert(n.get()).second) stack.push_back(n.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (auto& e : n->inputs) {
      if (e.leaf) mark_buffered(e.leaf.get());
      if (hooked(e)) ++leaf_deps_[e.leaf.get()];
      if (!e.node || !runs(e.node.get())) continue;
      ++deps_[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
}

// Once every gradient of the pass reached a hooked leaf: its tensor hooks on the sum,
// then .grad (or ag::grad's result), then its post-accumulate hooks.
void BackwardPass::run_hooks(const std::shared_ptr<TensorImpl>& leaf) {
  auto it = leaf_buffers_.find(leaf.get());
  if (it != leaf_buffers_.end()) {
    Tensor g = std::move(it->second);
    leaf_buffers_.erase(it);
    if (g.defined()) accumulate_leaf(leaf, run_tensor_hooks(leaf->hooks, std::move(g)), cap_, create_graph_);
  }
  if (!post_hooked(leaf.get())) return;
  Tensor t(leaf);
  auto hooks = leaf->post_accumulate_grad_hooks;  // a hook may remove itself
  for (auto& h : hooks) h.second(t);
}

void BackwardPass::flush_root_leaves(const std::vector<Tensor>& roots) {
  std::unordered_set<TensorImpl*> flushed;  // a leaf given twice as a root runs once
  for (const Tensor& r : roots)
    if (!r.grad_fn() && (buffered(r.impl()) || post_hooked(r.impl())) && leaf_deps_[r.impl()] == 0 &&
        flushed.insert(r.impl()).second)
      run_hooks(r.impl_ptr());
}

void BackwardPass::run() {
  std::unordered_set<Node*> queued;
  for (auto& n : root_nodes_)
    if (runs(n.get()) && deps_[n.get()] == 0 && queued.insert(n.get()).second) ready_.push_back(n.get());
  // Closures build no graph, unless create_graph asks for the backward to be recorded.
  std::optional<NoGradGuard> no_grad;
  std::optional<EnableGradGuard> with_grad;
  if (create_graph_)
    with_grad.emplace();
  else
    no_grad.emplace();
  while (!ready_.empty()) {
    Node* n = ready_.back();
    ready_.pop_back();
    run_node(n);
  }
}

void BackwardPass::run_node(Node* n) {
  Tensor g = std::move(buffers_[n]);
  buffers_.erase(n);
  // The output's tensor hooks (may replace g), then retain_grad, then ag::grad's capture.
  if (!n->tensor_pre_hooks.empty()) g = run_tensor_hooks(n->tensor_pre_hooks, std::move(g));
  if (auto t = n->retains_grad.lock()) retain(*t, g);
  if (cap_) {
    auto it = cap_->nodes.find(n);
    if (it != cap_->nodes.end())
      for (std::size_t i : it->second) accumulate(cap_->results[i], g, create_graph_);
  }
  AG_CHECK(!n->released, AutogradError, "backward: the graph through '", n->name,
           "' was already freed by an earlier backward; pass retain_graph=true to the first "
           "backward to go through it twice");
  std::vector<bool> needs(n->inputs.size());
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const Edge& e = n->inputs[i];
    needs[i] = e.active() && (!cap_ || (e.node ? runs(e.node.get()) : cap_->leaves.count(e.leaf.get()) > 0));
  }
  Grads grads(n->inputs.size());
  try {
    CurrentNode current(n);
    if (std::find(needs.begin(), needs.end(), true) != needs.end())
      grads = create_graph_ && n->composite ? composite_backward(*n->composite, g, NeedsGrad(needs))
                                            : n->backward(g, NeedsGrad(needs));
  } catch (const VersionError& e) {
    throw VersionError(detail::cat("backward of ", n->name, ": ", e.what(), detail::describe_creation(*n)));
  }
  AG_ASSERT(grads.size() == n->inputs.size(), "backward of ", n->name, " returned ", grads.size(), " gradients for ",
            n->inputs.size(), " inputs");
  g = Tensor();  // a closure that returns g itself hands over its only handle
  if (detail::g_anomaly_enabled.load(std::memory_order_relaxed)) detail::check_gradients(*n, grads, needs);
  pass_on(n, grads, needs);
  if (!retain_graph_) {
    n->backward = nullptr;  // frees the saved tensors
    n->composite.reset();
    n->released = true;
  }
}

// Hands n's input gradients to the nodes and leaves they belong to; a node whose last
// edge this was becomes ready.
void BackwardPass::pass_on(Node* n, Grads& grads, const std::vector<bool>& needs) {
  for (std::size_t i = 0; i < grads.size(); ++i) {
    Edge& e = n->inputs[i];
    if (!needs[i]) continue;
    Tensor& gi = grads[i];
    if (gi.defined()) {
      AG_CHECK(gi.shape() == n->input_shapes[i] && gi.dtype() == n->input_dtypes[i], AutogradError, "backward of ",
               n->name, ": gradient for input ", i, " has shape ", gi.shape(), " ", gi.dtype(), ", expected ",
               n->input_shapes[i], " ", n->input_dtypes[i]);
      if (e.leaf && buffered(e.leaf.get()))
        accumulate(leaf_buffers_[e.leaf.get()], std::move(gi), create_graph_, /*shared_ok=*/true);
      else if (e.leaf)
        accumulate_leaf(e.leaf, std::move(gi), cap_, create_graph_);
      else
        accumulate(buffers_[e.node.get()], std::move(gi), create_graph_, /*shared_ok=*/true);
    }
    if (hooked(e) && --leaf_deps_[e.leaf.get()] == 0) run_hooks(e.leaf);
    if (e.node && --deps_[e.node.get()] == 0) {
      // A node that received no gradient at all (every path gave undefined) is zero.
      Tensor& slot = buffers_[e.node.get()];
      if (!slot.defined()) slot = zeros(n->input_shapes[i], n->input_dtypes[i]);
      ready_.push_back(e.node.get());
    }
  }
}

void execute(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads, bool retain_graph,
             bool create_graph, Capture* cap) {
  AG_CHECK(root_grads.empty() || root_grads.size() == roots.size(), ValueError, "backward: ", roots.size(),
           " outputs but ", root_grads.size(), " gradients");
  BackwardPass pass(retain_graph, create_graph, cap);
  pass.seed(roots, root_grads);
  pass.count_dependencies();
  pass.flush_root_leaves(roots);
  pass.run();
}

// Callbacks queued (queue_callback) during the backward pass that runs on this thread.
thread_local std::vector<std::function<void()>>* g_final_callbacks = nullptr;

// Runs execute() and then the callbacks its hooks queued; a nested backward (from a
// hook) keeps its own list.
void execute_with_callbacks(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads, bool retain_graph,
                            bool create_graph, Capture* cap) {
  autocast no_autocast(DType::bf16, false);  // backward never autocasts, as PyTorch's
  std::vector<std::function<void()>> callbacks;
  auto* outer = g_final_callbacks;
  g_final_callbacks = &callbacks;
  struct Restore {
    std::vector<std::function<void()>>* outer;
    ~Restore() { g_final_callbacks = outer; }
  } restore{outer};
  execute(roots, root_grads, retain_graph, create_graph, cap);
  for (std::size_t i = 0; i < callbacks.size(); ++i) {  // a callback may queue another
    auto fn = std::move(callbacks[i]);
    fn();
  }
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  AG_CHECK(g_final_callbacks != nullptr, AutogradError, "queue_callback: no backward pass is running on this thread");
  g_final_callbacks->push_back(std::move(callback));
}

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads, bool retain_graph,
                  bool create_graph) {
  execute_with_callbacks(roots, root_grads, retain_graph, create_graph, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  Capture cap;
  cap.results.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    AG_CHECK(x.defined() && x.requires_grad(), AutogradError, "grad: input ", i, " does not require grad");
    if (x.grad_fn())
      cap.nodes[x.grad_fn().get()].push_back(i);
    else
      cap.leaves[x.impl()].push_back(i);
  }
  execute_with_callbacks(outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph, &cap);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    AG_CHECK(allow_unused || cap.results[i].defined(), AutogradError, "grad: input ", i, " of shape ",
             inputs[i].shape(),
             " was not used to compute the outputs "
             "(pass allow_unused=true to get an undefined gradient instead)");
  return cap.results;
}

void Tensor::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  run_backward({*this}, {grad}, retain_graph.value_or(create_graph), create_graph);
}

}  // namespace ag
