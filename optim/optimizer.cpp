// Optimizer bookkeeping (parameter groups, per-parameter state, state_dict) and the
// option checks of every optimizer. The update rules: one file per optimizer (sgd.cpp, ...).
#include "attograd/optim/optimizer.h"

#include <atomic>
#include <cmath>
#include <set>

#include "attograd/autograd.h"
#include "attograd/factory.h"

namespace ag::optim {

NamedParams name_params(const std::vector<Tensor>& params) {
  NamedParams out;
  for (std::size_t i = 0; i < params.size(); ++i) out.emplace_back(std::to_string(i), params[i]);
  return out;
}

// ---- option checks (torch.optim's constructors; NaN and inf refused too) ----
namespace {
void check_nonneg(double v, const char* who, const char* what) {
  AG_CHECK(std::isfinite(v) && v >= 0, ValueError, who, ": Invalid ", what, ": ", v);
}
template <class O>
void check_adam(const O& o, const char* who) {
  check_lr(o.lr(), who);
  check_nonneg(o.eps(), who, "epsilon value");
  AG_CHECK(o.betas().first >= 0 && o.betas().first < 1, ValueError, who,
           ": Invalid beta parameter at index 0: ", o.betas().first, " (must be in [0, 1))");
  AG_CHECK(o.betas().second >= 0 && o.betas().second < 1, ValueError, who,
           ": Invalid beta parameter at index 1: ", o.betas().second, " (must be in [0, 1))");
  check_nonneg(o.weight_decay(), who, "weight_decay value");
}
}  // namespace

void check_lr(double lr, const char* who) { check_nonneg(lr, who, "learning rate"); }

void check_options(const SGDOptions& o, const char* who) {
  check_lr(o.lr(), who);
  check_nonneg(o.momentum(), who, "momentum value");
  check_nonneg(o.weight_decay(), who, "weight_decay value");
  AG_CHECK(std::isfinite(o.dampening()), ValueError, who, ": Invalid dampening value: ", o.dampening());
  AG_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0), ValueError, who,
           ": Nesterov momentum requires a momentum and zero dampening (momentum ", o.momentum(), ", dampening ",
           o.dampening(), ")");
}
void check_options(const AdamOptions& o, const char* who) { check_adam(o, who); }
void check_options(const AdamWOptions& o, const char* who) { check_adam(o, who); }
void check_options(const RMSpropOptions& o, const char* who) {
  check_lr(o.lr(), who);
  check_nonneg(o.eps(), who, "epsilon value");
  check_nonneg(o.momentum(), who, "momentum value");
  check_nonneg(o.weight_decay(), who, "weight_decay value");
  check_nonneg(o.alpha(), who, "alpha value");
}
void check_options(const AdamaxOptions& o, const char* who) { check_adam(o, who); }
void check_options(const RAdamOptions& o, const char* who) { check_adam(o, who); }
void check_options(const NAdamOptions& o, const char* who) {
  check_adam(o, who);
  check_nonneg(o.momentum_decay(), who, "momentum_decay value");
}
void check_options(const AdagradOptions& o, const char* who) {
  check_lr(o.lr(), who);
  check_nonneg(o.lr_decay(), who, "lr_decay value");
  check_nonneg(o.weight_decay(), who, "weight_decay value");
  check_nonneg(o.initial_accumulator_value(), who, "initial_accumulator_value value");
  check_nonneg(o.eps(), who, "epsilon value");
}

