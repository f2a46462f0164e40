// The math methods of ag::Tensor, included inside the class body by attograd/tensor.h
// (a file of its own to keep tensor.h short; .inl so that it is installed and formatted
// with the headers). Definitions: ops/tensor_methods_math.cpp (pointwise, comparison,
// reductions, scans), ops/tensor_methods_shape.cpp (shape, indexing, random) and
// ops/inplace.cpp (the in-place forms). Not a header of its own: do not include it.
// LibTorch's Tensor methods: each forwards to the differentiable free function ag::<name>
// (its header documents shapes, dtypes and gradients), with the argument order and
// defaults of LibTorch's TensorBody.h. Where LibTorch takes an IntArrayRef dim, one
// integer dim is accepted too (x.sum(0), x.var(0) = dim 0, as in LibTorch); x.sum({})
// still reduces every dim. (values, indices) come back as std::pair (LibTorch:
// std::tuple; both work with structured bindings and std::get). tests/ops/
// test_tensor_methods.cpp checks that every public op that is a torch.Tensor method has
// one here.
// pointwise (attograd/ops/unary.h, activation.h)
Tensor abs() const;                    ///< ag::abs
Tensor neg() const;                    ///< ag::neg
Tensor sign() const;                   ///< ag::sign
Tensor square() const;                 ///< ag::square
Tensor sqrt() const;                   ///< ag::sqrt
Tensor rsqrt() const;                  ///< ag::rsqrt
Tensor exp() const;                    ///< ag::exp
Tensor exp2() const;                   ///< ag::exp2
Tensor expm1() const;                  ///< ag::expm1
Tensor log() const;                    ///< ag::log
Tensor log2() const;                   ///< ag::log2
Tensor log10() const;                  ///< ag::log10
Tensor log1p() const;                  ///< ag::log1p
Tensor sin() const;                    ///< ag::sin
Tensor cos() const;                    ///< ag::cos
Tensor tan() const;                    ///< ag::tan
Tensor asin() const;                   ///< ag::asin
Tensor acos() const;                   ///< ag::acos
Tensor atan() const;                   ///< ag::atan
Tensor sinh() const;                   ///< ag::sinh
Tensor cosh() const;                   ///< ag::cosh
Tensor tanh() const;                   ///< ag::tanh
Tensor asinh() const;                  ///< ag::asinh
Tensor acosh() const;                  ///< ag::acosh
Tensor atanh() const;                  ///< ag::atanh
Tensor erf() const;                    ///< ag::erf
Tensor floor() const;                  ///< ag::floor
Tensor ceil() const;                   ///< ag::ceil
Tensor round() const;                  ///< ag::round (half to even)
Tensor round(int64_t decimals) const;  ///< ag::round to `decimals` digits
Tensor trunc() const;                  ///< ag::trunc
Tensor frac() const;                   ///< ag::frac
Tensor relu() const;                   ///< ag::relu
Tensor sigmoid() const;                ///< ag::sigmoid
/// ag::clamp to [min, max]; either may be absent.
Tensor clamp(std::optional<double> min, std::optional<double> max = {}) const;
/// ag::clamp with tensor bounds (broadcast with self).
Tensor clamp(const std::optional<Tensor>& min = {}, const std::optional<Tensor>& max = {}) const;
Tensor clamp_min(double min) const;  ///< clamp(min, {})
Tensor clamp_max(double max) const;  ///< clamp({}, max)
// binary arithmetic (attograd/ops/binary.h)
Tensor add(const Tensor& other, Scalar alpha = 1) const;  ///< self + alpha * other
Tensor add(Scalar other, Scalar alpha = 1) const;         ///< self + alpha * other
Tensor sub(const Tensor& other, Scalar alpha = 1) const;  ///< self - alpha * other
Tensor sub(Scalar other, Scalar alpha = 1) const;         ///< self - alpha * other
Tensor mul(const Tensor& other) const;                    ///< ag::mul
Tensor mul(Scalar other) const;                           ///< ag::mul
Tensor div(const Tensor& other) const;                    ///< ag::div (true division)
Tensor div(Scalar other) const;                           ///< ag::div (true division)
/// ag::div with rounding_mode "trunc", "floor" or std::nullopt (true division).
Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
/// ag::div with rounding_mode "trunc", "floor" or std::nullopt (true division).
Tensor div(Scalar other, std::optional<std::string_view> rounding_mode) const;
Tensor pow(const Tensor& exponent) const;                    ///< ag::pow
Tensor pow(Scalar exponent) const;                           ///< ag::pow
Tensor maximum(const Tensor& other) const;                   ///< ag::maximum
Tensor minimum(const Tensor& other) const;                   ///< ag::minimum
Tensor max(const Tensor& other) const;                       ///< ag::maximum (LibTorch's max(other))
Tensor min(const Tensor& other) const;                       ///< ag::minimum (LibTorch's min(other))
Tensor floor_divide(const Tensor& other) const;              ///< ag::floor_divide
Tensor floor_divide(Scalar other) const;                     ///< ag::floor_divide
Tensor fmod(const Tensor& other) const;                      ///< ag::fmod
Tensor fmod(Scalar other) const;                             ///< ag::fmod
Tensor remainder(const Tensor& other) const;                 ///< ag::remainder
Tensor remainder(Scalar other) const;                        ///< ag::remainder
Tensor atan2(const Tensor& other) const;                     ///< ag::atan2
Tensor copysign(const Tensor& other) const;                  ///< ag::copysign
Tensor logaddexp(const Tensor& other) const;                 ///< ag::logaddexp
Tensor lerp(const Tensor& end, Scalar weight) const;         ///< ag::lerp
Tensor lerp(const Tensor& end, const Tensor& weight) const;  ///< ag::lerp
Tensor matmul(const Tensor& other) const;                    ///< ag::matmul
// comparison, logic, selection (attograd/ops/comparison.h)
Tensor eq(const Tensor& other) const;  ///< ag::eq
Tensor eq(Scalar other) const;         ///< ag::eq
Tensor ne(const Tensor& other) const;  ///< ag::ne
Tensor ne(Scalar other) const;         ///< ag::ne
Tensor lt(const Tensor& other) const;  ///< ag::lt
Tensor lt(Scalar other) const;         ///< ag::lt
Tensor le(const Tensor& other) const;  ///< ag::le
Tensor le(Scalar other) const;         ///< ag::le
Tensor gt(const Tensor& other) const;  ///< ag::gt
Tensor gt(Scalar other) const;         ///< ag::gt
Tensor ge(const Tensor& other) const;  ///< ag::ge
Tensor ge(Scalar other) const;         ///< ag::ge
/// ag::isclose
Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
Tensor isfinite() const;                                           ///< ag::isfinite
Tensor isinf() const;                                              ///< ag::isinf
Tensor isnan() const;                                              ///< ag::isnan
Tensor logical_not() const;                                        ///< ag::logical_not
Tensor logical_and(const Tensor& other) const;                     ///< ag::logical_and
Tensor logical_or(const Tensor& other) const;                      ///< ag::logical_or
Tensor logical_xor(const Tensor& other) const;                     ///< ag::logical_xor
Tensor bitwise_and(const Tensor& other) const;                     ///< ag::bitwise_and
Tensor bitwise_or(const Tensor& other) const;                      ///< ag::bitwise_or
Tensor bitwise_xor(const Tensor& other) const;                     ///< ag::bitwise_xor
Tensor bitwise_not() const;                                        ///< ag::bitwise_not
Tensor where(const Tensor& condition, const Tensor& other) const;  ///< ag::where(condition, self, other)
// softmax (attograd/ops/softmax.h); dtype converts self first, as LibTorch's
Tensor softmax(int64_t dim, std::optional<DType> dtype = {}) const;      ///< ag::softmax
Tensor log_softmax(int64_t dim, std::optional<DType> dtype = {}) const;  ///< ag::log_softmax
// reductions (attograd/ops/reduction.h)
/// ag::sum over one dim
Tensor sum(detail::SingleDim auto dim, bool keepdim = false) const {
  return sum(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
/// ag::mean over one dim
Tensor mean(detail::SingleDim auto dim, bool keepdim = false) const {
  return mean(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
Tensor var() const;  ///< ag::var over every element, unbiased
/// ag::var over every element; unbiased = false is correction 0. Only a bool binds here, so
/// that x.var({0}) is a dim list (and x.var(0) a dim).
Tensor var(std::same_as<bool> auto unbiased) const { return var(std::vector<int64_t>{}, unbiased); }
/// ag::var over dims; unbiased = correction 1.
Tensor var(const std::vector<int64_t>& dim, bool unbiased = true, bool keepdim = false) const;
/// The same over one dim (x.f(0)).
Tensor var(detail::SingleDim auto dim, bool unbiased = true, bool keepdim = false) const {
  return var(std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased, keepdim);
}
Tensor std() const;  ///< ag::std over every element, unbiased
/// ag::std over every element; unbiased = false is correction 0. Only a bool binds here, so
/// that x.std({0}) is a dim list (and x.std(0) a dim).
Tensor std(std::same_as<bool> auto unbiased) const { return std(std::vector<int64_t>{}, unbiased); }
/// ag::std over dims; unbiased = correction 1.
Tensor std(const std::vector<int64_t>& dim, bool unbiased = true, bool keepdim = false) const;
/// The same over one dim (x.f(0)).
Tensor std(detail::SingleDim auto dim, bool unbiased = true, bool keepdim = false) const {
  return std(std::vector<int64_t>{static_cast<int64_t>(dim)}, unbiased, keepdim);
}
Tensor logsumexp(const std::vector<int64_t>& dim, bool keepdim = false) const;  ///< ag::logsumexp
/// The same over one dim (x.f(0)).
Tensor logsumexp(detail::SingleDim auto dim, bool keepdim = false) const {
  return logsumexp(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
Tensor amax(const std::vector<int64_t>& dim = {}, bool keepdim = false) const;  ///< ag::amax
/// The same over one dim (x.f(0)).
Tensor amax(detail::SingleDim auto dim, bool keepdim = false) const {
  return amax(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
Tensor amin(const std::vector<int64_t>& dim = {}, bool keepdim = false) const;  ///< ag::amin
/// The same over one dim (x.f(0)).
Tensor amin(detail::SingleDim auto dim, bool keepdim = false) const {
  return amin(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
Tensor max() const;                                                      ///< ag::max over every element
std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  ///< ag::max: (values, indices)
Tensor min() const;                                                      ///< ag::min over every element
std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;  ///< ag::min: (values, indices)
/// ag::argmax along dim; without dim, of the flattened tensor.
Tensor argmax(std::optional<int64_t> dim = {}, bool keepdim = false) const;
/// ag::argmin along dim; without dim, of the flattened tensor.
Tensor argmin(std::optional<int64_t> dim = {}, bool keepdim = false) const;
Tensor prod() const;                                   ///< ag::prod over every element
Tensor prod(int64_t dim, bool keepdim = false) const;  ///< ag::prod along dim
Tensor any() const;                                    ///< ag::any
Tensor any(int64_t dim, bool keepdim = false) const;   ///< ag::any along dim
Tensor all() const;                                    ///< ag::all
Tensor all(int64_t dim, bool keepdim = false) const;   ///< ag::all along dim
/// ag::norm (the p-norm over every element).
Tensor norm(double p = 2) const;
/// ag::norm over dims; p absent = 2.
Tensor norm(std::optional<double> p, const std::vector<int64_t>& dim, bool keepdim = false) const;
/// The same over one dim (x.f(0)).
Tensor norm(std::optional<double> p, detail::SingleDim auto dim, bool keepdim = false) const {
  return norm(p, std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
}
// scans and sorting (attograd/ops/scan_sort.h); dtype converts self first
Tensor cumsum(int64_t dim, std::optional<DType> dtype = {}) const;                ///< ag::cumsum
Tensor cumprod(int64_t dim, std::optional<DType> dtype = {}) const;               ///< ag::cumprod
Tensor logcumsumexp(int64_t dim) const;                                           ///< ag::logcumsumexp
std::pair<Tensor, Tensor> cummax(int64_t dim) const;                              ///< ag::cummax
std::pair<Tensor, Tensor> cummin(int64_t dim) const;                              ///< ag::cummin
std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;  ///< ag::sort
/// ag::sort (always stable).
std::pair<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1, bool descending = false) const;
/// The same with a bool stable: x.sort(true, 0) is stable along dim 0 (with LibTorch's
/// overloads alone, true would be read as dim 1).
std::pair<Tensor, Tensor> sort(std::same_as<bool> auto stable, int64_t dim = -1, bool descending = false) const {
  return sort(std::optional<bool>(stable), dim, descending);
}
Tensor argsort(int64_t dim = -1, bool descending = false) const;  ///< ag::argsort
/// ag::topk: (values, indices).
std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
// shape (attograd/ops/shape.h, view.h)
Tensor repeat(const std::vector<int64_t>& repeats) const;  ///< ag::repeat
Tensor tile(const std::vector<int64_t>& dims) const;       ///< ag::tile
/// ag::repeat_interleave with one count per slice.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = {}) const;
Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = {}) const;  ///< ag::repeat_interleave
Tensor flip(const std::vector<int64_t>& dims) const;                               ///< ag::flip
/// The same over one dim (x.f(0)).
Tensor flip(detail::SingleDim auto dim) const { return flip(std::vector<int64_t>{static_cast<int64_t>(dim)}); }
/// ag::roll; with dims empty, of the flattened tensor.
Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {}) const;
/// ag::roll by one shift (along dim, or of the flattened tensor).
Tensor roll(detail::SingleDim auto shift, std::optional<int64_t> dim = {}) const {
  return roll(std::vector<int64_t>{static_cast<int64_t>(shift)},
              dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{});
}
Tensor tril(int64_t diagonal = 0) const;                                        ///< ag::tril
Tensor triu(int64_t diagonal = 0) const;                                        ///< ag::triu
Tensor diag(int64_t diagonal = 0) const;                                        ///< ag::diag
Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;  ///< ag::diagonal (a view)
Tensor movedim(const std::vector<int64_t>& source, const std::vector<int64_t>& destination) const;  ///< ag::movedim
Tensor movedim(int64_t source, int64_t destination) const;                                          ///< ag::movedim
Tensor unflatten(int64_t dim, const std::vector<int64_t>& sizes) const;                             ///< ag::unflatten
std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;                      ///< ag::split (views)
std::vector<Tensor> split(const std::vector<int64_t>& split_size, int64_t dim = 0) const;  ///< ag::split
std::vector<Tensor> split_with_sizes(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const;  ///< ag::split
std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;  ///< ag::chunk (views)
// indexing (attograd/ops/indexing.h)
Tensor index_select(int64_t dim, const Tensor& index) const;                    ///< ag::index_select
Tensor gather(int64_t dim, const Tensor& index) const;                          ///< ag::gather
Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;      ///< ag::scatter
Tensor scatter(int64_t dim, const Tensor& index, Scalar value) const;           ///< ag::scatter
Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;  ///< ag::scatter_add
/// ag::index_add: self.select(dim, index[j]) += alpha * source.select(dim, j).
Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1) const;
Tensor masked_fill(const Tensor& mask, Scalar value) const;             ///< ag::masked_fill
Tensor masked_select(const Tensor& mask) const;                         ///< ag::masked_select
Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;  ///< ag::masked_scatter
// random (attograd/ops/random.h)
/// ag::multinomial (default generator when gen is null).
Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* gen = nullptr) const;
// in place (ops/inplace.cpp), as the out-of-place forms; the rules of the in-place
// section above apply (recorded in the graph, refused on a leaf that requires grad)
Tensor& abs_();                        ///< in place: abs
Tensor& sign_();                       ///< in place: sign
Tensor& square_();                     ///< in place: square
Tensor& sqrt_();                       ///< in place: sqrt
Tensor& rsqrt_();                      ///< in place: rsqrt
Tensor& exp2_();                       ///< in place: exp2
Tensor& expm1_();                      ///< in place: expm1
Tensor& log_();                        ///< in place: log
Tensor& log2_();                       ///< in place: log2
Tensor& log10_();                      ///< in place: log10
Tensor& log1p_();                      ///< in place: log1p
Tensor& sin_();                        ///< in place: sin
Tensor& cos_();                        ///< in place: cos
Tensor& tan_();                        ///< in place: tan
Tensor& asin_();                       ///< in place: asin
Tensor& acos_();                       ///< in place: acos
Tensor& atan_();                       ///< in place: atan
Tensor& sinh_();                       ///< in place: sinh
Tensor& cosh_();                       ///< in place: cosh
Tensor& asinh_();                      ///< in place: asinh
Tensor& acosh_();                      ///< in place: acosh
Tensor& atanh_();                      ///< in place: atanh
Tensor& erf_();                        ///< in place: erf
Tensor& floor_();                      ///< in place: floor
Tensor& ceil_();                       ///< in place: ceil
Tensor& round_();                      ///< in place: round
Tensor& trunc_();                      ///< in place: trunc
Tensor& frac_();                       ///< in place: frac
Tensor& pow_(const Tensor& exponent);  ///< in place: pow (exponent broadcasts to self)
Tensor& pow_(Scalar exponent);         ///< in place: pow
Tensor& tril_(int64_t diagonal = 0);   ///< in place: tril
Tensor& triu_(int64_t diagonal = 0);   ///< in place: triu
