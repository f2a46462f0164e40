// Memory overlap of strided tensors (attograd/mem_overlap.h), as PyTorch's
// ATen/MemoryOverlap.cpp, but exact for more layouts: PyTorch gives up (TooHard) on any
// layout that is not dense, so `a[:, :2].copy_(a[:, 1:])` passes there; here the
// element locations of small tensors are listed and compared. Offsets are in elements of
// the tensor's dtype; layouts are valid (the Tensor constructor checked them against the
// storage), so the extents below fit in int64, but every sum is checked anyway.
#include "attograd/mem_overlap.h"

#include <algorithm>
#include <vector>

namespace ag {
namespace {

// Listing locations costs O(n log n); beyond this many elements we give up (too_hard).
constexpr int64_t kMaxListed = int64_t{1} << 16;

struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

Layout layout_of(const Tensor& t) { return {t.shape(), t.strides(), t.offset()}; }

// t's layout read as `shape` (right-aligned broadcasting: a new or size-1 dim gets stride
// 0); t's own layout when the shapes do not broadcast.
Layout broadcast_layout(const Tensor& t, const Shape& shape) {
  const int64_t lead = shape.size() - t.dim();
  if (lead < 0) return layout_of(t);
  Layout l{shape, Dims::filled(shape.size(), 0), t.offset()};
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t have = t.shape()[i];
    if (have == shape[i + lead])
      l.strides[i + lead] = t.strides()[i];
    else if (have != 1)
      return layout_of(t);
  }
  return l;
}

// Offset of the last element past the first: sum of (size - 1) * stride; -1 on overflow.
int64_t extent(const Layout& l) {
  int64_t e = 0, step = 0;
  for (int64_t i = 0; i < l.shape.size(); ++i)
    if (__builtin_mul_overflow(l.shape[i] - 1, l.strides[i], &step) || __builtin_add_overflow(e, step, &e)) return -1;
  return e;
}

// (size, stride) of the dims of size > 1, by increasing stride.
std::vector<std::pair<int64_t, int64_t>> sorted_dims(const Layout& l) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t i = 0; i < l.shape.size(); ++i)
    if (l.shape[i] > 1) dims.emplace_back(l.strides[i], l.shape[i]);
  std::sort(dims.begin(), dims.end());
  return dims;
}

// Non-overlapping and dense (PyTorch's is_non_overlapping_and_dense): the elements fill
// [offset, offset + numel) exactly, in some order of the dims.
bool dense(const Layout& l) {
  int64_t expected = 1;
  for (auto [stride, size] : sorted_dims(l)) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

// Every element's offset, sorted (numel(l) <= kMaxListed).
std::vector<int64_t> locations(const Layout& l) {
  std::vector<int64_t> out;
  out.reserve(static_cast<std::size_t>(numel(l.shape)));
  const int64_t nd = l.shape.size();
  if (numel(l.shape) == 0) return out;
  Dims idx = Dims::filled(nd, 0);
  int64_t at = l.offset;
  while (true) {
    out.push_back(at);
    int64_t d = nd - 1;
    for (; d >= 0; --d) {  // odometer: bump the last dim, carry into the ones before
      if (++idx[d] < l.shape[d]) {
        at += l.strides[d];
        break;
      }
      at -= (l.shape[d] - 1) * l.strides[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

MemOverlap internal_overlap(const Layout& l) {
  if (numel(l.shape) <= 1) return MemOverlap::no;
  // Nested strides: each dim's stride exceeds the extent of the smaller ones, so no two
  // indices meet. A zero stride on a dim of size > 1 always repeats a location.
  int64_t reach = 0, step = 0;
  bool nested = true;
  for (auto [stride, size] : sorted_dims(l)) {
    if (stride == 0) return MemOverlap::yes;
    if (stride <= reach) nested = false;
    if (__builtin_mul_overflow(size - 1, stride, &step) || __builtin_add_overflow(reach, step, &reach))
      return MemOverlap::too_hard;
  }
  if (nested) return MemOverlap::no;
  if (numel(l.shape) > kMaxListed) return MemOverlap::too_hard;
  std::vector<int64_t> at = locations(l);
  return std::adjacent_find(at.begin(), at.end()) != at.end() ? MemOverlap::yes : MemOverlap::no;
}

std::string layout_str(const Tensor& t) {
  return detail::cat("shape ", t.shape(), ", strides ", t.strides(), ", storage offset ", t.offset());
}

}  // namespace

MemOverlap has_internal_overlap(const Tensor& t) { return internal_overlap(layout_of(t)); }

bool is_non_overlapping_and_dense(const Tensor& t) { return dense(layout_of(t)); }

void assert_no_internal_overlap(const Tensor& t, const char* op) {
  AG_CHECK(has_internal_overlap(t) != MemOverlap::yes, ValueError, op,
           ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation. (written-to tensor: ",
           layout_str(t), ")");
}

static MemOverlapStatus overlap_status(const Tensor& a, const Layout& la, const Tensor& b, const Layout& lb) {
  if (a.impl() == b.impl()) return MemOverlapStatus::full;
  if (numel(la.shape) == 0 || numel(lb.shape) == 0 || a.storage() != b.storage()) return MemOverlapStatus::no;
  const int64_t ea = extent(la), eb = extent(lb);
  if (ea < 0 || eb < 0) return MemOverlapStatus::too_hard;
  // Byte ranges [lo, hi) over the shared storage (layouts are in bounds: no overflow).
  const int64_t sa = int64_t(itemsize(a.dtype())), sb = int64_t(itemsize(b.dtype()));
  const int64_t a_lo = la.offset * sa, a_hi = (la.offset + ea + 1) * sa;
  const int64_t b_lo = lb.offset * sb, b_hi = (lb.offset + eb + 1) * sb;
  if (!(a_lo < b_hi && b_lo < a_hi)) return MemOverlapStatus::no;
  if (sa == sb && la.shape == lb.shape && la.offset == lb.offset) {
    bool same = true;  // one location per index, the same for both (size-1 strides unused)
    for (int64_t i = 0; i < la.shape.size(); ++i) same = same && (la.shape[i] == 1 || la.strides[i] == lb.strides[i]);
    if (same) return MemOverlapStatus::full;
  }
  if (dense(la) && dense(lb)) return MemOverlapStatus::partial;  // each fills its range
  if (sa != sb || numel(la.shape) + numel(lb.shape) > kMaxListed) return MemOverlapStatus::too_hard;
  const std::vector<int64_t> at = locations(la), bt = locations(lb);
  for (int64_t x : bt)
    if (std::binary_search(at.begin(), at.end(), x)) return MemOverlapStatus::partial;
  return MemOverlapStatus::no;
}

MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b) {
  return overlap_status(a, layout_of(a), b, layout_of(b));
}

MemOverlapStatus assert_no_partial_overlap(const Tensor& out, const Tensor& input, const char* op) {
  const MemOverlapStatus s = overlap_status(out, layout_of(out), input, broadcast_layout(input, out.shape()));
  AG_CHECK(s != MemOverlapStatus::partial, ValueError, op,
           ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation. (written-to tensor: ",
           layout_str(out), "; input: ", layout_str(input), ")");
  return s;
}

}  // namespace ag