Tensor* ParamState::find(const std::string& name) {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

Tensor& ParamState::get_or_zeros(const std::string& name, const Tensor& like) {
  if (Tensor* t = find(name)) return *t;
  return fields.emplace(name, zeros(like.shape(), like.dtype())).first->second;
}

namespace {

// Where a parameter's elements live: [begin, end) of its storage (contiguous, checked
// before), and where it was listed.
struct Listed {
  int64_t end;
  std::string name;
  std::size_t group;
};
using Extents = std::map<std::pair<std::uintptr_t, int64_t>, Listed>;  // (storage, begin) -> rest

// The entry of `ext` whose range overlaps [begin, end) of s, or null. The ranges in ext
// never overlap (each was checked on insertion), so only the neighbours of begin can.
const Extents::value_type* overlapping(const Extents& ext, std::uintptr_t s, int64_t begin, int64_t end) {
  auto it = ext.lower_bound({s, begin});
  if (it != ext.end() && it->first.first == s && it->first.second < end) return &*it;
  if (it != ext.begin() && (--it)->first.first == s && it->second.end > begin) return &*it;
  return nullptr;
}

std::uintptr_t address(const Tensor& p) { return reinterpret_cast<std::uintptr_t>(p.storage().get()); }

}  // namespace

std::size_t Optimizer::check_group(std::size_t group, const char* what) const {
  AG_CHECK(group < groups_.size(), IndexError, type_name(), ".", what, ": parameter group ", group,
           " is out of range for ", groups_.size(), " group", groups_.size() == 1 ? "" : "s");
  return group;
}

void Optimizer::add_group(NamedParams params) {
  // Identity is the memory a tensor updates: the same tensor under two names, or two
  // views of one buffer that overlap, would be stepped twice per step() (PyTorch compares
  // tensor objects; an empty tensor is compared by handle). O(n log n) in the parameters.
  std::set<std::string> seen;
  std::map<const TensorImpl*, Listed> handles;
  Extents ext;
  const std::size_t gi = groups_.size();
  auto list = [&](const std::string& n, const Tensor& p, std::size_t group) {
    const int64_t begin = p.offset(), end = begin + p.numel();
    if (p.numel() > 0) ext.emplace(std::pair{address(p), begin}, Listed{end, n, group});
    handles.emplace(p.impl(), Listed{end, n, group});
  };
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (auto& [n, p] : groups_[g]) {
      seen.insert(n);
      list(n, p, g);
    }
  for (auto& [n, p] : params) {
    AG_CHECK(p.defined() && p.is_leaf() && p.is_floating_point(), ValueError, type_name(), ": parameter '", n,
             "' must be a floating leaf tensor");
    AG_CHECK(p.is_contiguous(), ValueError, type_name(), ": parameter '", n, "' must be contiguous (shape ", p.shape(),
             ", strides ", p.strides(), ")");
    AG_CHECK(seen.insert(n).second, ValueError, type_name(), ": parameter '", n, "' appears twice");
    const Listed* first = nullptr;
    if (auto h = handles.find(p.impl()); h != handles.end()) first = &h->second;
    if (const auto* o = p.numel() > 0 ? overlapping(ext, address(p), p.offset(), p.offset() + p.numel()) : nullptr;
        first == nullptr && o != nullptr)
      first = &o->second;
    if (first != nullptr && first->group == gi)
      throw ValueError(detail::cat(type_name(), ": parameter group ", gi, " lists the same tensor twice, as '",
                                   first->name, "' and '", n,
                                   "' (PyTorch: optimizer contains a parameter group with duplicate parameters); it "
                                   "would be stepped twice: list each tensor once"));
    if (first != nullptr)
      throw ValueError(detail::cat(type_name(), ": some parameters appear in more than one parameter group ('",
                                   first->name, "' in group ", first->group, ", '", n, "' in group ", gi, ")"));
    list(n, p, gi);
  }
  groups_.push_back(std::move(params));
  initial_lrs_.emplace_back();
}

uint64_t Optimizer::next_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

double Optimizer::momentum(std::size_t) const {
  throw ValueError(detail::cat(
      type_name(), ": optimizer must support momentum or beta1 (cycle_momentum of OneCycleLR and CyclicLR)"));
}

void Optimizer::set_momentum(double, std::size_t group) { (void)momentum(group); }

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_)
    for (auto& [n, p] : g) ag::detail::zero_grad_param(p, set_to_none);
}

void Optimizer::set_lr(double lr) {
  for (std::size_t i = 0; i < groups_.size(); ++i) set_lr(lr, i);
}

TensorMap Optimizer::state_dict() const {
  TensorMap out;
  for (std::size_t i = 0; i < groups_.size(); ++i)
    out.insert("group." + std::to_string(i) + ".lr", scalar_tensor(lr(i), DType::f64));
  for (auto& g : groups_)
    for (auto& [n, p] : g) {
      auto it = state_.find(n);
      if (it == state_.end()) continue;
      for (auto& [field, t] : it->second.fields) out.insert(n + "." + field, t.detach());
    }
  return out;
}

