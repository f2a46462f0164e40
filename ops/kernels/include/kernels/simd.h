#pragma once
// Run-time choice of vector width for the kernels that have wide variants (internal).
// The library is built for baseline x86-64 (SSE2) and never with -march=native; the
// *_avx2.cpp and *_avx512.cpp files beside this one are compiled with those instruction
// sets and used only when the CPU reports them (xsimd::available_architectures), so one
// binary runs everywhere and still uses the wide registers where they exist.
#include <cstdint>
#include <string>
#include <vector>

namespace ag::kernels {

enum class SimdLevel { sse2, avx2, avx512 };

std::string to_string(SimdLevel level);

// Levels this CPU (and this build) can run, narrowest first; sse2 is always there.
std::vector<SimdLevel> available_simd_levels();

// The level in use: the widest available, unless ATTOGRAD_SIMD=sse2|avx2|avx512 in the
// environment or set_simd_level asked for a narrower one.
SimdLevel simd_level();

// For tests and benchmarks: run every dispatched kernel at `level`. Throws ValueError
// when the CPU or the build lacks it.
void set_simd_level(SimdLevel level);

// Row operations of the fused attention kernel (flash_attention.cpp) at one width. Each
// works on n contiguous elements; n is a tile row (at most the tile width, 64) or dv.
template <class T>
struct RowOps {
  T (*max)(const T* x, int64_t n);                      // max over x (-inf when n == 0)
  T (*exp_sub_sum)(T* x, int64_t n, T m);               // x = exp(x - m); returns sum x
  void (*exp_sub)(T* x, int64_t n, T m);                // x = exp(x - m)
  void (*scale)(T* x, int64_t n, T a);                  // x *= a
  void (*mul)(T* x, const T* z, int64_t n);             // x *= z
  void (*mul_into)(T* out, const T* x, const T* z, int64_t n);  // out = x * z
  void (*ds)(T* dp, const T* p, int64_t n, T D);        // dp = p * (dp - D)
  T (*dot)(const T* a, const T* b, int64_t n);          // sum a * b
  // h[c] = mix32(mix32(lo ^ k0) + hi_key) for lo = lo0 + c, c < n (no wrap past 2^32:
  // the caller splits there): the dropout hash of the fused kernel, bit-identical at
  // every width.
  void (*hash_row)(uint32_t* h, int64_t n, uint32_t lo0, uint32_t k0, uint32_t hi_key);
  // out[4 b + w] = word w of philox4x32_10({lo, hi of block0 + b, 0, 0}, {k0, k1}) for
  // b < nblocks: the counter-based stream behind dropout, the same at every width.
  void (*philox_blocks)(uint32_t* out, int64_t nblocks, uint64_t block0, uint32_t k0, uint32_t k1);
  // z[c] = h[c] < keep ? scale : 0 for c < n (keep <= 2^32): a dropout mask from random words.
  void (*keep_mask)(T* z, const uint32_t* h, int64_t n, uint64_t keep, T scale);
};

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011),
// the counter-based generator PyTorch's GPU kernels draw dropout masks from: ten rounds
// of two 32 x 32 -> 64-bit products on a 128-bit counter under a 64-bit key. The scalar
// reference; RowOps::philox_blocks is the vectorized form.
inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0, p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1), c3 = static_cast<uint32_t>(p0), c0 = n0, c2 = n2;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

// The 32-bit integer finalizer the dropout hash is built from (also the scalar
// reference for hash_row).
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Elementwise row operations at one width (binary.cpp, gelu.cpp): out, a, b hold n
// contiguous elements. arith[op][layout] is a op b for op add, sub, mul, div (the order
// of kernels::Binary) with layout 0: a and b rows, 1: b a scalar (*b), 2: a a scalar
// (*a); IEEE operations, so every width gives the same bits.
template <class T>
struct EltOps {
  using Arith = void (*)(T* out, const T* a, const T* b, int64_t n);
  Arith arith[4][3];
  // float only (nullptr for double, which gelu.cpp runs in scalar libm form for
  // PyTorch's float64 answers): GELU, tanh picking the tanh approximation, in PyTorch's
  // float arithmetic around erf / tanh computed in double; and g times its derivative,
  // computed in double and rounded once (1 + erf as erfc: no cancellation).
  void (*gelu)(T* out, const T* x, int64_t n, bool tanh);
  void (*gelu_backward)(T* out, const T* g, const T* x, int64_t n, bool tanh);
  // Layer norm over `rows` contiguous rows of n (fused.cpp). Statistics and the sums
  // of the backward are accumulated in double; the elementwise parts are the same float
  // (or double) operations at every width. w and b may be null.
  //   forward:  mean, rstd per row; y = (x - mean) rstd w + b
  //   backward: dx = rstd (g w - mean(g w) - xhat mean(g w xhat)) when dx is not null,
  //             and dw += g xhat, db += g (per column, in double) when not null
  void (*layer_norm)(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n,
                     double eps);
  void (*layer_norm_backward)(const T* x, const T* g, const T* w, const T* mean, const T* rstd, T* dx, double* dw,
                              double* db, int64_t rows, int64_t n);
  // Adam / AdamW on n parameters (optim/optimizer.cpp), IEEE operations in torch's order:
  //   decoupled: w *= decay, else g += wd w;  m = b1 m + c1 g;  v = b2 v + c2 g g;
  //   vmax = max(vmax, v) (AMSGrad, when vmax is not null);  w -= ss m / (sqrt(v) / bc + eps)
  struct AdamStep {
    bool decoupled;
    T wd, decay, b1, b2, c1, c2, eps, ss, bc;
  };
  void (*adam)(T* w, const T* g, T* m, T* v, T* vmax, int64_t n, const AdamStep& h);
  // sum of x^2 over n elements, in double lanes (clip_grad_norm_).
  double (*sum_sq)(const T* x, int64_t n);
  // Sums in double (reduce.cpp): of a row in WD lanes; and acc[j] += x[j] for j < n.
  double (*sum)(const T* x, int64_t n);
  void (*add_to)(double* acc, const T* x, int64_t n);
  // out = c ? a : b over n elements (where.cpp's rows, masked_fill): c contiguous, and
  // a, b rows (index 1) or single values (index 0): where_row[a is a row][b is a row].
  using Where = void (*)(T* out, const bool* c, const T* a, const T* b, int64_t n);
  Where where_row[2][2];
};

// The row operations for simd_level().
template <class T>
const RowOps<T>& row_ops();

// The row operations at a given level (tests compare every level with sse2).
template <class T>
const RowOps<T>& row_ops(SimdLevel level);

// The elementwise operations for simd_level(), and at a given level.
template <class T>
const EltOps<T>& elt_ops();
template <class T>
const EltOps<T>& elt_ops(SimdLevel level);

}  // namespace ag::kernels
