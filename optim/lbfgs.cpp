// L-BFGS, line for line torch/optim/lbfgs.py (1.13): the two-loop recursion over the
// last history_size (s, y) pairs, the first step scaled by min(1, 1 / |g|_1), and
// _strong_wolfe / _cubic_interpolate for the line search, with PyTorch's brackets,
// tie rules and stopping tests in the same order. N = the parameters' total numel.
#include "attograd/optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "attograd/autograd.h"
#include "attograd/factory.h"

namespace ag::optim {
namespace {

// Scalars as PyTorch's Python floats: reductions of the (N) vectors in double.
double dot(const Tensor& a, const Tensor& b) {
  return dispatch_float(a.dtype(), "LBFGS", [&]<class T>() {
    const T *x = a.data<T>(), *y = b.data<T>();
    double s = 0;
    for (int64_t i = 0, n = a.numel(); i < n; ++i) s += double(x[i]) * double(y[i]);
    return s;
  });
}

// max |a| and sum |a| in a's dtype, as PyTorch's a.abs().max() and .sum() (NaN propagates);
// 0 for no elements.
double abs_max(const Tensor& a) { return a.numel() == 0 ? 0.0 : a.abs().max().item<double>(); }
double abs_sum(const Tensor& a) { return a.abs().sum().item<double>(); }

// _cubic_interpolate: the minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2),
// clamped to the bounds (default: the interval); its midpoint when the cubic has none.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const auto [lo, hi] = bounds ? *bounds : (x1 <= x2 ? std::pair{x1, x2} : std::pair{x2, x1});
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.;
}

struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t evals;
};

// _strong_wolfe: from step t along d (loss f, gradient g, slope gtd = g . d at t = 0),
// bracket a step satisfying the strong Wolfe conditions, then zoom into the bracket.
template <class Objective>
LineSearchResult strong_wolfe(Objective&& obj, double t, const Tensor& d, double f, const Tensor& g, double gtd,
                              double tolerance_change, double c1 = 1e-4, double c2 = 0.9, int64_t max_ls = 25) {
  const double d_norm = abs_max(d);
  auto [f_new, g_new] = obj(t);
  int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
    t_prev = tmp, f_prev = f_new, g_prev = g_new, gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new};

  // Zoom: shrink the bracket [low, high] until a point meets the conditions.
  bool insuf_progress = false;
  std::size_t low = bracket_f[0] <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Too close to an end twice, or outside: move to 0.1 of the bracket from the end.
    const double b_max = std::max(bracket[0], bracket[1]), b_min = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (b_max - b_min);
    if (std::min(b_max - t, t - b_min) < eps) {
      if (insuf_progress || t >= b_max || t <= b_min) {
        t = std::abs(t - b_max) < std::abs(t - b_min) ? b_max - eps : b_min + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {  // not Armijo, or not below the low end
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new, bracket_gtd[high] = gtd_new;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1, high = 1 - low;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {  // the old high becomes the low
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low];
        bracket_g[high] = bracket_g[low], bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new, bracket_gtd[low] = gtd_new;
    }
  }
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

// The closure's loss as PyTorch's float(loss): one element.
double loss_value(const Tensor& loss) {
  AG_CHECK(loss.defined() && loss.numel() == 1, ValueError,
           "LBFGS.step: the closure must return the loss, one element; got ",
           loss.defined() ? detail::cat(loss.shape()) : std::string("an undefined tensor"));
  return loss.item<double>();
}

}  // namespace

void check_options(const LBFGSOptions& o, const char* who) {
  check_lr(o.lr(), who);
  AG_CHECK(o.max_iter() > 0, ValueError, who, ": max_iter must be positive, got ", o.max_iter());
  AG_CHECK(!o.max_eval() || *o.max_eval() > 0, ValueError, who, ": max_eval must be positive, got ",
           o.max_eval().value_or(0));
  AG_CHECK(o.history_size() > 0, ValueError, who, ": history_size must be positive, got ", o.history_size());
  AG_CHECK(std::isfinite(o.tolerance_grad()) && o.tolerance_grad() >= 0 && std::isfinite(o.tolerance_change()) &&
               o.tolerance_change() >= 0,
           ValueError, who, ": tolerance_grad (", o.tolerance_grad(), ") and tolerance_change (", o.tolerance_change(),
           ") must be finite and >= 0");
  AG_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe", ValueError, who,
           ": only 'strong_wolfe' is supported as line_search_fn, got '", o.line_search_fn().value_or(""), "'");
}

