#pragma once
/// \file
/// Tensor factories. Floating factories default to get_default_dtype() (f32 unless set);
/// integer ones to i64. `full` and `arange` without a dtype infer it from their Scalar
/// arguments as torch.full / torch.arange do: any floating value -> the default float
/// dtype, else i64 (full with a bool value -> bool). An explicit dtype always wins.
/// Random factories draw from `gen`, or the default generator when it is null.
#include <initializer_list>
#include <optional>
#include <vector>

#include "attograd/generator.h"
#include "attograd/scalar.h"
#include "attograd/tensor.h"

namespace ag {

/// Uninitialized; dtype defaults to get_default_dtype().
Tensor empty(const Shape& shape, std::optional<DType> dtype = {});
/// All 0; dtype defaults to get_default_dtype().
Tensor zeros(const Shape& shape, std::optional<DType> dtype = {});
/// All 1; dtype defaults to get_default_dtype().
Tensor ones(const Shape& shape, std::optional<DType> dtype = {});
/// All `value`; the dtype defaults to the value's (i64 for integers, the default float).
Tensor full(const Shape& shape, Scalar value, std::optional<DType> dtype = {});
Tensor scalar_tensor(Scalar value, std::optional<DType> dtype = {});  ///< shape [], dtype as full
/// ceil((end - start) / step) values start + i * step (computed in double); ValueError on
/// step 0 or a step whose sign does not lead from start to end.
Tensor arange(Scalar end, std::optional<DType> dtype = {});
/// [start, end) by step, 1-D; integral arguments give i64.
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, std::optional<DType> dtype = {});  ///< (n, m or n)
/// `steps` evenly spaced values from start to end inclusive (torch.linspace; f32 or f64
/// bit for bit as PyTorch 1.13 on CPU; steps = 1 gives [start]). An integer dtype
/// computes in double and truncates as PyTorch: linspace(5, 10, 3, i32) = [5, 7, 10].
Tensor linspace(double start, double end, int64_t steps, std::optional<DType> dtype = {});

Tensor rand(const Shape& shape, std::optional<DType> dtype = {}, Generator* gen = nullptr);   ///< U[0, 1)
Tensor randn(const Shape& shape, std::optional<DType> dtype = {}, Generator* gen = nullptr);  ///< N(0, 1)
/// U[low, high) from gen (the default generator if null).
Tensor uniform(const Shape& shape, double low, double high, std::optional<DType> dtype = {}, Generator* gen = nullptr);
/// Uniform integers in [low, high), i64 by default.
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr, DType dtype = DType::i64);
/// Bernoulli(p) draws as 0/1 in `dtype` (dropout masks).
Tensor bernoulli(const Shape& shape, double p, std::optional<DType> dtype = {}, Generator* gen = nullptr);

/// A number or a nested braced list of numbers, the argument of ag::tensor (LibTorch's
/// TensorDataContainer): 1.5, {1, 2}, {{1, 2}, {3, 4}}, or a std::vector of numbers.
class TensorData {
 public:
  /// A single number: a 0-d tensor.
  template <class T>
  requires std::is_arithmetic_v<T> TensorData(T value) { add(Scalar(value)); }
  /// A list of numbers or of equally shaped lists; {} is an empty 1-D list.
  TensorData(std::initializer_list<TensorData> list);
  /// A 1-D list.
  template <class T>
  requires std::is_arithmetic_v<T> TensorData(const std::vector<T>& values)
      : shape_{static_cast<int64_t>(values.size())} {
    for (const T& v : values) add(Scalar(v));
  }

  const Shape& shape() const { return shape_; }                  ///< the nesting's sizes
  const std::vector<Scalar>& values() const { return values_; }  ///< row-major
  /// The widest kind of any element (bool < integer < floating), as torch.tensor infers.
  Scalar::Kind kind() const { return kind_; }

 private:
  void add(Scalar v);
  Shape shape_;
  std::vector<Scalar> values_;
  Scalar::Kind kind_ = Scalar::Kind::boolean;
  bool empty_ = true;  // no element yet: an empty list infers the default float dtype
};

/// torch::tensor / torch.tensor: ag::tensor({{1, 2}, {3, 4}}) is a (2, 2) i64 tensor. The
/// dtype is inferred as PyTorch's: any floating element -> the default float dtype, else
/// any integer -> i64, else bool (an empty list: the default float dtype); an explicit
/// dtype wins (values converted as to()). Ragged lists are a ShapeError.
Tensor tensor(const TensorData& data, std::optional<DType> dtype = {});

/// Uninitialized, t's shape and dtype.
Tensor empty_like(const Tensor& t);
/// Zeros of t's shape and dtype.
Tensor zeros_like(const Tensor& t);
/// Ones of t's shape and dtype.
Tensor ones_like(const Tensor& t);
/// `value` in t's shape and dtype.
Tensor full_like(const Tensor& t, Scalar value);
/// U[0, 1) in t's shape and (floating) dtype.
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
/// N(0, 1) in t's shape and (floating) dtype.
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);

}  // namespace ag
