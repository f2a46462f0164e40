// Type promotion against PyTorch 1.13: for every pair of operands from {bool, i32, i64,
// f32, f64} x {dimensioned tensor (3,), 0-d tensor} plus Python-like bool / int / float
// scalars, the result dtype and values of add, mul, div, eq, lt and where, from the table
// tools/type_promotion_reference.py generated (tests/ops/type_promotion_table.inc). Then
// gradients of mixed-dtype ops come back in each input's own dtype.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <cmath>
#include <string>
#include <vector>

#include "tensor_checks.h"

using ag::DType;
using ag::Scalar;
using ag::Shape;
using ag::Tensor;
using tc::diff;

namespace {

// ERR: PyTorch raises (no such pair today; kept so the generator's output always parses).
enum Want { B8, I32, I64, F32, F64, BF16, F16, ERR };
DType to_dtype(Want w) {
  switch (w) {
    case B8: return DType::b8;
    case I32: return DType::i32;
    case I64: return DType::i64;
    case F32: return DType::f32;
    case F64: return DType::f64;
    case BF16: return DType::bf16;
    case F16: return DType::f16;
    case ERR: break;
  }
  return DType::b8;
}

struct Cell {
  Want dtype;
  std::vector<double> values;
};
struct Row {
  const char* a;  // "t:f32" (3,) tensor, "z:i64" 0-d tensor, "s:float" scalar
  const char* b;
  Cell cells[6];  // add, mul, div, eq, lt, where
};

const Row kTable[] = {
#include "type_promotion_table.inc"
};
const char* const kOps[] = {"add", "mul", "div", "eq", "lt", "where"};

// torch.result_type for the pairs with a bf16 or f16 operand (the ops do not compute on
// them yet, so dtypes only): tools/type_promotion_reference.py --half.
struct HalfRow {
  const char* a;
  const char* b;
  Want dtype;
};
const HalfRow kHalfTable[] = {
#include "type_promotion_half.inc"
};

// An operand: a tensor or a scalar. Values as in the generator: first operand "a", second "b".
struct Operand {
  bool is_scalar = false;
  Tensor t;
  Scalar s = 0.0;
};

Operand make(const std::string& spec, bool first) {
  std::string kind = spec.substr(0, 1), d = spec.substr(2);
  std::string cat = d == "bool" ? "bool" : (d == "float" || d[0] == 'f') ? "float" : "int";
  std::vector<double> v = cat == "bool" ? (first ? std::vector<double>{1, 0, 1} : std::vector<double>{1, 1, 0})
                          : cat == "int"
                              ? (first ? std::vector<double>{7, -3, 4} : std::vector<double>{2, 5, -3})
                              : (first ? std::vector<double>{1.5, -2.25, 3.0} : std::vector<double>{2.0, 0.5, -4.0});
  Operand o;
  if (kind == "s") {
    o.is_scalar = true;
    if (cat == "bool")
      o.s = v[0] != 0;
    else if (cat == "int")
      o.s = static_cast<int64_t>(v[0]);
    else
      o.s = v[0];
    return o;
  }
  DType dt = d == "bool"  ? DType::b8
             : d == "i32" ? DType::i32
             : d == "i64" ? DType::i64
             : d == "f32" ? DType::f32
                          : DType::f64;
  o.t = kind == "z" ? ag::full(Shape{}, v[0], dt) : Tensor::from_vector(v).to(dt);
  return o;
}

// The C++ spelling of each op; a scalar first operand uses the reflected op, as Python does.
Tensor run(int op, const Operand& a, const Operand& b) {
  static const Tensor cond = Tensor::from_vector(std::vector<bool>{true, false, true});
  if (a.is_scalar) {
    switch (op) {
      case 0: return a.s + b.t;
      case 1: return a.s * b.t;
      case 2: return a.s / b.t;
      case 3: return ag::eq(b.t, a.s);
      case 4: return ag::gt(b.t, a.s);  // s < t
      default: return ag::where(cond, a.s, b.t);
    }
  }
  if (b.is_scalar) {
    switch (op) {
      case 0: return a.t + b.s;
      case 1: return a.t * b.s;
      case 2: return a.t / b.s;
      case 3: return ag::eq(a.t, b.s);
      case 4: return ag::lt(a.t, b.s);
      default: return ag::where(cond, a.t, b.s);
    }
  }
  switch (op) {
    case 0: return a.t + b.t;
    case 1: return a.t * b.t;
    case 2: return a.t / b.t;
    case 3: return ag::eq(a.t, b.t);
    case 4: return ag::lt(a.t, b.t);
    default: return ag::where(cond, a.t, b.t);
  }
}

// Same values up to float rounding; NaNs match NaNs and infinities match themselves.
std::string compare_values(const Tensor& got, const std::vector<double>& want) {
  std::vector<double> g = got.to_vector<double>();
  if (g.size() != want.size()) return "got " + std::to_string(g.size()) + " values";
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(g[i])) continue;
    if (g[i] == want[i]) continue;
    if (std::isinf(want[i]) || !(std::fabs(g[i] - want[i]) <= 1e-6 * std::fabs(want[i])))
      return "element " + std::to_string(i) + ": got " + std::to_string(g[i]) + ", want " + std::to_string(want[i]);
  }
  return "";
}

}  // namespace