LBFGS::LBFGS(const NamedParams& params, const LBFGSOptions& o) {
  OptimizerWithOptions::add_param_group({params, o});  // checks the options and the names
  AG_CHECK(!params.empty(), ValueError, "LBFGS: optimizer got an empty parameter list");
  const DType dt = params[0].second.dtype();
  for (auto& [name, p] : params)
    AG_CHECK(p.dtype() == dt && (dt == DType::f32 || dt == DType::f64), DTypeError, "LBFGS: parameter '", name, "' is ",
             p.dtype(), " (", params[0].first, " is ", dt, "); L-BFGS takes f32 or f64 parameters of one dtype");
}

void LBFGS::add_param_group(const ParamGroup<LBFGSOptions>&) {
  throw ValueError("LBFGS doesn't support per-parameter options (parameter groups)");
}

void LBFGS::step() {
  throw ValueError(
      "LBFGS.step: L-BFGS re-evaluates the model: call step(closure) with a closure that zeroes the gradients, "
      "computes the loss, calls backward and returns the loss");
}

std::vector<Tensor> LBFGS::params() const {
  std::vector<Tensor> out;
  for (auto& np : groups_[0]) out.push_back(np.second);
  return out;
}

// A copy, never a view: the closure rewrites the gradients in place (zero_grad(false)).
Tensor LBFGS::flat_grad() const {
  const std::vector<Tensor> ps = params();
  int64_t n = 0;
  for (const Tensor& p : ps) n += p.numel();
  Tensor flat = zeros({n}, ps[0].dtype());
  int64_t offset = 0;
  for (const Tensor& p : ps) {
    if (p.grad().defined()) flat.narrow(0, offset, p.numel()).copy_(p.grad().detach().reshape({-1}));
    offset += p.numel();
  }
  return flat;
}

void LBFGS::add_to_params(double t, const Tensor& d) {
  int64_t offset = 0;
  for (Tensor p : params()) {
    const int64_t n = p.numel();
    p.add_(d.narrow(0, offset, n).view(p.shape()), t);
    offset += n;
  }
}

std::pair<double, Tensor> LBFGS::evaluate_at(const std::function<Tensor()>& closure, const std::vector<Tensor>& x,
                                             double t, const Tensor& d) {
  add_to_params(t, d);
  double loss = 0;
  {
    EnableGradGuard grad;
    loss = loss_value(closure());
  }
  Tensor g = flat_grad();
  std::vector<Tensor> ps = params();
  for (std::size_t i = 0; i < ps.size(); ++i) ps[i].copy_(x[i]);
  return {loss, g};
}

