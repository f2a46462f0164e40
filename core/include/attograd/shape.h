#pragma once
/// \file
/// Shape and Strides: small vectors, inline up to kInlineDims (no heap per tensor). Strides
/// count elements, not bytes. Up to kMaxDims (64) dimensions, as PyTorch.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "attograd/error.h"

namespace ag {

/// The most dims a tensor may have (PyTorch's limit).
inline constexpr int kMaxDims = 64;
/// Dims held inline, without a heap block: every shape up to this many dims.
inline constexpr int kInlineDims = 8;

/// Small vector of dims (shapes and strides): up to kInlineDims inline (no heap per
/// tensor), beyond that in one heap block of kMaxDims, so rank 9-64 works and the
/// common case costs what a fixed array did (op_overhead measures it).
class Dims {
 public:
  Dims() noexcept : small_{} {}
  /// From a list of sizes; ShapeError beyond kMaxDims.
  Dims(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  /// From a list of sizes; ShapeError beyond kMaxDims.
  explicit Dims(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }
  /// A copy (one heap block if other has more than kInlineDims dims).
  [[gnu::always_inline]] Dims(const Dims& other) : n_(other.n_) {
    if (n_ <= kInlineDims) [[likely]]
      std::memcpy(small_, other.small_, sizeof small_);
    else
      p_ = clone_block(other.p_, n_);
  }
  /// Takes other's dims (and heap block); a moved-from Dims of more than kInlineDims dims is 0-d.
  [[gnu::always_inline]] Dims(Dims&& other) noexcept : n_(other.n_) {
    if (n_ <= kInlineDims) [[likely]] {
      std::memcpy(small_, other.small_, sizeof small_);
    } else {
      p_ = other.p_;
      other.p_ = other.small_, other.n_ = 0;
    }
  }
  /// Copy assignment.
  [[gnu::always_inline]] Dims& operator=(const Dims& other) {
    if (p_ == small_ && other.n_ <= kInlineDims) [[likely]] {
      std::memcpy(small_, other.small_, sizeof small_);
      n_ = other.n_;
    } else if (this != &other) {
      *this = Dims(other);
    }
    return *this;
  }
  /// Move assignment.
  [[gnu::always_inline]] Dims& operator=(Dims&& other) noexcept {
    if (this == &other) return *this;
    if (p_ != small_) [[unlikely]]
      free_block(p_), p_ = small_;
    n_ = other.n_;
    if (n_ <= kInlineDims) [[likely]] {
      std::memcpy(small_, other.small_, sizeof small_);
    } else {
      p_ = other.p_;
      other.p_ = other.small_, other.n_ = 0;
    }
    return *this;
  }
  [[gnu::always_inline]] ~Dims() {
    if (p_ != small_) [[unlikely]]
      free_block(p_);
  }

  /// n dims, each `value`.
  static Dims filled(int64_t n, int64_t value) {
    Dims d;
    for (int64_t i = 0; i < n; ++i) d.push_back(value);
    return d;
  }

  /// Number of dims.
  int64_t size() const { return n_; }
  /// True for a 0-d shape.
  bool empty() const { return n_ == 0; }
  /// Dim i (0 <= i < size(); not wrapped).
  int64_t& operator[](int64_t i) { return ptr()[i]; }
  /// Dim i (0 <= i < size(); not wrapped).
  int64_t operator[](int64_t i) const { return ptr()[i]; }
  /// The last dim.
  int64_t back() const { return ptr()[n_ - 1]; }
  /// First dim.
  int64_t* begin() { return ptr(); }
  /// Past the last dim.
  int64_t* end() { return ptr() + n_; }
  /// First dim.
  const int64_t* begin() const { return ptr(); }
  /// Past the last dim.
  const int64_t* end() const { return ptr() + n_; }
  /// Contiguous dims.
  const int64_t* data() const { return ptr(); }

  /// Appends a dim; ShapeError beyond kMaxDims.
  void push_back(int64_t v) {
    AG_CHECK(n_ < kMaxDims, ShapeError, "shape: more than ", kMaxDims, " dims are not supported");
    if (n_ == kInlineDims) [[unlikely]]  // spill: the dims move to a block of kMaxDims
      p_ = clone_block(small_, kInlineDims);
    p_[n_++] = v;
  }
  /// Inserts v before position pos.
  void insert(int64_t pos, int64_t v) {
    push_back(0);
    int64_t* d = ptr();
    for (int64_t i = n_ - 1; i > pos; --i) d[i] = d[i - 1];
    d[pos] = v;
  }
  /// Removes the dim at pos.
  void erase(int64_t pos) {
    int64_t* d = ptr();
    for (int64_t i = pos; i + 1 < n_; ++i) d[i] = d[i + 1];
    if (n_ == kInlineDims + 1) {  // back to the inline slots
      std::copy(p_, p_ + kInlineDims, small_);
      free_block(p_);
      p_ = small_;
    }
    --n_;
  }
  /// A std::vector copy.
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  /// Same dims in the same order.
  friend bool operator==(const Dims& a, const Dims& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  // Checked before the first push: a constructor that threw half way would leak the block
  // (no destructor runs for an object not yet constructed).
  template <class It>
  void assign(It first, It last) {
    AG_CHECK(last - first <= kMaxDims, ShapeError, "shape: more than ", kMaxDims, " dims are not supported (got ",
             last - first, ")");
    for (; first != last; ++first) push_back(*first);
  }
  // The rare paths stay out of line, so that copies and destructors of the common
  // (inline) case inline to a few moves (op_overhead: empty, reshape, add_small).
  [[gnu::cold, gnu::noinline]] static int64_t* clone_block(const int64_t* dims, int64_t n) {
    auto* block = new int64_t[kMaxDims];
    std::copy(dims, dims + n, block);
    return block;
  }
  [[gnu::cold, gnu::noinline]] static void free_block(int64_t* block) { delete[] block; }
  [[gnu::always_inline]] int64_t* ptr() { return p_; }
  [[gnu::always_inline]] const int64_t* ptr() const { return p_; }
  // The dims live at p_: the inline slots up to kInlineDims dims, else a heap block of
  // kMaxDims (LLVM's SmallVector: every access is one load, no branch).
  int64_t small_[kInlineDims];  // not zeroed by copies: they overwrite it
  int64_t* p_ = small_;
  int32_t n_ = 0;
};

/// Sizes per dim.
using Shape = Dims;
/// Steps per dim, in elements (not bytes).
using Strides = Dims;

/// Prints "[2, 3]".
inline std::ostream& operator<<(std::ostream& os, const Dims& d) {
  os << '[';
  for (int64_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  return os << ']';
}

/// Element count of s: the one place shapes are validated (every factory allocates
/// through it, every Tensor is checked with it). A negative dim, or an element count that
/// does not fit in int64, throws ShapeError naming `op` and the shape (PyTorch: "negative
/// dimension"; a product of two negative dims would otherwise pass as positive).
inline int64_t numel(const Shape& s, const char* op = "numel") {
  int64_t n = 1;
  for (int64_t v : s) {
    AG_CHECK(v >= 0, ShapeError, op, ": shape ", s, " has a negative dimension ", v);
    AG_CHECK(!__builtin_mul_overflow(n, v, &n), ShapeError, op, ": shape ", s,
             " has too many elements (the count overflows int64)");
  }
  return n;
}

/// Row-major strides of s, in elements (size-0 dims count as 1). Checked like numel.
inline Strides contiguous_strides(const Shape& s, const char* op = "contiguous_strides") {
  Strides st = Dims::filled(s.size(), 1);
  for (int64_t i = s.size() - 2; i >= 0; --i)
    AG_CHECK(!__builtin_mul_overflow(st[i + 1], std::max<int64_t>(s[i + 1], 1), &st[i]), ShapeError, op,
             ": strides of shape ", s, " overflow int64");
  return st;
}

/// Maps a possibly negative dim into [0, ndim); throws IndexError naming the op.
inline int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  AG_CHECK(dim >= lo && dim <= hi, IndexError, op, ": dim ", dim, " is out of range for a tensor with ", ndim,
           " dims (expected ", lo, " to ", hi, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

/// NumPy broadcasting: align at the right; each pair must match or one must be 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace ag
