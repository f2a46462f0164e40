// Compiled by the CTest test `layer_include_refused` with the include directories of
// the core layer's target (ag_core) only: with AG_FIXED it includes core's own headers
// and compiles; without, it includes an ops header, which core's target cannot see.
#include "attograd/tensor.h"
#ifndef AG_FIXED
#include "attograd/ops.h"
#endif

int main() { return ag::Tensor().defined() ? 1 : 0; }
