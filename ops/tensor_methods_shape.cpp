// Tensor's shape, indexing and random methods (declared in
// attograd/detail/tensor_method_decls.inl, included by attograd/tensor.h). Each forwards to
// the differentiable free function of the same name.
#include "attograd/ops.h"

namespace ag {

// ---- shape ----
Tensor Tensor::repeat(const std::vector<int64_t>& r) const { return ag::repeat(*this, r); }
Tensor Tensor::tile(const std::vector<int64_t>& d) const { return ag::tile(*this, d); }
Tensor Tensor::repeat_interleave(const Tensor& r, std::optional<int64_t> d) const {
  return ag::repeat_interleave(*this, r, d);
}
Tensor Tensor::repeat_interleave(int64_t r, std::optional<int64_t> d) const {
  return ag::repeat_interleave(*this, r, d);
}
Tensor Tensor::flip(const std::vector<int64_t>& d) const { return ag::flip(*this, d); }
Tensor Tensor::roll(const std::vector<int64_t>& s, const std::vector<int64_t>& d) const {
  return ag::roll(*this, s, d);
}
Tensor Tensor::tril(int64_t diagonal) const { return ag::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ag::triu(*this, diagonal); }
Tensor Tensor::diag(int64_t diagonal) const { return ag::diag(*this, diagonal); }
Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2) const { return ag::diagonal(*this, offset, d1, d2); }
Tensor Tensor::movedim(const std::vector<int64_t>& s, const std::vector<int64_t>& d) const {
  return ag::movedim(*this, s, d);
}
Tensor Tensor::movedim(int64_t s, int64_t d) const { return ag::movedim(*this, s, d); }
Tensor Tensor::unflatten(int64_t d, const std::vector<int64_t>& sizes) const { return ag::unflatten(*this, d, sizes); }
std::vector<Tensor> Tensor::split(int64_t size, int64_t d) const { return ag::split(*this, size, d); }
std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t d) const {
  return ag::split(*this, sizes, d);
}
std::vector<Tensor> Tensor::split_with_sizes(const std::vector<int64_t>& sizes, int64_t d) const {
  return ag::split(*this, sizes, d);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const { return ag::chunk(*this, chunks, d); }

// ---- indexing ----
Tensor Tensor::index_select(int64_t d, const Tensor& index) const { return ag::index_select(*this, d, index); }
Tensor Tensor::gather(int64_t d, const Tensor& index) const { return ag::gather(*this, d, index); }
Tensor Tensor::scatter(int64_t d, const Tensor& index, const Tensor& src) const {
  return ag::scatter(*this, d, index, src);
}
Tensor Tensor::scatter(int64_t d, const Tensor& index, Scalar value) const {
  return ag::scatter(*this, d, index, value.to_double());
}
Tensor Tensor::scatter_add(int64_t d, const Tensor& index, const Tensor& src) const {
  return ag::scatter_add(*this, d, index, src);
}
Tensor Tensor::index_add(int64_t d, const Tensor& index, const Tensor& source, Scalar alpha) const {
  return ag::index_add(*this, d, index, source, alpha.to_double());
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return ag::masked_fill(*this, mask, value); }
Tensor Tensor::masked_select(const Tensor& mask) const { return ag::masked_select(*this, mask); }
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return ag::masked_scatter(*this, mask, source);
}

// ---- random ----
Tensor Tensor::multinomial(int64_t n, bool replacement, Generator* gen) const {
  return ag::multinomial(*this, n, replacement, gen);
}

}  // namespace ag
