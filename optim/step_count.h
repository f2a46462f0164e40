#pragma once
// Internal to optim/: the per-parameter step count every stateful optimizer keeps.
#include "attograd/factory.h"
#include "attograd/optim/optimizer.h"

namespace ag::optim {

// The step count, kept as Adam's ("step", 0-d i64, as PyTorch's state["step"]); returns
// the new count.
inline int64_t count_step(ParamState& st) {
  Tensor& step_t = st.get_or_zeros("step", zeros(Shape{}, DType::i64));
  return ++step_t.data<int64_t>()[0];
}

}  // namespace ag::optim
