// Fixture of layer_link_refused (tests/link_fail.cmake): a function of the core layer that
// calls an op of the ops layer (Tensor::contiguous) must not link against core alone.
// With AG_FIXED it calls only core's own functions and links. Never part of the library.
#include "attograd/tensor.h"

bool upward_call(const ag::Tensor& t) {
#ifdef AG_FIXED
  return t.is_contiguous();
#else
  return t.contiguous().is_contiguous();
#endif
}
