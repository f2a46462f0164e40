// The schedulers of schedulers, ChainedScheduler and SequentialLR, as
// torch.optim.lr_scheduler (1.13) computes them, and their state.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <numbers>
#include <string>

#include "attograd/optim/scheduler.h"
#include "state_text.h"

namespace ag::optim {

// ---- ChainedScheduler ----
ChainedScheduler::ChainedScheduler(std::vector<LRScheduler*> schedulers) : schedulers_(std::move(schedulers)) {
  AG_CHECK(!schedulers_.empty(), ValueError, "ChainedScheduler: no schedulers");
  for (std::size_t i = 0; i < schedulers_.size(); ++i)
    AG_CHECK(schedulers_[i] != nullptr && &schedulers_[i]->optimizer() == &schedulers_[0]->optimizer(), ValueError,
             "ChainedScheduler expects all schedulers to belong to the same optimizer, but got scheduler ", i,
             schedulers_[i] ? " with another one" : " null");
}

void ChainedScheduler::step() {
  for (LRScheduler* s : schedulers_) s->step();
}

// ---- SequentialLR ----
SequentialLR::SequentialLR(Optimizer& opt, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones)
    : schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  AG_CHECK(!schedulers_.empty(), ValueError, "SequentialLR: no schedulers");
  for (std::size_t i = 0; i < schedulers_.size(); ++i)
    AG_CHECK(schedulers_[i] != nullptr && &schedulers_[i]->optimizer() == &opt, ValueError,
             "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at "
             "index ",
             i, " to be different than the optimizer passed in");
  AG_CHECK(milestones_.size() + 1 == schedulers_.size(), ValueError,
           "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone "
           "points, but got number of schedulers ",
           schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  // PyTorch: the groups back at initial_lr, every schedule one step back, then the first
  // restarted (its step 0 again, from the initial lr).
  for (std::size_t g = 0; g < opt.num_groups(); ++g) opt.set_lr(*opt.initial_lr(g), g);
  for (LRScheduler* s : schedulers_) --s->steps_;
  schedulers_[0]->step();
  last_lrs_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++steps_;
  const auto idx = std::upper_bound(milestones_.begin(), milestones_.end(), steps_) - milestones_.begin();
  LRScheduler* s = schedulers_[static_cast<std::size_t>(idx)];
  if (idx > 0 && milestones_[static_cast<std::size_t>(idx - 1)] == steps_) {
    const std::vector<double> lrs = s->lrs_at(0, s->base_lrs_);  // PyTorch's step(0): the closed form at 0
    s->steps_ = 0;
    s->set_lrs(lrs);
  } else {
    s->step();
  }
  last_lrs_ = s->get_last_lr();
}

// ---- state of the schedulers of schedulers ----
namespace {

// Each scheduler's entries under "<i>.".
Metadata prefixed(const std::vector<LRScheduler*>& schedulers) {
  Metadata m;
  for (std::size_t i = 0; i < schedulers.size(); ++i)
    for (const auto& [k, v] : schedulers[i]->state_dict()) m[std::to_string(i) + "." + k] = v;
  return m;
}

// Scheduler i's entries of `state`, without the prefix.
Metadata part(const Metadata& state, std::size_t i) {
  const std::string p = std::to_string(i) + ".";
  Metadata m;
  for (const auto& [k, v] : state)
    if (k.rfind(p, 0) == 0) m[k.substr(p.size())] = v;
  return m;
}

}  // namespace

// A later schedule of a SequentialLR that has not started sits at step -1 (PyTorch's
// last_epoch -= 1), which a scheduler's own load_state_dict refuses: it loads as step 0
// and is put back at -1.
void SequentialLR::load_part(LRScheduler& s, Metadata m) {
  const bool not_started = m.count("steps") && m.at("steps") == "-1";
  if (not_started) m["steps"] = "0";
  s.load_state_dict(m);
  if (not_started) s.steps_ = -1;
}

namespace {

// Loads each scheduler's part in order with `load`; a bad part puts every scheduler back
// as it was, through `load` too, and rethrows.
void load_parts(const std::vector<LRScheduler*>& schedulers, const Metadata& state, const char* who,
                const std::function<void(LRScheduler&, Metadata)>& load) {
  std::vector<Metadata> before;
  for (LRScheduler* s : schedulers) before.push_back(s->state_dict());
  try {
    for (std::size_t i = 0; i < schedulers.size(); ++i) {
      const Metadata m = part(state, i);
      AG_CHECK(!m.empty(), ValueError, who, ".load_state_dict: no state for scheduler ", i);
      load(*schedulers[i], m);
    }
  } catch (...) {
    for (std::size_t i = 0; i < schedulers.size(); ++i) load(*schedulers[i], before[i]);
    throw;
  }
}

}  // namespace

Metadata ChainedScheduler::state_dict() const { return prefixed(schedulers_); }

void ChainedScheduler::load_state_dict(const Metadata& state) {
  load_parts(schedulers_, state, "ChainedScheduler", [](LRScheduler& s, const Metadata& m) { s.load_state_dict(m); });
}

Metadata SequentialLR::state_dict() const {
  Metadata m = prefixed(schedulers_);
  m["steps"] = std::to_string(steps_);
  return m;
}

void SequentialLR::load_state_dict(const Metadata& state) {
  const auto it = state.find("steps");
  AG_CHECK(it != state.end(), ValueError, "SequentialLR.load_state_dict: no 'steps' entry");
  int64_t steps = -1;
  try {
    std::size_t used = 0;
    steps = std::stoll(it->second, &used);
    if (used != it->second.size()) steps = -1;
  } catch (const std::exception&) {}
  AG_CHECK(steps >= 0, ValueError, "SequentialLR.load_state_dict: 'steps' must be a count >= 0, got '", it->second,
           "'");
  load_parts(schedulers_, state, "SequentialLR", [](LRScheduler& s, Metadata m) { load_part(s, std::move(m)); });
  steps_ = steps;
  // The active schedule's lrs are the optimizer's (each load set its own last_lr).
  const auto idx = std::upper_bound(milestones_.begin(), milestones_.end(), steps_) - milestones_.begin();
  LRScheduler* s = schedulers_[static_cast<std::size_t>(idx)];
  s->set_lrs(s->get_last_lr());
  last_lrs_ = s->get_last_lr();
}

}  // namespace ag::optim
