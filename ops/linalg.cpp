// matmul, linear and einsum.
#include "attograd/ops/linalg.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "attograd/detail/error_context.h"
#include "op_util.h"
#include "attograd/autocast.h"

namespace ag {

// ---- matmul ----------------------------------------------------------------------
// out = a @ b over (..., M, K) x (..., K, N).
//   da = sum_to(g @ b^T, a.shape)   db = sum_to(a^T @ g, b.shape)
// The transposes are views: the kernel hands them to BLAS as transpose flags.
static Tensor matmul_nd(const Tensor& a, const Tensor& b) {
  Tensor out = K::matmul(a, b);
  bool na = wants_grad(a), nb = wants_grad(b);
  return record(
      "matmul", out, {a, b},
      [sa = save_if(nb, a), sb = save_if(na, b), as = a.shape(), bs = b.shape()](const Tensor& g, NeedsGrad need) {
        Grads grads(2);
        if (need[0]) grads[0] = sum_to(matmul(g, transpose(sb.get(), -1, -2)), as);
        if (need[1]) {
          const Tensor& a = sa.get();
          if (bs.size() == 2 && a.dim() > 2) {
            // Shared weight: fold the batch into rows, one GEMM (K, B*M) @ (B*M, N).
            Tensor a2 = reshape(a, {-1, as[as.size() - 1]});
            Tensor g2 = reshape(g, {-1, g.shape()[g.dim() - 1]});
            grads[1] = matmul(transpose(a2, 0, 1), g2);
          } else {
            grads[1] = sum_to(matmul(transpose(a, -1, -2), g), bs);
          }
        }
        return grads;
      });
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  const Tensor a = detail::autocast_lower(a_in), b = detail::autocast_lower(b_in);
  AG_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError, "matmul: shapes ", a.shape(), " and ", b.shape(),
           " cannot be multiplied (0-d operand)");
  AG_CHECK(a.dtype() == b.dtype(), DTypeError, "matmul: dtypes ", a.dtype(), " and ", b.dtype(), " differ (shapes ",
           a.shape(), " and ", b.shape(), ")");
  check_float(a, "matmul");
  const int64_t ka = a.shape()[a.dim() - 1];
  const int64_t kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  AG_CHECK(ka == kb, ShapeError, "matmul: shapes ", a.shape(), " and ", b.shape(), " cannot be multiplied (", ka,
           " != ", kb, ")");
  if (a.dim() == 1 && b.dim() == 1) return reshape(matmul_nd(unsqueeze(a, 0), unsqueeze(b, 1)), {});
  if (a.dim() == 1) return squeeze(matmul_nd(unsqueeze(a, 0), b), -2);
  if (b.dim() == 1) return squeeze(matmul_nd(a, unsqueeze(b, 1)), -1);
  Shape ab(std::vector<int64_t>(a.shape().begin(), a.shape().end() - 2));
  Shape bb(std::vector<int64_t>(b.shape().begin(), b.shape().end() - 2));
  try {
    broadcast_shapes(ab, bb, "matmul");
  } catch (const ShapeError&) {
    throw ShapeError(detail::cat("matmul: batch dims of shapes ", a.shape(), " and ", b.shape(),
                                 " cannot be broadcast (", ab, " vs ", bb, ")"));
  }
  return matmul_nd(a, b);
}

// x (..., in) @ W^T (in, out) + b (out)
Tensor linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in) try {
  const Tensor x = detail::autocast_lower(x_in), weight = detail::autocast_lower(weight_in),
               bias = detail::autocast_lower(bias_in);
  AG_CHECK(weight.dim() == 2, ShapeError, "linear: weight must be 2-D [out, in], got shape ", weight.shape());
  AG_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] == weight.shape()[1], ShapeError, "linear: input shape ", x.shape(),
           " does not match weight shape ", weight.shape(), " (expected last dim ", weight.shape()[1], ")");
  if (bias.defined())
    AG_CHECK(bias.dim() == 1 && bias.shape()[0] == weight.shape()[0], ShapeError, "linear: bias shape ", bias.shape(),
             " does not match weight shape ", weight.shape());
  // Without a graph to build, a decoding step's few rows get the bias inside the product
  // (one op and one pass instead of two; the same bits): 20 of workload 8's ops a token.
  const bool graph =
      grad_enabled() && (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  if (bias.defined() && !graph && x.dtype() == weight.dtype())
    if (Tensor y = kernels::linear_gemv(x, transpose(weight, 0, 1), bias); y.defined()) return y;
  Tensor y = matmul(x, transpose(weight, 0, 1));
  if (!bias.defined()) return y;
  return y + bias;
} catch (const Error& e) { detail::rethrow_in_op("linear", e); }

