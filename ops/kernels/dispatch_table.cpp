// Every dispatch stub (dispatch.h), defined once, and the registry the tests walk.
//
// Why here and not beside each kernel: slot `l` of a stub holds the address of
// isa::<name>_<l>, a constant defined in that kernel's isa/ source compiled for level
// l. Referencing all of them from this one file (which every caller of a stub pulls
// in) keeps every per-level object in the link even when libattograd is a static
// archive, where an object nobody references is left out and a self-registering
// static constructor in it would silently never run. The stubs and the slots are
// constant-initialized (addresses only), so there is no initialization order to get
// wrong: a stub called from another file's static constructor already works.
#include "kernels/adam.h"
#include "kernels/attention_rows.h"
#include "kernels/convert_rows.h"
#include "kernels/dispatch.h"
#include "kernels/dropout_rows.h"
#include "kernels/elementwise_rows.h"
#include "kernels/gelu_rows.h"
#include "kernels/gemv.h"
#include "kernels/layer_norm_rows.h"
#include "kernels/quant_rows.h"
#include "kernels/rnn_gates.h"
#include "kernels/s8_gemm.h"
#include "kernels/sum_rows.h"

namespace ag::kernels {

// One line per stub: the header that declares it (for the tests) and its name.
// STUB for a DispatchStub, FLOAT_STUB for a FloatDispatchStub (_f32 and _f64).
#define AG_DISPATCH_TABLE(STUB, FLOAT_STUB) \
  FLOAT_STUB(adam, adam_update) \
  FLOAT_STUB(adam, sum_sq) \
  FLOAT_STUB(attention_rows, row_max) \
  FLOAT_STUB(attention_rows, row_exp_sub_sum) \
  FLOAT_STUB(attention_rows, row_exp_sub) \
  FLOAT_STUB(attention_rows, row_scale) \
  FLOAT_STUB(attention_rows, row_mul) \
  FLOAT_STUB(attention_rows, row_mul_into) \
  FLOAT_STUB(attention_rows, row_ds) \
  FLOAT_STUB(attention_rows, row_dot) \
  STUB(convert_rows, f32_to_bf16_row) \
  STUB(convert_rows, f32_to_f16_row) \
  STUB(convert_rows, bf16_to_f32_row) \
  STUB(convert_rows, f16_to_f32_row) \
  STUB(dropout_rows, hash_row) \
  STUB(dropout_rows, philox_blocks) \
  FLOAT_STUB(dropout_rows, keep_mask) \
  FLOAT_STUB(elementwise_rows, arith_row) \
  FLOAT_STUB(elementwise_rows, where_row) \
  STUB(gelu_rows, gelu_row) \
  STUB(gelu_rows, gelu_backward_row) \
  STUB(gemv, half_gemv_rows) \
  STUB(gemv, f32_gemv_rows) \
  FLOAT_STUB(layer_norm_rows, layer_norm_rows) \
  FLOAT_STUB(layer_norm_rows, layer_norm_backward_rows) \
  STUB(quant_rows, q8_gemv) \
  STUB(quant_rows, q4_gemv) \
  STUB(quant_rows, q8_dequant_rows) \
  STUB(quant_rows, q4_dequant_rows) \
  FLOAT_STUB(rnn_gates, lstm_cell_rows) \
  FLOAT_STUB(rnn_gates, lstm_cell_backward_rows) \
  FLOAT_STUB(rnn_gates, gru_cell_rows) \
  FLOAT_STUB(rnn_gates, gru_cell_backward_rows) \
  FLOAT_STUB(rnn_gates, rnn_cell_rows) \
  FLOAT_STUB(rnn_gates, rnn_cell_backward_rows) \
  STUB(s8_gemm, s8_gemm) \
  STUB(sum_rows, sum_row) \
  STUB(sum_rows, accumulate_row)

// Slots: every level's constant; a build without the x86 levels (ATTOGRAD_SIMD_X86=0:
// only the baseline objects exist) runs the baseline at every level.
#if ATTOGRAD_SIMD_X86
#define AG_SLOT(level, name) &isa::name##_##level,
#else
#define AG_SLOT(level, name) &isa::name##_sse2,
#endif
#define AG_SLOTS(name) \
  { AG_SIMD_LEVELS(AG_SLOT, name) }

#define AG_DEFINE_STUB(header, name) constinit decltype(name) name{#name, AG_SLOTS(name)};
#define AG_DEFINE_FLOAT_STUB(header, name) \
  constinit decltype(name) name{{#name "_f32", AG_SLOTS(name##_f32)}, {#name "_f64", AG_SLOTS(name##_f64)}};
AG_DISPATCH_TABLE(AG_DEFINE_STUB, AG_DEFINE_FLOAT_STUB)

const std::vector<DispatchEntry>& dispatch_registry() {
#define AG_ENTRY(header, name) {#name, #header},
#define AG_FLOAT_ENTRY(header, name) {#name "_f32", #header}, {#name "_f64", #header},
  static const std::vector<DispatchEntry> entries{AG_DISPATCH_TABLE(AG_ENTRY, AG_FLOAT_ENTRY)};
  return entries;
}

}  // namespace ag::kernels
