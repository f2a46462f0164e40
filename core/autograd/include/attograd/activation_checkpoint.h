#pragma once
/// \file
/// Activation checkpointing (PyTorch's torch.utils.checkpoint.checkpoint): trade compute
/// for memory. The forward runs `fn` and keeps only its inputs and outputs, none of the
/// activations its ops would save for backward; the backward runs `fn` again (grad mode
/// on, the random generator put back where the first forward found it, so dropout draws
/// the same masks) and backpropagates through that recomputation.
///
///   // PyTorch: y = checkpoint(block, x)
///   Tensor y = ag::checkpoint([block](const Tensor& x) { return block(x); }, x);
///
/// `fn` is kept until backward and called again there, so capture by value what may be
/// gone by then (a module holder, as above, copies cheaply); a [&] capture of a loop
/// variable dangles once the loop moves on.
///   // or: ag::checkpoint(fn, std::vector<Tensor>{x, mask}, /*preserve_rng_state=*/true)
///
/// Gradients reach the inputs and every leaf tensor that requires grad `fn` uses inside
/// (module parameters captured by the closure), through the ordinary engine: backward,
/// ag::grad, post-accumulate-grad hooks (DDP) and create_graph (double backward) work as
/// without checkpointing, with equal results. A tensor `fn` captures that requires grad
/// but is not a leaf (made by ops before the call) must be passed as an input instead:
/// the forward throws ValueError naming the op that made it.
///
/// `fn` must compute the same thing twice: no reading of state that the forward changes
/// (module buffers it updates, a KV cache). Under NoGradGuard, checkpoint just calls fn.
/// Only the default generator (ag::default_generator) is saved and restored, as PyTorch
/// restores only its default CPU (and CUDA) generators; preserve_rng_state = false skips
/// that, and the recomputation then draws fresh numbers.
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "attograd/tensor.h"

namespace ag {

/// The function a checkpoint recomputes: its inputs -> one output.
using CheckpointFn = std::function<Tensor(const std::vector<Tensor>&)>;
/// The same for a function with several outputs.
using CheckpointMultiFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// fn(inputs), recomputed in backward instead of keeping its activations.
Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state = true);
/// Several outputs: the outputs that require grad must share one dtype (they are packed
/// into one buffer behind one graph node, so the backward recomputes fn once).
std::vector<Tensor> checkpoint(const CheckpointMultiFn& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state = true);

/// Variadic convenience, as torch's checkpoint(fn, *args): fn takes the tensors one by
/// one and returns a Tensor or a std::vector<Tensor>; the RNG state is preserved.
template <class F, class... Rest>
requires(std::is_same_v<Rest, Tensor>&&...) && std::is_invocable_v<F&, const Tensor&, const Rest&...> auto checkpoint(
                                                   F fn, const Tensor& x, const Rest&... rest) {
  using R = std::invoke_result_t<F&, const Tensor&, const Rest&...>;
  static_assert(std::is_same_v<R, Tensor> || std::is_same_v<R, std::vector<Tensor>>,
                "checkpoint: fn must return a Tensor or a std::vector<Tensor>");
  constexpr std::size_t n = 1 + sizeof...(Rest);
  std::function<R(const std::vector<Tensor>&)> call = [fn = std::move(fn)](const std::vector<Tensor>& v) mutable {
    return [&]<std::size_t... I>(std::index_sequence<I...>) { return fn(v[I]...); }
    (std::make_index_sequence<n>{});
  };
  return checkpoint(call, std::vector<Tensor>{x, rest...});
}

}  // namespace ag