// ---- einsum ------------------------------------------------------------------------
// einsum as a composite of differentiable ops: diagonal views for repeated letters,
// sums for letters only one operand has, then, left to right, one batched matmul per
// pair of operands: (batch..., M, K) @ (batch..., K, N) after a permute and a reshape
// that merges each group of letters. Gradients (and double backward) come from the ops.
//
// Labels: 'A'-'Z' are 0-25, 'a'-'z' 26-51 (so implicit outputs sort as PyTorch's do);
// the E dims an ellipsis covers (aligned at the right, broadcast) are 52 .. 52+E-1.
namespace {

constexpr int kLetters = 52;

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

std::string label_name(int l) {
  if (l < 26) return std::string("subscript ") + char('A' + l);
  if (l < kLetters) return std::string("subscript ") + char('a' + l - 26);
  return "ellipsis dim " + std::to_string(l - kLetters);
}

// The subscripts of one operand (or of the output); the ellipsis sits before
// labels[ellipsis] when there is one.
struct Term {
  std::vector<int> labels;
  int ellipsis = -1;
};

// A diagonal view: x's dims d0 < d1 (equal sizes n) become one dim at d0 with stride
// s0 + s1.   dx = unsqueeze(g, d1) * eye(n) placed at (d0, d1)
Tensor diagonal_view(const Tensor& x, int64_t d0, int64_t d1) {
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t n = s[d0];
  st[d0] += st[d1];
  s.erase(d1);
  st.erase(d1);
  return record("einsum_diagonal", alias(x, s, st, x.offset()), {x},
                [xs = x.shape(), d0, d1, n](const Tensor& g, NeedsGrad) {
                  Shape ms = Dims::filled(xs.size(), 1);
                  ms[d0] = ms[d1] = n;
                  Tensor eye_mask = eye(n, n, g.dtype()).reshape(ms);  // constant
                  return Grads{unsqueeze(g, d1) * eye_mask};
                });
}

Tensor permute_if(const Tensor& t, const std::vector<int64_t>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return permute(t, perm);
  return t;
}

Tensor reshape_if(const Tensor& t, const Shape& s) { return t.shape() == s ? t : reshape(t, s); }

int64_t position(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}
bool has(const std::vector<int>& labels, int l) { return position(labels, l) < int64_t(labels.size()); }

struct Operand {
  Tensor t;
  std::vector<int> labels;  // one per dim, no repeats (after diagonals)
};

// r (labels batch + M + K) times b (batch + K + N) -> (batch + M + N) with one matmul.
// `later` says which labels are still needed (in the output or a later operand).
Operand contract(Operand r, Operand b, const std::vector<bool>& later) {
  std::vector<int> batch, m, k, n;
  for (int l : r.labels) (has(b.labels, l) ? (later[l] ? batch : k) : m).push_back(l);
  for (int l : b.labels)
    if (!has(r.labels, l)) n.push_back(l);
  // A contracted letter of size 1 on one side broadcasts: sum the other side first.
  for (int l : k) {
    int64_t pr = position(r.labels, l), pb = position(b.labels, l);
    if (r.t.shape()[pr] == b.t.shape()[pb]) continue;
    if (r.t.shape()[pr] == 1)
      b.t = sum(b.t, {pb}, true);
    else
      r.t = sum(r.t, {pr}, true);
  }
  auto group = [](const Tensor& t, const std::vector<int>& labels, std::vector<const std::vector<int>*> parts,
                  std::vector<int64_t>* perm) {
    Shape s;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      int64_t prod = 1;
      for (int l : *parts[p]) {
        int64_t d = position(labels, l);
        perm->push_back(d);
        if (p == 0)
          s.push_back(t.shape()[d]);  // batch dims stay separate (they broadcast)
        else
          prod *= t.shape()[d];
      }
      if (p > 0) s.push_back(prod);
    }
    return s;
  };
  std::vector<int64_t> pr, pb;
  Shape sr = group(r.t, r.labels, {&batch, &m, &k}, &pr);  // (batch..., M, K)
  Shape sb = group(b.t, b.labels, {&batch, &k, &n}, &pb);  // (batch..., K, N)
  Tensor prod = matmul(reshape_if(permute_if(r.t, pr), sr), reshape_if(permute_if(b.t, pb), sb));
  Shape out;  // (batch..., M..., N...)
  for (std::size_t i = 0; i < batch.size(); ++i) out.push_back(prod.shape()[i]);
  for (int l : m) out.push_back(r.t.shape()[position(r.labels, l)]);
  for (int l : n) out.push_back(b.t.shape()[position(b.labels, l)]);
  Operand res{reshape_if(prod, out), batch};
  res.labels.insert(res.labels.end(), m.begin(), m.end());
  res.labels.insert(res.labels.end(), n.begin(), n.end());
  return res;
}

