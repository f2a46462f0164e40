// Activation checkpointing (attograd/activation_checkpoint.h): PyTorch's torch.utils.checkpoint.
//
// Design (the reentrant form, with the parameters found by a walk):
//   forward   run fn once with grad mode on, on detached copies of the inputs, so that
//             its graph ends at those copies and at the leaves fn uses (parameters);
//             walk that graph to collect the leaves, then detach the outputs and drop
//             the graph: the activations its nodes saved are freed here. One node is
//             recorded through record() whose inputs are the explicit inputs plus those
//             leaves.
//   backward  that node's closure runs fn again with grad mode on (the generator put
//             back where the forward found it) and returns ag::grad of the recomputed
//             outputs with respect to the inputs and the leaves; under create_graph the
//             recomputation starts from identity views of the graph-connected inputs, so
//             the gradients it returns are connected to the outer graph (double backward).
// Why not the non-reentrant form (PyTorch's default since 2.x): it swaps saved tensors
// through saved-tensor pack/unpack hooks, which the tape does not have; adding them
// would touch every Saved. The walk needs only Node::sequence_nr, to tell the nodes fn
// recorded from older ones: a captured non-leaf tensor that requires grad (an older
// node) cannot be differentiated to without running the outer graph twice, so it is an
// error that says to pass it as an input. The cost: fn's activations are alive until fn
// returns (one block's worth at the peak, as in the recomputation anyway).
#include "attograd/activation_checkpoint.h"

#include <string>
#include <unordered_set>

#include "attograd/autograd.h"
#include "attograd/generator.h"
#include "attograd/ops.h"
#include "attograd/autocast.h"

namespace ag {

namespace {

// Fresh leaves on the inputs' storage, requiring grad where the inputs do: fn's graph
// then ends at them instead of running into the graph that made the inputs.
std::vector<Tensor> detached_leaves(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    if (!x.defined()) {
      out.emplace_back();
      continue;
    }
    Tensor d = x.detach();
    if (x.requires_grad()) d.requires_grad_();
    out.push_back(std::move(d));
  }
  return out;
}

// The leaves that require grad which the graph of `outs` reaches, other than `args`
// (fn's own inputs), in first-seen order. Every node must have been recorded by fn
// (sequence_nr >= first): an older one is a captured non-leaf tensor.
std::vector<Tensor> captured_leaves(const std::vector<Tensor>& outs, const std::vector<Tensor>& args, uint64_t first) {
  std::unordered_set<const TensorImpl*> own, seen_leaves;
  for (const Tensor& a : args)
    if (a.defined()) own.insert(a.impl());
  std::vector<Tensor> leaves;
  auto add_leaf = [&](const std::shared_ptr<TensorImpl>& leaf) {
    if (!own.count(leaf.get()) && seen_leaves.insert(leaf.get()).second) leaves.emplace_back(leaf);
  };
  std::unordered_set<const Node*> seen;
  std::vector<Node*> stack;
  for (const Tensor& o : outs) {
    if (!o.defined() || !o.requires_grad()) continue;
    if (!o.grad_fn())
      add_leaf(o.impl_ptr());  // fn returned a parameter as is
    else if (seen.insert(o.grad_fn().get()).second)
      stack.push_back(o.grad_fn().get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    AG_CHECK(n->sequence_nr >= first, ValueError,
             "checkpoint: fn uses a tensor that requires grad, is not a leaf and is not one of its inputs (made by '",
             n->name, "' before the checkpoint); pass it to checkpoint as an input");
    for (const Edge& e : n->inputs) {
      if (e.leaf) add_leaf(e.leaf);
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
  return leaves;
}

// Puts the default generator in `state` for its lifetime, then back where it was.
class RngAt {
 public:
  explicit RngAt(const std::string* state) {
    if (!state) return;
    now_ = default_generator().state();
    default_generator().set_state(*state);
    active_ = true;
  }
  ~RngAt() {
    if (active_) default_generator().set_state(now_);
  }
  RngAt(const RngAt&) = delete;
  RngAt& operator=(const RngAt&) = delete;

 private:
  std::string now_;
  bool active_ = false;
};

// What the checkpoint node's closure needs. Outputs that require grad are packed (flat,
// in order) into the node's one output tensor: out_shapes gives their shapes.
struct Recompute {
  CheckpointMultiFn fn;
  std::vector<Saved> inputs;  // the explicit inputs (graph-connected under create_graph)
  std::vector<bool> input_grad;
  std::vector<Tensor> leaves;       // parameters fn uses (node inputs after the explicit ones)
  std::vector<std::size_t> packed;  // indices of fn's outputs in the node's output
  std::vector<Shape> out_shapes;    // their shapes
  bool preserve_rng = true;
  std::string rng;  // the default generator's state before the forward
  // The forward's autocast state, in force again for the recomputation (the engine turns
  // autocast off for backward), so it computes in the same dtypes, as PyTorch's.
  bool autocast_on = false;
  DType autocast_dtype = DType::bf16;

  Grads operator()(const Tensor& g, NeedsGrad need) const {
    const std::size_t n_in = inputs.size();
    const bool create_graph = grad_enabled();  // the engine turns grad mode on for it
    std::vector<Tensor> args(n_in), wrt;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < n_in; ++i) {
      Tensor x = inputs[i].get();  // VersionError if changed in place since the forward
      if (!x.defined()) continue;
      if (!input_grad[i]) {
        args[i] = x;
        continue;
      }
      // create_graph: an identity view of the graph-connected input, so the gradient is
      // recorded back to it; otherwise a fresh leaf on the same storage.
      args[i] = create_graph ? view(x, x.shape()) : x.detach().requires_grad_();
      if (need[i]) {
        wrt.push_back(args[i]);
        where.push_back(i);
      }
    }
    for (std::size_t j = 0; j < leaves.size(); ++j)
      if (need[n_in + j]) {
        wrt.push_back(leaves[j]);
        where.push_back(n_in + j);
      }
    Grads grads(n_in + leaves.size());
    if (wrt.empty()) return grads;

    std::vector<Tensor> outs;
    {
      RngAt rng_at(preserve_rng ? &rng : nullptr);
      EnableGradGuard with_grad;
      autocast as_forward(autocast_dtype, autocast_on);
      outs = fn(args);
    }
    AG_CHECK(outs.size() > (packed.empty() ? 0 : packed.back()), AutogradError,
             "checkpoint: the recomputation returned ", outs.size(), " outputs, the forward more");
    std::vector<Tensor> roots, root_grads;
    int64_t offset = 0;
    for (std::size_t k = 0; k < packed.size(); ++k) {
      const Tensor& y = outs[packed[k]];
      AG_CHECK(y.defined() && y.shape() == out_shapes[k], AutogradError, "checkpoint: output ", packed[k],
               " of the recomputation has shape ", y.defined() ? y.shape() : Shape{}, ", the forward's had ",
               out_shapes[k], " (fn must compute the same thing twice)");
      const int64_t n = y.numel();
      Tensor gk = packed.size() == 1 ? g.reshape(out_shapes[k]) : narrow(g, 0, offset, n).reshape(out_shapes[k]);
      offset += n;
      if (!y.requires_grad()) continue;  // no path to any input: zero gradient
      roots.push_back(y);
      root_grads.push_back(gk);
    }
    if (roots.empty()) return grads;
    std::vector<Tensor> gs = grad(roots, wrt, root_grads, /*retain_graph=*/create_graph, create_graph,
                                  /*allow_unused=*/true);
    for (std::size_t j = 0; j < where.size(); ++j) grads[where[j]] = gs[j];
    return grads;
  }
};

std::vector<Tensor> checkpoint_impl(const CheckpointMultiFn& fn, const std::vector<Tensor>& inputs,
                                    bool preserve_rng_state, bool single) {
  if (!grad_enabled()) return fn(inputs);
  auto rc = std::make_shared<Recompute>();
  rc->fn = fn;
  rc->preserve_rng = preserve_rng_state;
  rc->autocast_on = is_autocast_enabled();
  rc->autocast_dtype = get_autocast_dtype();
  if (preserve_rng_state) rc->rng = default_generator().state();

  std::vector<Tensor> args = detached_leaves(inputs);
  const uint64_t first = next_sequence_nr();
  std::vector<Tensor> outs = fn(args);
  rc->leaves = captured_leaves(outs, args, first);
  args.clear();

  // Detach the outputs: dropping `outs` then frees fn's graph and its saved activations.
  std::vector<Tensor> result(outs.size());
  std::vector<Tensor> diff;  // detached outputs that required grad, packed below
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined()) continue;
    result[k] = outs[k].detach();
    if (outs[k].requires_grad()) {
      rc->packed.push_back(k);
      rc->out_shapes.push_back(outs[k].shape());
      diff.push_back(result[k]);
    }
  }
  outs.clear();
  if (diff.empty()) return result;  // nothing requires grad: no node

  std::vector<Tensor> node_inputs = inputs;
  node_inputs.insert(node_inputs.end(), rc->leaves.begin(), rc->leaves.end());
  rc->inputs.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    rc->inputs.emplace_back(x);
    rc->input_grad.push_back(x.defined() && x.requires_grad());
  }