Tensor LBFGS::step(const std::function<Tensor()>& closure) {
  AG_CHECK(static_cast<bool>(closure), ValueError, "LBFGS.step: the closure is empty");
  const LBFGSOptions o = options(0);
  const int64_t max_eval = o.max_eval().value_or(o.max_iter() * 5 / 4);
  Tensor orig_loss;
  {
    EnableGradGuard grad;
    orig_loss = closure();
  }
  NoGradGuard no_grad;
  double loss = loss_value(orig_loss);
  int64_t current_evals = 1;
  ++func_evals_;
  Tensor g = flat_grad();
  bool opt_cond = abs_max(g) <= o.tolerance_grad();
  if (opt_cond) return orig_loss;

  for (int64_t n_iter = 1; n_iter <= o.max_iter(); ++n_iter) {
    ++n_iter_;
    // The direction: steepest descent first, then the two-loop recursion.
    if (n_iter_ == 1) {
      d_ = -g;
      old_dirs_.clear(), old_stps_.clear(), ro_.clear();
      h_diag_ = 1;
    } else {
      Tensor y = g - prev_flat_grad_, s = d_ * t_;
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (static_cast<int64_t>(old_dirs_.size()) == o.history_size())
          old_dirs_.pop_front(), old_stps_.pop_front(), ro_.pop_front();
        old_dirs_.push_back(y), old_stps_.push_back(s), ro_.push_back(1. / ys);
        h_diag_ = ys / dot(y, y);
      }
      const std::size_t m = old_dirs_.size();
      std::vector<double> al(m);
      Tensor q = -g;
      for (std::size_t i = m; i-- > 0;) {
        al[i] = dot(old_stps_[i], q) * ro_[i];
        q.add_(old_dirs_[i], -al[i]);
      }
      Tensor r = q * h_diag_;
      for (std::size_t i = 0; i < m; ++i) {
        const double be_i = dot(old_dirs_[i], r) * ro_[i];
        r.add_(old_stps_[i], al[i] - be_i);
      }
      d_ = r;
    }
    prev_flat_grad_ = g.clone();
    prev_loss_ = loss;

    // The step length: lr, the first one scaled down by |g|_1.
    t_ = n_iter_ == 1 ? std::min(1., 1. / abs_sum(g)) * o.lr() : o.lr();
    const double gtd = dot(g, d_);
    if (gtd > -o.tolerance_change()) break;  // not a descent direction any more

    int64_t ls_func_evals = 0;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init;
      for (const Tensor& p : params()) x_init.push_back(p.clone());
      auto obj = [&](double t) { return evaluate_at(closure, x_init, t, d_); };
      LineSearchResult ls = strong_wolfe(obj, t_, d_, loss, g, gtd, o.tolerance_change());
      loss = ls.loss, g = ls.flat_grad, t_ = ls.t, ls_func_evals = ls.evals;
      add_to_params(t_, d_);
      opt_cond = abs_max(g) <= o.tolerance_grad();
    } else {
      add_to_params(t_, d_);
      if (n_iter != o.max_iter()) {  // PyTorch skips the last re-evaluation
        {
          EnableGradGuard grad;
          loss = loss_value(closure());
        }
        g = flat_grad();
        opt_cond = abs_max(g) <= o.tolerance_grad();
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    func_evals_ += ls_func_evals;

    if (n_iter == o.max_iter() || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d_) * std::abs(t_) <= o.tolerance_change()) break;  // d.mul(t).abs().max()
    if (std::abs(loss - prev_loss_) < o.tolerance_change()) break;
  }
  return orig_loss;
}

// ---- state dict -------------------------------------------------------------------------
TensorMap LBFGS::state_dict() const {
  TensorMap out = Optimizer::state_dict();
  out.insert("lbfgs.func_evals", full(Shape{}, double(func_evals_), DType::i64));
  out.insert("lbfgs.n_iter", full(Shape{}, double(n_iter_), DType::i64));
  if (n_iter_ == 0) return out;
  const int64_t n = d_.numel(), m = static_cast<int64_t>(old_dirs_.size());
  auto rows = [&](const std::deque<Tensor>& v) {
    return m == 0 ? zeros({0, n}, d_.dtype()) : stack(std::vector<Tensor>(v.begin(), v.end()), 0);
  };
  out.insert("lbfgs.d", d_.clone());
  out.insert("lbfgs.prev_flat_grad", prev_flat_grad_.clone());
  out.insert("lbfgs.old_dirs", rows(old_dirs_));  // (m, N), oldest first
  out.insert("lbfgs.old_stps", rows(old_stps_));
  out.insert("lbfgs.ro", Tensor::from_vector(std::vector<double>(ro_.begin(), ro_.end())));
  for (auto [key, v] : {std::pair{"lbfgs.t", t_}, {"lbfgs.H_diag", h_diag_}, {"lbfgs.prev_loss", prev_loss_}})
    out.insert(key, full(Shape{}, v, DType::f64));
  return out;
}

