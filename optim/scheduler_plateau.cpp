// ReduceLROnPlateau, as torch.optim.lr_scheduler (1.13) computes it: driven by a metric,
// outside LRScheduler as in PyTorch.
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

// ---- ReduceLROnPlateau ----
ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& o)
    : opt_(opt), options_(o), best_(o.mode() == PlateauMode::min ? INFINITY : -INFINITY) {
  AG_CHECK(o.factor() < 1.0 && o.factor() >= 0, ValueError,
           "ReduceLROnPlateau: Factor should be < 1.0 (and >= 0), got ", o.factor());
  AG_CHECK(o.patience() >= 0 && o.cooldown() >= 0, ValueError,
           "ReduceLROnPlateau: patience and cooldown must be >= 0, got ", o.patience(), " and ", o.cooldown());
  AG_CHECK(std::isfinite(o.threshold()) && std::isfinite(o.eps()), ValueError,
           "ReduceLROnPlateau: threshold and eps must be finite, got ", o.threshold(), " and ", o.eps());
  const std::size_t n = opt.num_groups();
  AG_CHECK(o.min_lr().size() == 1 || o.min_lr().size() == n, ValueError, "ReduceLROnPlateau: expected ", n,
           " min_lrs, got ", o.min_lr().size());
  min_lrs_ = o.min_lr().size() == 1 ? std::vector<double>(n, o.min_lr()[0]) : o.min_lr();
  for (double m : min_lrs_)
    AG_CHECK(std::isfinite(m) && m >= 0, ValueError, "ReduceLROnPlateau: min_lr must be finite and >= 0, got ", m);
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double th = options_.threshold();
  const bool rel = options_.threshold_mode() == ThresholdMode::rel;
  if (options_.mode() == PlateauMode::min) return rel ? a < best_ * (1 - th) : a < best_ - th;
  return rel ? a > best_ * (th + 1) : a > best_ + th;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_ = 0;
  } else {
    ++num_bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    num_bad_ = 0;  // bad steps in cooldown are ignored
  }
  if (num_bad_ > options_.patience()) {
    for (std::size_t g = 0; g < opt_.num_groups(); ++g) {
      const double old_lr = opt_.lr(g), new_lr = std::max(old_lr * options_.factor(), min_lrs_[g]);
      if (old_lr - new_lr > options_.eps()) opt_.set_lr(new_lr, g);
    }
    cooldown_left_ = options_.cooldown();
    num_bad_ = 0;
  }
}

Metadata ReduceLROnPlateau::state_dict() const {
  return {{"best", state_text::exact(best_)},  // exact; "inf" before any step
          {"num_bad_epochs", std::to_string(num_bad_)},
          {"cooldown_counter", std::to_string(cooldown_left_)},
          {"last_epoch", std::to_string(last_epoch_)}};
}

void ReduceLROnPlateau::load_state_dict(const Metadata& state) {
  auto count = [&](const std::string& k) {
    const int64_t v = state_text::read_int(state, k, "ReduceLROnPlateau");
    AG_CHECK(v >= 0 && v <= kMaxSteps, ValueError, "ReduceLROnPlateau.load_state_dict: '", k,
             "' must be a count in [0, 2^53], got '", state.at(k), "'");
    return v;
  };
  const double best = state_text::read_double(state, "best", "ReduceLROnPlateau");
  AG_CHECK(!std::isnan(best), ValueError, "ReduceLROnPlateau.load_state_dict: 'best' is not a valid number: '",
           state.at("best"), "'");
  const int64_t bad = count("num_bad_epochs"), cool = count("cooldown_counter"), epoch = count("last_epoch");
  best_ = best;
  num_bad_ = bad;
  cooldown_left_ = cool;
  last_epoch_ = epoch;
}

}  // namespace ag::optim
