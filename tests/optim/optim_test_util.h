// Helpers of the test_optim program (tests/optim/test_optim.cpp and the parts in
// tests/optim/test_optim/): the values and configurations shared with
// tools/optim_reference.py, parameters with gradients, and a tolerance diff.
#pragma once

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace optim_test_util {

// ---- values shared with tools/optim_reference.py ----------------------------------
// One (2, 3) parameter, kSteps steps. Every value is exact in binary (f32 included),
// so the f32 runs start from the same numbers as the f64 ones.
inline constexpr int kN = 6;
inline constexpr int kSteps = 6;
inline const ag::Shape kShape{2, 3};
inline constexpr double kScales[kSteps] = {2.0, 1.0, 0.5, 1.5, 0.25, 0.125};  // shrinking: amsgrad matters

inline double p0(int i) { return 0.25 * ((i * 5) % 7) - 0.75; }
inline double grad_at(int k, int i) { return kScales[k] * ((((3 * i + 5 * k) % 9) - 4) / 4.0); }

inline std::vector<double> p0_values() {
  std::vector<double> v;
  for (int i = 0; i < kN; ++i) v.push_back(p0(i));
  return v;
}
inline std::vector<double> grad_values(int k) {
  std::vector<double> v;
  for (int i = 0; i < kN; ++i) v.push_back(grad_at(k, i));
  return v;
}

inline ag::Tensor make_param(const std::vector<double>& v, const ag::Shape& shape, ag::DType dtype) {
  ag::Tensor p = ag::Tensor::from_vector(v, shape).to(dtype).clone();
  p.requires_grad_(true);
  return p;
}

inline void set_grad(ag::Tensor& p, const std::vector<double>& g) {
  p.set_grad(ag::Tensor::from_vector(g, p.shape()).to(p.dtype()).clone());
}

// ---- configurations (same order and values as CONFIGS in tools/optim_reference.py) ----
enum class Algo { sgd, adam, adamw };

struct Hyper {
  const char* name;
  Algo algo;
  double lr;
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  double weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool amsgrad = false;
};

inline const std::vector<Hyper> kConfigs = {
    {.name = "sgd", .algo = Algo::sgd, .lr = 0.1},
    {.name = "sgd_wd", .algo = Algo::sgd, .lr = 0.1, .weight_decay = 0.05},
    {.name = "sgd_momentum", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9},
    {.name = "sgd_dampening", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9, .dampening = 0.3},
    {.name = "sgd_nesterov", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.9, .nesterov = true},
    {.name = "sgd_nesterov_wd", .algo = Algo::sgd, .lr = 0.05, .momentum = 0.8, .nesterov = true, .weight_decay = 0.1},
    {.name = "sgd_all", .algo = Algo::sgd, .lr = 0.1, .momentum = 0.5, .dampening = 0.5, .weight_decay = 0.1},
    {.name = "adam", .algo = Algo::adam, .lr = 0.01},
    {.name = "adam_wd", .algo = Algo::adam, .lr = 0.01, .weight_decay = 0.1},
    {.name = "adam_amsgrad", .algo = Algo::adam, .lr = 0.01, .beta1 = 0.8, .beta2 = 0.9, .amsgrad = true},
    {.name = "adam_amsgrad_wd",
     .algo = Algo::adam,
     .lr = 0.02,
     .weight_decay = 0.05,
     .beta1 = 0.8,
     .beta2 = 0.9,
     .eps = 1e-6,
     .amsgrad = true},
    {.name = "adamw", .algo = Algo::adamw, .lr = 0.01, .weight_decay = 0.01},
    {.name = "adamw_amsgrad",
     .algo = Algo::adamw,
     .lr = 0.01,
     .weight_decay = 0.1,
     .beta1 = 0.8,
     .beta2 = 0.9,
     .amsgrad = true},
};

inline const Hyper& config(const std::string& name) {
  for (const Hyper& h : kConfigs)
    if (name == h.name) return h;
  throw std::logic_error("no config " + name);
}

inline std::unique_ptr<ag::optim::Optimizer> make_optimizer(const Hyper& h, const ag::optim::NamedParams& params) {
  if (h.algo == Algo::sgd)
    return std::make_unique<ag::optim::SGD>(params, ag::optim::SGDOptions(h.lr)
                                                        .momentum(h.momentum)
                                                        .dampening(h.dampening)
                                                        .nesterov(h.nesterov)
                                                        .weight_decay(h.weight_decay));
  if (h.algo == Algo::adam)
    return std::make_unique<ag::optim::Adam>(params, ag::optim::AdamOptions(h.lr)
                                                         .betas({h.beta1, h.beta2})
                                                         .eps(h.eps)
                                                         .weight_decay(h.weight_decay)
                                                         .amsgrad(h.amsgrad));
  return std::make_unique<ag::optim::AdamW>(params, ag::optim::AdamWOptions(h.lr)
                                                        .betas({h.beta1, h.beta2})
                                                        .eps(h.eps)
                                                        .weight_decay(h.weight_decay)
                                                        .amsgrad(h.amsgrad));
}

// ---- helpers --------------------------------------------------------------------------

// "" when |got - want| <= tol * max(1, |want|) everywhere, else the first mismatch.
inline std::string diff(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size())
    return "got " + std::to_string(got.size()) + " values, want " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])))) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << i << ": got " << got[i] << ", want " << want[i] << " (diff " << got[i] - want[i] << ")";
      return os.str();
    }
  return "";
}

// A deep copy: state_dict() shares storage with the optimizer's live state.
inline ag::TensorMap clone_map(const ag::TensorMap& m) {
  ag::TensorMap out;
  for (auto& [k, t] : m) out.insert(k, t.clone());
  return out;
}

}  // namespace optim_test_util
