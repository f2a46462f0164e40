#pragma once
// Tensor factories. Floating factories default to f32; integer ones to i64.
// Random factories draw from `gen`, or the default generator when it is null.
#include "attograd/generator.h"
#include "attograd/tensor.h"

namespace ag {

Tensor empty(const Shape& shape, DType dtype = DType::f32);
Tensor zeros(const Shape& shape, DType dtype = DType::f32);
Tensor ones(const Shape& shape, DType dtype = DType::f32);
Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
Tensor scalar_tensor(double value, DType dtype = DType::f32);  // shape []
Tensor arange(double end, DType dtype = DType::i64);
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::i64);
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::f32);
// `steps` evenly spaced values from start to end inclusive (torch.linspace; f32 or f64,
// bit for bit as PyTorch 1.13 on CPU; steps = 1 gives [start]).
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::f32);

Tensor rand(const Shape& shape, DType dtype = DType::f32, Generator* gen = nullptr);   // U[0, 1)
Tensor randn(const Shape& shape, DType dtype = DType::f32, Generator* gen = nullptr);  // N(0, 1)
Tensor uniform(const Shape& shape, double low, double high, DType dtype = DType::f32,
               Generator* gen = nullptr);
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr,
               DType dtype = DType::i64);
// Bernoulli(p) draws as 0/1 in `dtype` (dropout masks).
Tensor bernoulli(const Shape& shape, double p, DType dtype = DType::f32, Generator* gen = nullptr);

Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);

}  // namespace ag