namespace {

// Every buffer an update reads (exp_avg, exp_avg_sq, momentum_buffer) must be finite: one
// NaN or Inf turns its parameter NaN at the next step. Second moments are also >= 0 (their
// square root is taken: a negative one gave NaN after two steps). v: contiguous, floating.
void check_state_values(const std::string& key, const Tensor& v, bool non_negative) {
  dispatch_float(v.dtype(), "optimizer.load_state_dict", [&]<class T>() {
    const T* x = v.data<T>();
    for (int64_t i = 0, n = v.numel(); i < n; ++i)
      AG_CHECK(std::isfinite(x[i]) && (!non_negative || x[i] >= 0), ValueError, "optimizer.load_state_dict: '", key,
               "' element ", i, " is ", double(x[i]), "; it must be finite", non_negative ? " and >= 0" : "");
  });
}

}  // namespace

void Optimizer::load_state_dict(const TensorMap& state) {
  // Validate everything first: a bad state changes nothing.
  std::map<std::string, const NamedParams::value_type*> by_name;
  for (auto& g : groups_)
    for (auto& np : g) by_name[np.first] = &np;
  std::vector<double> lrs(groups_.size(), -1);  // -1: not in the state, keep the lr
  std::map<std::string, ParamState> fresh;
  for (auto& [key, t] : state) {
    // "group.<i>.lr" for an existing group; any other key must name a parameter. (Matched
    // whole: parsing the index with std::stoul threw std::invalid_argument on "group.x.lr".)
    std::size_t gi = 0;
    while (gi < groups_.size() && key != "group." + std::to_string(gi) + ".lr") ++gi;
    if (gi < groups_.size()) {
      AG_CHECK(t.numel() == 1, ValueError, "optimizer.load_state_dict: '", key, "' must be one value, got shape ",
               t.shape());
      const double lr = t.item<double>();
      AG_CHECK(std::isfinite(lr) && lr >= 0, ValueError, "optimizer.load_state_dict: '", key,
               "' must be a finite lr >= 0, got ", lr);
      lrs[gi] = lr;
      continue;
    }
    auto dot = key.rfind('.');
    AG_CHECK(dot != std::string::npos && by_name.count(key.substr(0, dot)), ValueError,
             "optimizer.load_state_dict: key '", key, "' names no parameter of this optimizer");
    std::string name = key.substr(0, dot), field = key.substr(dot + 1);
    const Tensor& p = by_name[name]->second;
    if (field == "step") {
      AG_CHECK(t.numel() == 1 && t.dtype() == DType::i64, ValueError, "optimizer.load_state_dict: '", key,
               "' must be one i64 value, got ", t.shape(), " ", t.dtype());
      const int64_t step = t.item<int64_t>();
      AG_CHECK(step >= 0 && step <= kMaxSteps, ValueError, "optimizer.load_state_dict: '", key,
               "' must be a step count in [0, 2^53], got ", step);
      fresh[name].fields[field] = t.clone();
      continue;
    }
    if (field == "mu_product") {  // NAdam's running product of the momentum schedule: one f64 in (0, 1]
      AG_CHECK(t.numel() == 1 && t.dtype() == DType::f64, ValueError, "optimizer.load_state_dict: '", key,
               "' must be one f64 value, got ", t.shape(), " ", t.dtype());
      const double mp = t.item<double>();
      AG_CHECK(mp > 0 && mp <= 1, ValueError, "optimizer.load_state_dict: '", key, "' must lie in (0, 1], got ", mp);
      fresh[name].fields[field] = t.reshape({}).clone();
      continue;
    }
    AG_CHECK(t.shape() == p.shape(), ShapeError, "optimizer.load_state_dict: '", key, "' has shape ", t.shape(),
             ", parameter has ", p.shape());
    AG_CHECK(t.is_floating_point(), DTypeError, "optimizer.load_state_dict: '", key, "' has dtype ", t.dtype());
    // Checked after the cast: an f64 1e300 is finite, its f32 is not. A bf16 / f16
    // parameter's state (its f32 master included) is f32.
    Tensor v = t.to(is_reduced_float(p.dtype()) ? DType::f32 : p.dtype()).contiguous().clone();
    check_state_values(key, v,
                       field == "exp_avg_sq" || field == "max_exp_avg_sq" || field == "square_avg" || field == "sum");
    fresh[name].fields[field] = v;
  }
  for (std::size_t i = 0; i < lrs.size(); ++i)
    if (lrs[i] >= 0) set_lr(lrs[i], i);
  state_ = std::move(fresh);
}

}  // namespace ag::optim
