#pragma once
/// \file
/// The index types of Tensor::index and Tensor::index_put_, as LibTorch's
/// torch::indexing: Python's `x[:, None, 0, 1::2, ..., mask, idx]` is
/// `x.index({Slice(), None, 0, Slice(1, None, 2), Ellipsis, mask, idx})`.
///   - an integer selects (the dim goes away), a Slice keeps a strided part, None inserts
///     a size-1 dim, Ellipsis (or "...") stands for as many full slices as needed;
///   - a tensor is an advanced index: i64/i32 indices (negative ones count from the end)
///     or a bool mask over as many dims as it has; advanced indices broadcast together,
///     and their result dims go where the first of them was when they are adjacent, else
///     first (NumPy's rule);
///   - a bool (or a 0-d bool tensor) inserts a dim of size 1 (true) or 0 (false);
///   - a 0-d integer tensor selects, as an integer does.
/// Without tensor indices the result is a view; with them, a copy. Both differentiable.
/// (Included at the end of attograd/tensor.h: TensorIndex holds a Tensor.)
#include <concepts>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

#include "attograd/error.h"
#include "attograd/tensor.h"

namespace ag::indexing {

/// torch::indexing::None: inserts a size-1 dim (Python's None / np.newaxis).
inline constexpr std::nullopt_t None = std::nullopt;

/// The type of Ellipsis.
struct EllipsisIndexType {
  explicit constexpr EllipsisIndexType() = default;
};
/// torch::indexing::Ellipsis: as many full slices as the other indices leave dims.
inline constexpr EllipsisIndexType Ellipsis{};

/// Python's start:stop:step; an absent part takes Python's default (0, the end, 1).
/// Negative start/stop count from the end and out-of-range ones clamp, as in Python; the
/// step must be positive (as PyTorch's).
class Slice {
 public:
  /// Slice() is `:`; Slice(1, None, 2) is `1::2`.
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start.value_or(0)), stop_(stop.value_or(INT64_MAX)), step_(step.value_or(1)) {}
  int64_t start() const { return start_; }  ///< 0 when absent
  int64_t stop() const { return stop_; }    ///< INT64_MAX when absent
  int64_t step() const { return step_; }    ///< 1 when absent

 private:
  int64_t start_, stop_, step_;
};

/// One entry of an index list: an integer, a bool, a Slice, None, Ellipsis or a tensor.
class TensorIndex {
 public:
  /// What the entry is.
  enum class Kind { none, ellipsis, integer, boolean, slice, tensor };

  TensorIndex(std::nullopt_t) : kind_(Kind::none) {}                               ///< None
  TensorIndex(EllipsisIndexType) : kind_(Kind::ellipsis) {}                        ///< Ellipsis
  TensorIndex(Slice slice) : kind_(Kind::slice), slice_(slice) {}                  ///< start:stop:step
  TensorIndex(Tensor tensor) : kind_(Kind::tensor), tensor_(std::move(tensor)) {}  ///< advanced index
  /// "..." as LibTorch accepts it; any other string is a ValueError.
  TensorIndex(const char* s) : kind_(Kind::ellipsis) {
    AG_CHECK(s != nullptr && std::strcmp(s, "...") == 0, ValueError,
             "TensorIndex: expected \"...\" to represent an ellipsis index, but got \"", s ? s : "(null)", "\"");
  }
  /// An integer selects; a bool inserts a dim of size 1 or 0.
  template <class T>
  requires std::integral<T> TensorIndex(T value) : kind_(std::is_same_v<T, bool> ? Kind::boolean : Kind::integer) {
    if constexpr (std::is_same_v<T, bool>) {
      boolean_ = value;
    } else {
      AG_CHECK(std::in_range<int64_t>(value), IndexError, "TensorIndex: index ", value, " does not fit int64");
      integer_ = static_cast<int64_t>(value);
    }
  }

  Kind kind() const { return kind_; }                           ///< what the entry is
  int64_t integer() const { return integer_; }                  ///< Kind::integer's value
  bool boolean() const { return boolean_; }                     ///< Kind::boolean's value
  const Slice& slice() const { return slice_; }                 ///< Kind::slice's value
  const Tensor& tensor() const { return tensor_; }              ///< Kind::tensor's value
  bool is_none() const { return kind_ == Kind::none; }          ///< None
  bool is_ellipsis() const { return kind_ == Kind::ellipsis; }  ///< Ellipsis
  bool is_integer() const { return kind_ == Kind::integer; }    ///< an integer
  bool is_boolean() const { return kind_ == Kind::boolean; }    ///< a bool
  bool is_slice() const { return kind_ == Kind::slice; }        ///< a Slice
  bool is_tensor() const { return kind_ == Kind::tensor; }      ///< a tensor

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

/// Python's spelling: 1, True, None, ..., 1:None:2, or tensor(shape, dtype).
std::ostream& operator<<(std::ostream& os, const TensorIndex& index);

}  // namespace ag::indexing