TEST_CASE("promotion table: add, mul, div, eq, lt, where against PyTorch 1.13") {
  int checked = 0;
  for (const Row& row : kTable) {
    Operand a = make(row.a, true), b = make(row.b, false);
    for (int op = 0; op < 6; ++op) {
      CAPTURE(row.a);
      CAPTURE(row.b);
      CAPTURE(kOps[op]);
      const Cell& c = row.cells[op];
      if (c.dtype == ERR) {
        CHECK_THROWS(run(op, a, b));
        continue;
      }
      Tensor r = run(op, a, b);
      CHECK(r.dtype() == to_dtype(c.dtype));
      CHECK(compare_values(r, c.values) == "");
      ++checked;
    }
    // torch.result_type is add's dtype
    if (!a.is_scalar && !b.is_scalar) CHECK(ag::result_type(a.t, b.t) == to_dtype(row.cells[0].dtype));
    if (!a.is_scalar && b.is_scalar) CHECK(ag::result_type(a.t, b.s) == to_dtype(row.cells[0].dtype));
    if (a.is_scalar) CHECK(ag::result_type(a.s, b.t) == to_dtype(row.cells[0].dtype));
  }
  CHECK(checked == 160 * 6);
}

TEST_CASE("promotion: the brief's examples, promote_types and Scalar kinds") {
  Tensor i64 = ag::arange(3), i32 = ag::arange(3, DType::i32);
  CHECK((i64 * 0.5).dtype() == DType::f32);
  CHECK((i32 + 2).dtype() == DType::i32);
  CHECK((i32 + i64).dtype() == DType::i64);
  CHECK((ag::ones({3}) + ag::scalar_tensor(1.0, DType::f64)).dtype() == DType::f32);
  CHECK((ag::ones({3}) + ag::ones({3}, DType::f64)).dtype() == DType::f64);
  CHECK((ag::ones({3}) + i64).dtype() == DType::f32);
  Tensor t = ag::full({2}, true);
  CHECK((t + t).dtype() == DType::b8);
  CHECK((t + 1).dtype() == DType::i64);
  CHECK(ag::promote_types(DType::i64, DType::f32) == DType::f32);
  CHECK(ag::promote_types(DType::b8, DType::i32) == DType::i32);
  CHECK(ag::promote_types(DType::f64, DType::i32) == DType::f64);
  CHECK(Scalar(true).is_boolean());
  CHECK(Scalar(3).is_integral());
  CHECK(Scalar(3u).to_int() == 3);
  CHECK(Scalar(2.5f).is_floating_point());
  CHECK(Scalar(-2.5).to_int() == -2);
  CHECK(Scalar(int64_t{1} << 62).to_int() == int64_t{1} << 62);
  // f32 tensor == 0.1 compares in f32, as PyTorch does
  CHECK(ag::all(ag::eq(Tensor::from_vector(std::vector<float>{0.1f}), 0.1)).item<bool>());
  // sub on bools is refused (PyTorch too); maximum / minimum of bools are or / and
  CHECK_THROWS_AS(t - t, ag::DTypeError);
  CHECK(ag::maximum(Tensor::from_vector(std::vector<bool>{true, false}), ag::full({2}, false)).dtype() == DType::b8);
}

// ---- gradients of mixed-dtype ops come back in each input's own dtype ---------------------

TEST_CASE("promotion grads: f32 leaf * f64 leaf; f32 (3,) * f64 0-d; where") {
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3}).requires_grad_();
  Tensor b = Tensor::from_vector(std::vector<double>{0.5, -1, 4}).requires_grad_();
  Tensor y = a * b;  // f64 (3,)
  CHECK(y.dtype() == DType::f64);
  y.sum().backward();
  CHECK(a.grad().dtype() == DType::f32);
  CHECK(diff(a.grad(), {0.5, -1, 4}) == "");
  CHECK(b.grad().dtype() == DType::f64);
  CHECK(diff(b.grad(), {1, 2, 3}) == "");

  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3}).requires_grad_();
  Tensor s = ag::scalar_tensor(2.0, DType::f64).requires_grad_();
  Tensor z = x * s;  // f32: a 0-d tensor does not raise a dimensioned tensor's float dtype
  CHECK(z.dtype() == DType::f32);
  z.sum().backward();
  CHECK(s.grad().dtype() == DType::f64);
  CHECK(s.grad().item<double>() == 6.0);  // sum(x)
  CHECK(diff(x.grad(), {2, 2, 2}) == "");

  Tensor p = Tensor::from_vector(std::vector<float>{1, 2}).requires_grad_();
  Tensor q = Tensor::from_vector(std::vector<double>{3, 4}).requires_grad_();
  ag::where(Tensor::from_vector(std::vector<bool>{true, false}), p, q).sum().backward();
  CHECK(p.grad().dtype() == DType::f32);
  CHECK(diff(p.grad(), {1, 0}) == "");
  CHECK(q.grad().dtype() == DType::f64);
  CHECK(diff(q.grad(), {0, 1}) == "");
}

