#pragma once
/// \file
/// Shape and Strides: small fixed-capacity arrays (no heap per tensor). Strides count
/// elements, not bytes. Up to kMaxDims dimensions.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "attograd/error.h"

namespace ag {

/// The most dims a tensor may have.
inline constexpr int kMaxDims = 8;

/// Small inline vector of dims (up to kMaxDims, no heap): shapes and strides.
class Dims {
 public:
  Dims() = default;
  /// From a list of sizes; ShapeError beyond kMaxDims.
  Dims(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  /// From a list of sizes; ShapeError beyond kMaxDims.
  explicit Dims(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }
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
  int64_t& operator[](int64_t i) { return d_[static_cast<size_t>(i)]; }
  /// Dim i (0 <= i < size(); not wrapped).
  int64_t operator[](int64_t i) const { return d_[static_cast<size_t>(i)]; }
  /// The last dim.
  int64_t back() const { return d_[static_cast<size_t>(n_ - 1)]; }
  /// First dim.
  int64_t* begin() { return d_.data(); }
  /// Past the last dim.
  int64_t* end() { return d_.data() + n_; }
  /// First dim.
  const int64_t* begin() const { return d_.data(); }
  /// Past the last dim.
  const int64_t* end() const { return d_.data() + n_; }
  /// Contiguous dims.
  const int64_t* data() const { return d_.data(); }

  /// Appends a dim.
  void push_back(int64_t v) {
    AG_CHECK(n_ < kMaxDims, ShapeError, "shape: more than ", kMaxDims, " dims are not supported");
    d_[static_cast<size_t>(n_++)] = v;
  }
  /// Inserts v before position pos.
  void insert(int64_t pos, int64_t v) {
    push_back(0);
    for (int64_t i = n_ - 1; i > pos; --i) d_[size_t(i)] = d_[size_t(i - 1)];
    d_[size_t(pos)] = v;
  }
  /// Removes the dim at pos.
  void erase(int64_t pos) {
    for (int64_t i = pos; i + 1 < n_; ++i) d_[size_t(i)] = d_[size_t(i + 1)];
    --n_;
  }
  /// A std::vector copy.
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  /// Same dims in the same order.
  friend bool operator==(const Dims& a, const Dims& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <class It>
  void assign(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  std::array<int64_t, kMaxDims> d_{};
  int8_t n_ = 0;
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
