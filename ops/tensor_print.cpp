// Tensor::to_string and operator<< (declared in attograd/tensor.h, core): the values come
// through to_vector, a method of this layer, so printing lives here with the other
// computing Tensor methods (tensor_methods.cpp).
// Printing in PyTorch's style: tensor([[1., 2.],
//                                      [3., 4.]], dtype=f64)
// Floats use 4 decimals, "1." when every value is whole, scientific for wide ranges.
// Tensors over 1000 elements show the first and last 3 entries of each dim.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "attograd/tape.h"
#include "attograd/tensor.h"

namespace ag {
namespace {

struct Format {
  enum Kind { integer_valued, fixed, scientific, integral, boolean } kind = fixed;
  int width = 1;
};

std::string format_value(double v, const Format& f) {
  std::ostringstream os;
  switch (f.kind) {
    case Format::boolean: os << (v != 0 ? "True" : "False"); break;
    case Format::integral: os << static_cast<int64_t>(v); break;
    case Format::integer_valued:
      if (std::isfinite(v))
        os << std::fixed << std::setprecision(0) << v << '.';
      else
        os << (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
      break;
    case Format::fixed:
      if (std::isfinite(v))
        os << std::fixed << std::setprecision(4) << v;
      else
        os << (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
      break;
    case Format::scientific:
      if (std::isfinite(v))
        os << std::scientific << std::setprecision(4) << v;
      else
        os << (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
      break;
  }
  return os.str();
}

Format choose_format(const std::vector<double>& vals, DType dt) {
  Format f;
  if (dt == DType::b8)
    f.kind = Format::boolean;
  else if (!is_floating(dt))
    f.kind = Format::integral;
  else {
    bool whole = true;
    double max_abs = 0, min_abs = INFINITY;
    for (double v : vals) {
      if (!std::isfinite(v)) continue;
      whole = whole && v == std::round(v);
      double a = std::abs(v);
      max_abs = std::max(max_abs, a);
      if (a > 0) min_abs = std::min(min_abs, a);
    }
    if (max_abs >= 1e8 || (min_abs < 1e-4) || (min_abs < INFINITY && max_abs / min_abs > 1e3))
      f.kind = whole && max_abs < 1e8 ? Format::integer_valued : Format::scientific;
    else
      f.kind = whole ? Format::integer_valued : Format::fixed;
  }
  for (double v : vals) f.width = std::max<int>(f.width, format_value(v, f).size());
  return f;
}

struct Printer {
  const Shape& shape;
  const std::vector<double>& vals;
  Strides st;
  bool summarize;
  Format fmt;

  // Indices of dim d to show; -1 marks the "..." gap.
  std::vector<int64_t> shown(int64_t d) const {
    std::vector<int64_t> idx;
    int64_t n = shape[d];
    if (summarize && n > 6) {
      for (int64_t i = 0; i < 3; ++i) idx.push_back(i);
      idx.push_back(-1);
      for (int64_t i = n - 3; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void print(std::ostream& os, int64_t d, int64_t base, int indent) const {
    if (d == shape.size()) {
      os << std::setw(fmt.width) << format_value(vals[base], fmt);
      return;
    }
    os << '[';
    auto idx = shown(d);
    for (std::size_t j = 0; j < idx.size(); ++j) {
      if (j) {
        os << ',';
        if (d + 1 == shape.size())
          os << ' ';
        else
          os << std::string(shape.size() - d - 1, '\n') << std::string(indent + 1, ' ');
      }
      if (idx[j] < 0)
        os << "...";
      else
        print(os, d + 1, base + idx[j] * st[d], indent + 1);
    }
    os << ']';
  }
};

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  std::vector<double> all = to_vector<double>();
  std::ostringstream os;
  os << "tensor(";
  if (numel() == 0) {
    os << "[]";
    if (dim() != 1) os << ", size=" << shape();
  } else {
    bool summarize = numel() > 1000;
    Printer p{shape(), all, contiguous_strides(shape()), summarize, {}};
    std::vector<double> sample;  // format from the values that will be shown
    if (summarize) {
      for (std::size_t i = 0; i < all.size() && i < 500; ++i) sample.push_back(all[i]);
      for (std::size_t i = all.size() > 500 ? all.size() - 500 : 0; i < all.size(); ++i) sample.push_back(all[i]);
    }
    p.fmt = choose_format(summarize ? sample : all, dtype());
    p.print(os, 0, 0, 7);
  }
  if (dtype() == DType::f64 || dtype() == DType::i32 || is_reduced_float(dtype())) os << ", dtype=" << dtype();
  if (grad_fn())
    os << ", grad_fn=<" << grad_fn()->name << '>';
  else if (requires_grad())
    os << ", requires_grad=True";
  os << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace ag