TEST_CASE("promotion grads: f64 leaf with integer tensors and scalars (gradcheck)") {
  Tensor n = Tensor::from_vector(std::vector<int64_t>{2, -3, 5});
  Tensor x = Tensor::from_vector(std::vector<double>{0.7, -1.2, 2.5}).requires_grad_();
  Tensor y = x * n;
  CHECK(y.dtype() == DType::f64);
  y.sum().backward();
  CHECK(x.grad().dtype() == DType::f64);
  CHECK(diff(x.grad(), {2, -3, 5}) == "");
  // x * n + x / n - n / x + maximum(x, n) + pow(x, 2) / 3, all promoted to f64
  auto fn = [n](const std::vector<Tensor>& in) {
    const Tensor& v = in[0];
    return v * n + v / n - n / v + ag::maximum(v, n) + ag::pow(v, 2) / 3 + ag::where(ag::gt(n, 0), v, n);
  };
  auto r = ag::gradcheck(fn, {Tensor::from_vector(std::vector<double>{0.7, -1.2, 2.5}).requires_grad_()});
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_CASE("where with two scalar branches takes the scalars' dtype (torch 1.13)") {
  ag::Tensor c = ag::gt(ag::Tensor::from_vector(std::vector<double>{1, -1}), 0.0);
  ag::Tensor f = ag::where(c, 1.0, 0.0);  // torch.where(c, 1.0, 0.0).dtype == float32
  CHECK(f.dtype() == ag::DType::f32);
  CHECK(f.to_vector<double>() == std::vector<double>{1, 0});
  CHECK(ag::where(c, 2, -3).dtype() == ag::DType::i64);  // int64 for two ints
  CHECK(ag::where(c, 2, 0.5).dtype() == ag::DType::f32);
  CHECK(ag::where(c, true, false).dtype() == ag::DType::b8);
}

TEST_CASE("promotion table: result_type with bf16 and f16 against PyTorch 1.13") {
  // An operand of the half table: "t:bf16" (3,) tensor, "z:f16" 0-d tensor, "s:int" scalar.
  auto dtype_of = [](const std::string& d) {
    return d == "bool"   ? DType::b8
           : d == "i32"  ? DType::i32
           : d == "i64"  ? DType::i64
           : d == "f32"  ? DType::f32
           : d == "f64"  ? DType::f64
           : d == "bf16" ? DType::bf16
                         : DType::f16;
  };
  auto operand = [&](const std::string& spec) {
    Operand o;
    const std::string kind = spec.substr(0, 1), d = spec.substr(2);
    if (kind == "s") {
      o.is_scalar = true;
      o.s = d == "bool" ? Scalar(true) : d == "int" ? Scalar(int64_t{2}) : Scalar(0.5);
    } else {
      o.t = ag::zeros(kind == "z" ? Shape{} : Shape{3}, dtype_of(d));
    }
    return o;
  };
  int checked = 0;
  for (const HalfRow& row : kHalfTable) {
    CAPTURE(row.a);
    CAPTURE(row.b);
    Operand a = operand(row.a), b = operand(row.b);
    const DType got = a.is_scalar   ? ag::result_type(a.s, b.t)
                      : b.is_scalar ? ag::result_type(a.t, b.s)
                                    : ag::result_type(a.t, b.t);
    CHECK(got == to_dtype(row.dtype));
    ++checked;
  }
  CHECK(checked == 120);
  // promote_types: bf16 with f16 is f32, the halves beat bool and the integers.
  CHECK(ag::promote_types(DType::bf16, DType::f16) == DType::f32);
  CHECK(ag::promote_types(DType::f16, DType::bf16) == DType::f32);
  CHECK(ag::promote_types(DType::i64, DType::bf16) == DType::bf16);
  CHECK(ag::promote_types(DType::f16, DType::b8) == DType::f16);
  CHECK(ag::promote_types(DType::f16, DType::f64) == DType::f64);
  CHECK(ag::promote_types(DType::f32, DType::bf16) == DType::f32);
}