// The equation and its operands, for errors that name both.
struct Equation {
  const std::string& eq;
  const std::vector<Tensor>& ops;
  template <class... What>
  ValueError fail(const What&... what) const {
    std::ostringstream shapes;
    for (std::size_t i = 0; i < ops.size(); ++i) shapes << (i ? ", " : "") << ops[i].shape();
    return ValueError(detail::cat("einsum: ", what..., " (equation \"", eq, "\", operand shapes ", shapes.str(), ")"));
  }
};

// The terms of eq[from, to): one per operand (split at ','), or the output's one.
std::vector<Term> parse_terms(const Equation& q, std::size_t from, std::size_t to, bool output) {
  std::vector<Term> terms(1);
  for (std::size_t i = from; i < to; ++i) {
    const char c = q.eq[i];
    Term& t = terms.back();
    if (c == ' ') continue;
    if (c == ',' && !output) {
      terms.emplace_back();
    } else if (c == '.') {
      const std::string who = output ? "the output" : "operand " + std::to_string(terms.size() - 1);
      if (i + 2 >= to || q.eq[i + 1] != '.' || q.eq[i + 2] != '.')
        throw q.fail("found '.' for ", who, " that is not part of an ellipsis '...'");
      if (t.ellipsis >= 0) throw q.fail("found more than one ellipsis '...' for ", who);
      t.ellipsis = static_cast<int>(t.labels.size());
      i += 2;
    } else if (label_of(c) >= 0) {
      t.labels.push_back(label_of(c));
    } else {
      throw q.fail("invalid subscript '", c, "' at index ", i, " of the equation, subscripts must be in [a-zA-Z]");
    }
  }
  return terms;
}

// Every operand with one label per dim: the ellipsis covers the dims the letters leave,
// labels kLetters .. kLetters + E - 1 (right-aligned, so that they broadcast).
struct Labelled {
  std::vector<Operand> work;
  std::vector<int> count;  // operands' dims carrying each label
  int64_t E = 0;           // the ellipsis's dims
  int nlabels = 0;
};

Labelled label_dims(const Equation& q, const std::vector<Term>& terms) {
  Labelled r;
  for (std::size_t k = 0; k < q.ops.size(); ++k) {
    const int64_t nl = terms[k].labels.size(), nd = q.ops[k].dim();
    if (terms[k].ellipsis < 0 && nd != nl)
      throw q.fail("operand ", k, " has ", nd, " dims but ", nl, " subscripts and no ellipsis");
    if (terms[k].ellipsis >= 0 && nd < nl)
      throw q.fail("operand ", k, " has ", nd, " dims, fewer than its ", nl, " subscripts");
    r.E = std::max(r.E, nd - nl);
  }
  r.nlabels = kLetters + static_cast<int>(r.E);
  std::vector<int64_t> size(r.nlabels, -1);
  r.count.assign(r.nlabels, 0);
  for (std::size_t k = 0; k < q.ops.size(); ++k) {
    const Term& t = terms[k];
    std::vector<int> labels = t.labels;
    if (t.ellipsis >= 0) {
      const int64_t e = q.ops[k].dim() - static_cast<int64_t>(t.labels.size());
      std::vector<int> ell(e);
      std::iota(ell.begin(), ell.end(), kLetters + static_cast<int>(r.E - e));
      labels.insert(labels.begin() + t.ellipsis, ell.begin(), ell.end());
    }
    std::vector<int64_t> here(r.nlabels, -1);  // this operand's size of each label
    for (std::size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t s = q.ops[k].shape()[d];
      if (here[l] >= 0 && here[l] != s)
        throw q.fail(label_name(l), " is repeated for operand ", k, " but the sizes don't match (", here[l], " != ", s,
                     ")");
      if (here[l] < 0 && size[l] >= 0 && s != size[l] && s != 1 && size[l] != 1)
        throw q.fail(label_name(l), " has size ", s, " for operand ", k, ", which does not broadcast with the size ",
                     size[l], " seen before");
      here[l] = s;
      if (size[l] < 0 || size[l] == 1) size[l] = s;
      ++r.count[l];
    }
    r.work.push_back({q.ops[k], labels});
  }
  return r;
}

