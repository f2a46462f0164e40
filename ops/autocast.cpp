// The autocast state (attograd/autocast.h): per thread, set by the guard.
#include "attograd/autocast.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "op_util.h"

namespace ag {
namespace {
thread_local bool t_enabled = false;
thread_local DType t_dtype = DType::bf16;

// Casts of the lower-precision list shared while alive. GroupedQueryAttention's q, k and
// v projections are three linears on one layer-norm output, and each cast it: three
// (B, T, E) bf16 copies saved for backward where PyTorch's packed in-projection keeps one
// (at E 128, B 32, T 64: 1 MiB more per block). A tensor cast again while its earlier
// cast's buffer is alive, and neither has been written since, gets a view of that cast,
// recorded as its own to() node: each consumer's gradient still reaches the source as a
// separate f32 term, as with separate casts (one shared node would sum them in bf16).
// Keyed by storage and layout (saved tensors keep storages, not the handles); weak
// references only, so the cache never keeps a buffer alive.
struct SharedCast {
  std::weak_ptr<Storage> src, out;
  Shape shape;
  Strides src_strides, out_strides;
  int64_t src_offset = 0, out_offset = 0;
  uint64_t src_version = 0, out_version = 0;
  DType from = DType::f32, to = DType::bf16;
};
constexpr std::size_t kSharedCasts = 8;  // q, k, v projections: input + 3 x (weight, bias)
thread_local std::array<SharedCast, kSharedCasts> t_casts;
thread_local std::size_t t_next_cast = 0;

Tensor lower_shared(const Tensor& t) {
  for (const SharedCast& c : t_casts) {
    if (c.to != t_dtype || c.from != t.dtype() || c.src_offset != t.offset() || c.shape != t.shape() ||
        c.src_strides != t.strides() || c.src.lock() != t.storage() || t.storage()->version() != c.src_version)
      continue;
    StoragePtr out = c.out.lock();
    if (!out || out->version() != c.out_version) continue;
    Tensor v(std::move(out), c.shape, c.out_strides, c.out_offset, c.to);
    v.impl()->is_view = true;  // as op_util's alias: in-place ops in a graph refuse it
    return record_to(t, std::move(v));
  }
  Tensor out = ag::to(t, t_dtype);
  t_casts[t_next_cast] = {.src = t.storage(),
                          .out = out.storage(),
                          .shape = t.shape(),
                          .src_strides = t.strides(),
                          .out_strides = out.strides(),
                          .src_offset = t.offset(),
                          .out_offset = out.offset(),
                          .src_version = t.storage()->version(),
                          .out_version = out.storage()->version(),
                          .from = t.dtype(),
                          .to = t_dtype};
  t_next_cast = (t_next_cast + 1) % kSharedCasts;
  return out;
}
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
  if (!t_enabled) t_casts = {};  // leaving autocast (PyTorch clears its cast cache there too)
}

bool is_autocast_enabled() { return t_enabled; }
DType get_autocast_dtype() { return t_dtype; }

Tensor detail::autocast_lower(const Tensor& t) {
  if (!t_enabled || !t.defined() || !t.is_floating_point() || t.dtype() == DType::f64 || t.dtype() == t_dtype) return t;
  return lower_shared(t);
}

Tensor detail::autocast_f32(const Tensor& t) {
  if (!t_enabled || !t.defined() || !is_reduced_float(t.dtype())) return t;
  return ag::to(t, DType::f32);
}

}  // namespace ag
