// Anomaly mode's recording side (torch.autograd.detect_anomaly): while the mode is on,
// record() keeps the call chain that created each node, from glibc's backtrace(). The
// engine symbolizes it only when it reports an error (core/autograd/anomaly.cpp).
#include <execinfo.h>

#include <algorithm>

#include "attograd/detail/tape.h"

namespace ag {
namespace detail {

std::atomic<bool> g_anomaly_enabled{false};

namespace {
constexpr int kMaxFrames = 48;
}

std::shared_ptr<const AnomalyTrace> capture_trace(const Node* running) {
  auto t = std::make_shared<AnomalyTrace>();
  t->frames.resize(kMaxFrames);
  const int n = backtrace(t->frames.data(), kMaxFrames);
  t->frames.resize(static_cast<std::size_t>(std::max(n, 0)));
  if (running) {
    t->parent_name = running->name;
    t->parent = running->anomaly;
  }
  return t;
}

}  // namespace detail

void set_detect_anomaly(bool enabled) { detail::g_anomaly_enabled.store(enabled, std::memory_order_relaxed); }
bool is_anomaly_enabled() { return detail::g_anomaly_enabled.load(std::memory_order_relaxed); }

DetectAnomalyGuard::DetectAnomalyGuard() : prev_(is_anomaly_enabled()) { set_detect_anomaly(true); }
DetectAnomalyGuard::~DetectAnomalyGuard() { set_detect_anomaly(prev_); }

}  // namespace ag
