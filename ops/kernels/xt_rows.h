#pragma once
// xtensor over one contiguous row of raw memory: lets a kernel use xtensor's (xsimd
// vectorized) math on each contiguous row that for_each_row hands it.
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include <array>
#include <cstdint>

namespace ag::kernels {

template <class T>
auto xrow(T* p, int64_t n) {
  auto len = static_cast<std::size_t>(n);
  return xt::adapt(p, len, xt::no_ownership(), std::array<std::size_t, 1>{len});
}

}  // namespace ag::kernels