  Tensor packed;
  if (single) {
    packed = diff[0];
  } else {
    for (const Tensor& d : diff)
      AG_CHECK(d.dtype() == diff[0].dtype(), DTypeError,
               "checkpoint: the outputs that require grad must share a dtype, got ", diff[0].dtype(), " and ",
               d.dtype());
    std::vector<Tensor> flat;
    for (const Tensor& d : diff) flat.push_back(d.reshape({-1}));
    packed = cat(flat, 0);  // (sum of numels,), no graph: diff is detached
  }
  packed = record("checkpoint", packed, node_inputs, [rc](const Tensor& g, NeedsGrad need) { return (*rc)(g, need); });
  if (single) {
    result[rc->packed[0]] = packed;
    return result;
  }
  int64_t offset = 0;
  for (std::size_t k = 0; k < rc->packed.size(); ++k) {
    const int64_t n = numel(rc->out_shapes[k]);
    result[rc->packed[k]] = narrow(packed, 0, offset, n).reshape(rc->out_shapes[k]);
    offset += n;
  }
  return result;
}

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state) {
  AG_CHECK(fn != nullptr, ValueError, "checkpoint: fn is empty");
  CheckpointMultiFn multi = [fn](const std::vector<Tensor>& xs) {
    Tensor y = fn(xs);
    AG_CHECK(y.defined(), ValueError, "checkpoint: fn returned an undefined tensor");
    return std::vector<Tensor>{y};
  };
  return checkpoint_impl(multi, inputs, preserve_rng_state, /*single=*/true)[0];
}

std::vector<Tensor> checkpoint(const CheckpointMultiFn& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state) {
  AG_CHECK(fn != nullptr, ValueError, "checkpoint: fn is empty");
  return checkpoint_impl(fn, inputs, preserve_rng_state, /*single=*/false);
}

}  // namespace ag