void LBFGS::load_state_dict(const TensorMap& state) {
  const char* op = "LBFGS.load_state_dict";
  TensorMap base, own;
  for (auto& [key, t] : state) (key.rfind("lbfgs.", 0) == 0 ? own : base).insert(key, t);
  auto get = [&](const char* key) -> Tensor {
    AG_CHECK(own.contains(key), ValueError, op, ": '", key, "' is missing");
    return own.at(key);
  };
  auto count = [&](const char* key) {
    Tensor t = get(key);
    AG_CHECK(t.numel() == 1 && t.dtype() == DType::i64 && t.item<int64_t>() >= 0 && t.item<int64_t>() <= kMaxSteps,
             ValueError, op, ": '", key, "' must be one i64 in [0, 2^53], got ", t.shape(), " ", t.dtype());
    return t.item<int64_t>();
  };
  auto scalar = [&](const char* key) {
    Tensor t = get(key);
    AG_CHECK(t.numel() == 1 && t.is_floating_point() && std::isfinite(t.item<double>()), ValueError, op, ": '", key,
             "' must be one finite float, got ", t.shape(), " ", t.dtype());
    return t.item<double>();
  };
  const std::vector<Tensor> ps = params();
  int64_t n = 0;
  for (const Tensor& p : ps) n += p.numel();
  auto vectors = [&](const char* key, Shape want) {
    Tensor t = get(key);
    AG_CHECK(t.shape() == want && t.is_floating_point(), ShapeError, op, ": '", key, "' has shape ", t.shape(), " ",
             t.dtype(), ", expected ", want, " floats (the parameters hold ", n, " elements)");
    Tensor v = t.to(ps[0].dtype()).contiguous().clone();
    AG_CHECK(v.isfinite().all().item<bool>(), ValueError, op, ": '", key, "' holds a value that is not finite");
    return v;
  };
  const int64_t evals = count("lbfgs.func_evals"), iters = count("lbfgs.n_iter");
  Tensor d, prev, dirs, stps;
  std::vector<double> ro;
  double t = 0, h = 1, prev_loss = 0;
  if (iters > 0) {
    d = vectors("lbfgs.d", {n}), prev = vectors("lbfgs.prev_flat_grad", {n});
    const Tensor dirs_in = get("lbfgs.old_dirs");
    const int64_t m = dirs_in.dim() == 2 ? dirs_in.size(0) : -1;
    AG_CHECK(m >= 0 && m <= options(0).history_size(), ValueError, op, ": 'lbfgs.old_dirs' has shape ", dirs_in.shape(),
             "; expected (m, ", n, ") with m <= history_size ", options(0).history_size());
    dirs = vectors("lbfgs.old_dirs", {m, n}), stps = vectors("lbfgs.old_stps", {m, n});
    Tensor r = get("lbfgs.ro");
    AG_CHECK(r.shape() == Shape{m} && r.is_floating_point(), ShapeError, op, ": 'lbfgs.ro' has shape ", r.shape(),
             ", expected [", m, "]");
    ro = r.to(DType::f64).contiguous().to_vector<double>();
    for (double v : ro)
      AG_CHECK(std::isfinite(v) && v > 0, ValueError, op, ": 'lbfgs.ro' holds ", v, "; 1 / (y . s) > 0");
    t = scalar("lbfgs.t"), h = scalar("lbfgs.H_diag"), prev_loss = scalar("lbfgs.prev_loss");
  }
  Optimizer::load_state_dict(base);  // validates its part before changing anything
  func_evals_ = evals, n_iter_ = iters;
  d_ = d, prev_flat_grad_ = prev, t_ = t, h_diag_ = h, prev_loss_ = prev_loss;
  old_dirs_.clear(), old_stps_.clear(), ro_.assign(ro.begin(), ro.end());
  for (int64_t i = 0; i < static_cast<int64_t>(ro.size()); ++i)
    old_dirs_.push_back(dirs.select(0, i).clone()), old_stps_.push_back(stps.select(0, i).clone());
}

}  // namespace ag::optim