// The output's labels: after "->" as written (the ellipsis's dims where it stands, summed
// without one, as PyTorch), else the ellipsis's dims and then the letters seen once.
std::vector<int> output_labels(const Equation& q, std::size_t arrow, const Labelled& in) {
  std::vector<int> out;
  if (arrow == std::string::npos) {
    for (int l = kLetters; l < in.nlabels; ++l) out.push_back(l);
    for (int l = 0; l < kLetters; ++l)
      if (in.count[l] == 1) out.push_back(l);
    return out;
  }
  std::vector<Term> o = parse_terms(q, arrow + 2, q.eq.size(), true);
  for (int l : o[0].labels) {
    if (in.count[l] == 0) throw q.fail("output ", label_name(l), " does not appear in any operand");
    if (std::count(o[0].labels.begin(), o[0].labels.end(), l) > 1)
      throw q.fail("output ", label_name(l), " appears more than once");
  }
  out = o[0].labels;
  if (o[0].ellipsis >= 0) {
    std::vector<int> ell(in.E);
    std::iota(ell.begin(), ell.end(), kLetters);
    out.insert(out.begin() + o[0].ellipsis, ell.begin(), ell.end());
  }
  return out;
}

// Diagonals of repeated labels, then sums of the labels no other operand nor the output has.
void reduce_alone(std::vector<Operand>& work, const std::vector<bool>& in_out) {
  for (std::size_t k = 0; k < work.size(); ++k) {
    Operand& w = work[k];
    for (std::size_t i = 0; i < w.labels.size(); ++i)
      for (std::size_t j = w.labels.size() - 1; j > i; --j)
        if (w.labels[j] == w.labels[i]) {
          w.t = diagonal_view(w.t, i, j);
          w.labels.erase(w.labels.begin() + j);
        }
    std::vector<int64_t> lone;
    std::vector<int> kept;
    for (std::size_t d = 0; d < w.labels.size(); ++d) {
      const int l = w.labels[d];
      bool elsewhere = in_out[l];
      for (std::size_t o = 0; o < work.size() && !elsewhere; ++o) elsewhere = o != k && has(work[o].labels, l);
      if (elsewhere)
        kept.push_back(l);
      else
        lone.push_back(static_cast<int64_t>(d));
    }
    if (!lone.empty()) w = {sum(w.t, lone), kept};
  }
}

}  // namespace

Tensor einsum(const std::string& eq, const std::vector<Tensor>& ops) try {
  const Equation q{eq, ops};
  if (ops.empty()) throw q.fail("at least one operand is required");
  const std::size_t arrow = eq.find("->");
  const std::vector<Term> terms = parse_terms(q, 0, arrow == std::string::npos ? eq.size() : arrow, false);
  if (terms.size() != ops.size())
    throw q.fail("the equation has ", terms.size(), " operand(s) but ", ops.size(), " were given");
  for (std::size_t k = 0; k < ops.size(); ++k) {
    AG_CHECK(ops[k].dtype() == ops[0].dtype(), DTypeError, "einsum: operand ", k, " has dtype ", ops[k].dtype(),
             " but operand 0 has ", ops[0].dtype(), " (equation \"", eq, "\")");
    check_float(ops[k], "einsum");
  }
  Labelled in = label_dims(q, terms);
  const std::vector<int> out = output_labels(q, arrow, in);
  std::vector<bool> in_out(in.nlabels, false);
  for (int l : out) in_out[l] = true;
  std::vector<Operand>& work = in.work;
  reduce_alone(work, in_out);

  // Contract left to right; a label stays while a later operand or the output has it.
  Operand r = work[0];
  for (std::size_t k = 1; k < work.size(); ++k) {
    std::vector<bool> later = in_out;
    for (std::size_t o = k + 1; o < work.size(); ++o)
      for (int l : work[o].labels) later[l] = true;
    r = contract(r, work[k], later);
  }
  std::vector<int64_t> perm;
  for (int l : out) perm.push_back(position(r.labels, l));
  AG_ASSERT(perm.size() == r.labels.size(), "einsum: result labels do not match the output");
  // Always a new handle, even for einsum("ij", {x}): the result is a view, never x itself.
  if (r.t.impl() == ops[0].impl()) return permute(r.t, perm);
  return permute_if(r.t, perm);
} catch (const Error& e) { detail::rethrow_in_op("einsum", e); }

}  // namespace ag
