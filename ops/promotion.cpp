// Type promotion: PyTorch's torch.result_type for two operands, and the helper binary ops
// use to convert mixed operands (the differentiable to(), so gradients come back in each
// input's own dtype).
#include "attograd/ops/promotion.h"

#include <optional>

#include "op_util.h"

namespace ag {
namespace {

// One running dtype per priority class: dimensioned tensors, 0-d tensors, scalars
// (PyTorch's ResultTypeState: dimResult, zeroResult, wrappedResult).
struct ResultState {
  std::optional<DType> dim, zero, scalar;
};

void update(std::optional<DType>& slot, DType t) { slot = slot ? promote_types(*slot, t) : t; }
void add_operand(ResultState& s, const Tensor& t) { update(t.dim() > 0 ? s.dim : s.zero, t.dtype()); }
// A bool scalar counts as bool, an integral one as i64, a floating one as the default dtype.
void add_operand(ResultState& s, Scalar v) { update(s.scalar, v.dtype()); }

// `higher` (a higher-priority class) wins unless `lower` is of a higher category:
// then promote_types of the two (an i32 tensor + 0-d f64 tensor gives f64, + 0.5 gives f32).
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::b8 || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;  // integral beats bool and integral of lower priority
}

DType finish(const ResultState& s) { return *combine(s.dim, combine(s.zero, s.scalar)); }

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  ResultState s;
  add_operand(s, a);
  add_operand(s, b);
  return finish(s);
}

DType result_type(const Tensor& a, Scalar b) {
  ResultState s;
  add_operand(s, a);
  add_operand(s, b);
  return finish(s);
}

DType result_type(Scalar a, const Tensor& b) { return result_type(b, a); }

std::pair<Tensor, Tensor> promote_pair(const Tensor& a, const Tensor& b, bool int_to_float) {
  DType t = result_type(a, b);
  if (int_to_float && !is_floating(t)) t = get_default_dtype();
  return {a.to(t), b.to(t)};
}

}  // namespace ag
