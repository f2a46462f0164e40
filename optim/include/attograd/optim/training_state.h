#pragma once
/// \file
/// Training checkpoints in one safetensors file:
/// - tensors: `model.<param or buffer name>`, `optim.<optimizer state key>`
/// - metadata: `format`, `sched.<key>`, `rng.default` (the default generator's state),
///   `extra.<key>` (the caller's own, e.g. a data generator's state or the epoch)
/// Saving is atomic (temporary file, fsync, rename): a crash mid-save leaves the previous
/// checkpoint intact, and the next save to the path removes the crashed one's temporary.
/// Loading validates the whole file, state values included (finite moments, step counts
/// in [0, 2^53]), and restores everything it changed if any part is rejected, so a bad
/// file changes nothing.
#include <string>

#include "attograd/nn/module.h"
#include "attograd/optim/optimizer.h"
#include "attograd/optim/scheduler.h"

namespace ag {

/// Writes model, optimizer and scheduler state to one safetensors file atomically; see CHECKPOINTS.md.
void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer* optimizer = nullptr,
                     const optim::LRScheduler* scheduler = nullptr, const Metadata& extra = {});

/// Returns the extra metadata (keys without the "extra." prefix).
Metadata load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer* optimizer = nullptr,
                         optim::LRScheduler* scheduler = nullptr);

}  // namespace ag
