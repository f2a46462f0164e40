#pragma once
// Anomaly mode's internals (internal header): the global flag the engine reads once per
// record and once per backward step, where a node was created, and the check of each
// closure's gradients for nan and inf.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "attograd/autograd.h"

namespace ag {

// Where a node was created: the return addresses of the forward call chain (symbolized
// only when an error needs them), and, for a node recorded by a create_graph backward,
// the node whose closure was running and where that one was created.
struct AnomalyTrace {
  std::vector<void*> frames;
  const char* parent_name = nullptr;
  std::shared_ptr<const AnomalyTrace> parent;
};

namespace detail {

// Global, as PyTorch's AnomalyMode: every thread sees the same setting.
extern std::atomic<bool> g_anomaly_enabled;

// The call chain of the record() that is running; `running` is the node whose closure
// the engine runs on this thread (nullptr outside a backward).
std::shared_ptr<const AnomalyTrace> capture_trace(const Node* running);

// "\n'<name>' was created at:\n  #0 ..." for errors, or "" for a node with no trace.
std::string describe_creation(const Node& n);

// Throws AutogradError when a gradient that node `n`'s closure returned for an input in
// `needs` holds nan or inf: the op's name, its inputs' shapes and its creation trace.
void check_gradients(const Node& n, const Grads& grads, const std::vector<bool>& needs);

}  // namespace detail
}  // namespace ag
