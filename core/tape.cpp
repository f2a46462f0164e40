// The tape: record() builds nodes, Saved keeps what their closures need, grad mode.
// The engine that runs the nodes is core/autograd/engine.cpp (a layer above the ops).
#include "attograd/tape.h"

#include <atomic>

#include "attograd/detail/tape.h"

namespace ag {
namespace {
thread_local bool g_grad_enabled = true;
// The node whose closure the engine is running (Saved::output reconnects to it).
thread_local Node* g_current_node = nullptr;
// Node::sequence_nr of the next node, shared by all threads.
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

uint64_t next_sequence_nr() { return g_next_sequence_nr.load(std::memory_order_relaxed); }

Node* detail::current_node() { return g_current_node; }
void detail::set_current_node(Node* n) { g_current_node = n; }

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
    // The closure goes first: its saved tensors may hold the same input nodes (for
    // double backward), and only a node we alone own can be taken over.
    n.backward = nullptr;
    n.composite.reset();
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
  node->sequence_nr = g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed);
  node->inputs.resize(inputs.size());
  node->input_shapes.resize(inputs.size());
  node->input_dtypes.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) continue;
    node->input_shapes[i] = t.shape();
    node->input_dtypes[i] = t.dtype();
    if (!t.requires_grad()) continue;
    if (t.grad_fn())
      node->inputs[i].node = t.grad_fn();
    else
      node->inputs[i].leaf = t.impl_ptr();
  }
  node->backward = std::move(fn);
  if (detail::g_anomaly_enabled.load(std::memory_order_relaxed)) node->anomaly = detail::capture_trace(g_current_node);
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
  return out;
}

Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn, Composite composite) {
  out = record(name, std::move(out), inputs, std::move(fn));
  if (out.grad_fn()) out.grad_fn()->composite = std::make_unique<Composite>(std::move(composite));
  return out;
}

Saved::Saved(const Tensor& t) {
  if (!t.defined()) return;
  t_ = t.detach();
  version_ = t.storage()->version();
  if (t.grad_fn())
    fn_ = t.grad_fn();
  else if (t.requires_grad())
    leaf_ = t.impl_ptr();
}

Saved Saved::output(const Tensor& y) {
  Saved s;
  if (!y.defined()) return s;
  s.t_ = y.detach();
  s.version_ = y.storage()->version();
  s.output_ = true;
  return s;
}

Tensor Saved::get() const {
  if (t_.defined() && t_.storage()->version() != version_)
    throw VersionError(detail::cat("a tensor of shape ", t_.shape(),
                                   " saved for backward was "
                                   "modified in place afterwards (version ",
                                   t_.storage()->version(), ", saved at ", version_, ")"));
  if (!grad_enabled() || !t_.defined()) return t_;
  if (leaf_) return Tensor(leaf_);
  std::shared_ptr<Node> fn = fn_;
  if (output_ && g_current_node) fn = g_current_node->shared_from_this();
  if (!fn) return t_;
  // The same storage and layout, made by `fn`: ops on it record edges into fn.
  Tensor connected = t_.detach();
  connected.impl()->grad_fn = std::move(fn);
  connected.impl()->requires_grad = true;
  return connected;
}

}  // namespace ag
