#pragma once
// The tape's internals shared with the engine (autograd layer); not part of the API.
// Anomaly mode: the global flag the tape and the engine read once per record and once
// per backward step, and where a node was created.
#include <atomic>
#include <memory>
#include <vector>

#include "attograd/tape.h"

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

// The node whose closure the engine runs on this thread (nullptr outside a backward):
// Saved::output reconnects to it, and nodes recorded meanwhile name it as their parent.
Node* current_node();
void set_current_node(Node* n);

}  // namespace detail
}  // namespace ag
