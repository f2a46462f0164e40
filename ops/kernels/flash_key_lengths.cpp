// Padding masks known by structure (FLASH_ATTENTION.md, "Skipping padded keys"): from the
// mask of the fused attention, each query batch slice's count of leading keys that any
// query may see, so the kernels skip the K/V tiles past it.
//
// Legend: n query batch slices (q's batch dims flattened), L queries, S keys.
#include <cmath>
#include <vector>

#include "kernels/flash_attention.h"
#include "kernels/strided.h"
#include "kernels/half.h"

namespace ag::kernels {
namespace {

struct Scan {
  int64_t len;  // 1 + the last key some query may see (0: none)
  bool exact;   // the mask is "key j < len" for every query, nothing else
};

// One slice's mask m, element (i, j) at m[i * ml + j * mc]. Keys are scanned from the
// end, so a mask whose last key is visible (no right padding) costs O(1) (or O(L) when
// it varies over queries); a padded slice costs O(padding) per query row scanned.
template <class E, class Allowed, class Neutral>
Scan scan_slice(const E* m, int64_t ml, int64_t mc, int64_t L, int64_t S, Allowed allowed, Neutral neutral) {
  const int64_t rows = ml == 0 ? 1 : L;  // a mask broadcast over queries: one row says it all
  int64_t len = 0;
  for (int64_t j = S - 1; j >= 0 && len == 0; --j)
    for (int64_t i = 0; i < rows; ++i)
      if (allowed(m[i * ml + j * mc])) {
        len = j + 1;
        break;
      }
  bool exact = rows == 1;
  for (int64_t j = 0; exact && j < len; ++j) exact = neutral(m[j * mc]);
  return {len, exact};
}

}  // namespace

FlashKeyLengths flash_key_lengths(const Tensor& q, const Tensor& k, const Tensor& mask) {
  // Only q's and k's shapes are read; a 16-bit mask is scanned in f32 (-inf and 0 are exact).
  if (is_half(mask)) return flash_key_lengths(q, k, as_f32(mask));
  const int64_t L = q.size(-2), S = k.size(-2);
  if (!mask.defined() || L == 0 || S == 0) return {};
  Shape batch(std::vector<int64_t>(q.shape().begin(), q.shape().end() - 2)), full = batch;
  full.push_back(L), full.push_back(S);
  const Strides mst = broadcast_strides(mask, full);
  const int64_t nb = batch.size(), n = numel(batch), ml = mst[nb], mc = mst[nb + 1];
  Tensor len = empty({n}, DType::i64);
  int64_t* pl = len.data<int64_t>();
  bool exact = true, shorter = false;
  auto run = [&]<class E>(auto allowed, auto neutral) {
    const E* base = static_cast<const E*>(mask.raw_data());  // at the view's first element
    int64_t prev = -1;
    Scan sc{S, false};
    for (int64_t b = 0; b < n; ++b) {
      int64_t off = 0;  // slice b's mask offset; (B, h) slices of a (B, 1, 1, S) mask share it h at a time
      for (int64_t i = nb - 1, r = b; i >= 0; --i) {
        off += (r % batch[i]) * mst[i];
        r /= batch[i];
      }
      if (off != prev) sc = scan_slice(base + off, ml, mc, L, S, allowed, neutral), prev = off;
      pl[b] = sc.len;
      exact = exact && sc.exact;
      shorter = shorter || sc.len < S;
    }
  };
  if (mask.dtype() == DType::b8) {
    run.operator()<bool>([](bool x) { return x; }, [](bool x) { return x; });
  } else {
    dispatch_float(mask.dtype(), "flash_key_lengths", [&]<class T>() {
      run.operator()<T>([](T x) { return !(std::isinf(x) && x < 0); }, [](T x) { return x == T(0); });
    });
  }
  return {shorter ? len : Tensor{}, exact};
}

}  // namespace ag::kernels
