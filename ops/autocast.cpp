// The autocast state (attograd/autocast.h): per thread, set by the guard.
#include "attograd/autocast.h"

#include "op_util.h"

namespace ag {
namespace {
thread_local bool t_enabled = false;
thread_local DType t_dtype = DType::bf16;
}  // namespace

autocast::autocast(DType dtype, bool enabled) : prev_enabled_(t_enabled), prev_dtype_(t_dtype) {
  AG_CHECK(is_reduced_float(dtype), ValueError, "autocast: dtype must be bf16 or f16 (the lower precision), got ",
           dtype);
  t_enabled = enabled;
  if (enabled) t_dtype = dtype;
}

autocast::~autocast() {
  t_enabled = prev_enabled_;
  t_dtype = prev_dtype_;
}

bool is_autocast_enabled() { return t_enabled; }
DType get_autocast_dtype() { return t_dtype; }

Tensor detail::autocast_lower(const Tensor& t) {
  if (!t_enabled || !t.defined() || !t.is_floating_point() || t.dtype() == DType::f64 || t.dtype() == t_dtype) return t;
  return ag::to(t, t_dtype);
}

Tensor detail::autocast_f32(const Tensor& t) {
  if (!t_enabled || !t.defined() || !is_reduced_float(t.dtype())) return t;
  return ag::to(t, DType::f32);
}

}  // namespace ag
