// Property test of layouts (issue 23, "Done when"): random shapes (0..4 dims of 0..5,
// sometimes negative), strides (0, small, huge, sometimes negative), offsets and storage
// sizes (sometimes too small), and views of one storage that overlap. Every public view
// op and every in-place op either throws an ag::Error (anything else fails) or matches a
// reference: a layout's values are read from the storage by index arithmetic here, a
// view op's result is compared with the same op on a contiguous clone, and an in-place
// op's writes with the same op on clones, with every storage element it does not touch
// unchanged. Whether a layout is valid and whether a write overlaps is decided here
// independently (128-bit sums, listing every location) and must match what the library
// does. A fixed seed: a failure names its case number.
#include <doctest/doctest.h>

#include <attograd/attograd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using ag::Dims;
using ag::DType;
using ag::Shape;
using ag::Strides;
using ag::Tensor;

namespace {

constexpr int kCases = 5000;  // ~0.2 s in Release, ~0.5 s under ASan + UBSan
// SEED=n in the environment tries another seed (an empty or bad value: the default).
uint64_t seed() {
  const char* s = std::getenv("SEED");
  const uint64_t n = s ? std::strtoull(s, nullptr, 10) : 0;
  return n ? n : 20231126;
}
std::mt19937_64 rng(seed());

int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(int percent) { return pick(0, 99) < percent; }

// The outcome of one call: its value, or that it threw an ag::Error. Any other exception
// fails the test.
enum class Outcome { ok, error };
template <class F>
Outcome attempt(F&& f, std::string& what) {
  try {
    f();
    return Outcome::ok;
  } catch (const ag::Error& e) {
    what = e.what();
    return Outcome::error;
  } catch (const std::exception& e) { FAIL("an exception that is not an ag::Error escaped: ", e.what()); } catch (...) {
    FAIL("a non-std exception escaped");
  }
  return Outcome::error;
}

struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

// Storage locations of each index, row-major (valid, small layouts only).
std::vector<int64_t> locations(const Layout& l) {
  std::vector<int64_t> out;
  int64_t n = 1;
  for (int64_t s : l.shape) n *= s;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, at = l.offset;
    for (int64_t d = l.shape.size() - 1; d >= 0; --d) {
      at += (rest % l.shape[d]) * l.strides[d];
      rest /= l.shape[d];
    }
    out.push_back(at);
  }
  return out;
}

Layout layout_of(const Tensor& t) { return {t.shape(), t.strides(), t.offset()}; }

__extension__ typedef __int128 i128;  // exact sums of int64 products (GCC and Clang)

// Reference validity, in 128 bits: dims and strides >= 0, offset >= 0, and the last
// reachable element inside the storage (any storage for an empty layout).
bool valid(const Layout& l, int64_t storage_numel) {
  i128 reach = l.offset, n = 1;
  if (l.offset < 0) return false;
  for (int64_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] < 0 || l.strides[d] < 0) return false;
    n *= l.shape[d];
    if (l.shape[d] > 0) reach += i128(l.shape[d] - 1) * l.strides[d];
  }
  return n == 0 || reach < storage_numel;
}

int64_t random_stride() {
  switch (pick(0, 9)) {
    case 0: return 0;
    case 1: return int64_t{1} << 40;
    case 2: return std::numeric_limits<int64_t>::max();
    case 3: return chance(50) ? -1 : -pick(2, 5);
    default: return pick(1, 6);
  }
}

Layout random_layout(int64_t storage_numel) {
  Layout l;
  const int64_t nd = pick(0, 4);
  for (int64_t d = 0; d < nd; ++d) {
    l.shape.push_back(chance(3) ? -pick(1, 2) : pick(0, 5));
    l.strides.push_back(random_stride());
  }
  if (chance(60)) {  // mostly contiguous-ish so that many are valid
    int64_t st = pick(1, 2);
    for (int64_t d = nd - 1; d >= 0; --d) l.strides[d] = st, st *= std::max<int64_t>(l.shape[d], 1);
  }
  l.offset = chance(3)   ? -pick(1, 3)
             : chance(3) ? std::numeric_limits<int64_t>::max() - pick(0, 2)
                         : pick(0, storage_numel);
  return l;
}

// A valid layout over the storage with the given shape (for an operand that overlaps a
// target), or nullopt after a few tries.
std::optional<Layout> layout_with_shape(const Shape& shape, int64_t storage_numel) {
  for (int tries = 0; tries < 8; ++tries) {
    Layout l{shape, Dims::filled(shape.size(), 0), pick(0, storage_numel)};
    for (int64_t d = 0; d < shape.size(); ++d) l.strides[d] = pick(0, 3);
    if (valid(l, storage_numel)) return l;
  }
  return std::nullopt;
}

std::vector<float> storage_values(const Tensor& anchor, int64_t n) {
  const float* p = static_cast<const float*>(anchor.storage()->data());
  return std::vector<float>(p, p + n);
}

// Equal, NaN matching NaN, within a few ulps (a strided operand may take another kernel
// path than a contiguous one, e.g. scalar instead of SIMD exp).
bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])) ||
                      (std::isfinite(b[i]) && std::abs(a[i] - b[i]) <= 1e-5f * (1 + std::abs(b[i])));
    if (!same) return false;
  }
  return true;
}

std::string str(const Layout& l) {
  std::ostringstream os;
  os << "shape " << l.shape << " strides " << l.strides << " offset " << l.offset;
  return os.str();
}

// ---- view ops: each applied to a layout and to its contiguous clone -----------------

using ViewOp = std::function<std::vector<Tensor>(const Tensor&)>;

ViewOp random_view_op(const Tensor& v, std::string& name) {
  const int64_t nd = v.dim();
  const int64_t d = pick(-nd - 1, nd);  // sometimes out of range
  const int64_t d2 = pick(-nd, std::max<int64_t>(nd - 1, 0));
  const int64_t a = pick(-3, 6), b = pick(-3, 6), step = pick(1, 3);
  auto one = [](Tensor t) { return std::vector<Tensor>{t}; };
  Shape target;  // a reshape target of numel v.numel(), or a random one
  if (chance(70)) {
    int64_t n = v.numel();
    for (int64_t f : {2, 3, 5})
      while (n % f == 0 && n > 1 && chance(70)) target.push_back(f), n /= f;
    target.push_back(chance(20) ? -1 : n);
    if (v.numel() == 0) target = Shape{0, pick(1, 3)};
  } else {
    for (int64_t i = pick(0, 3); i > 0; --i) target.push_back(pick(-2, 5));
  }
  std::vector<int64_t> perm(static_cast<std::size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) perm[std::size_t(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Shape expand_to = v.shape();
  for (int64_t i = 0; i < expand_to.size(); ++i)
    if (expand_to[i] == 1 && chance(50)) expand_to[i] = pick(0, 4);
  if (chance(40) && expand_to.size() < ag::kMaxDims) expand_to.insert(0, pick(0, 3));
  switch (pick(0, 21)) {
    case 0: name = "view"; return [=](const Tensor& t) { return one(t.view(target)); };
    case 1: name = "reshape"; return [=](const Tensor& t) { return one(t.reshape(target)); };
    case 2: name = "transpose"; return [=](const Tensor& t) { return one(t.transpose(d, d2)); };
    case 3: name = "permute"; return [=](const Tensor& t) { return one(t.permute(perm)); };
    case 4: name = "narrow"; return [=](const Tensor& t) { return one(t.narrow(d, a, b)); };
    case 5: name = "select"; return [=](const Tensor& t) { return one(t.select(d, a)); };
    case 6: name = "slice"; return [=](const Tensor& t) { return one(t.slice(d, a, b, step)); };
    case 7: name = "expand"; return [=](const Tensor& t) { return one(t.expand(expand_to)); };
    case 8: name = "squeeze"; return [=](const Tensor& t) { return one(t.squeeze()); };
    case 9: name = "squeeze(d)"; return [=](const Tensor& t) { return one(t.squeeze(d)); };
    case 10: name = "unsqueeze"; return [=](const Tensor& t) { return one(t.unsqueeze(d)); };
    case 11: name = "flatten"; return [=](const Tensor& t) { return one(t.flatten(d2, std::max(d, d2))); };
    case 12: name = "unflatten"; return [=](const Tensor& t) { return one(ag::unflatten(t, d, {-1, 1})); };
    case 13: name = "movedim"; return [=](const Tensor& t) { return one(ag::movedim(t, d, d2)); };
    case 14: name = "diagonal"; return [=](const Tensor& t) { return one(ag::diagonal(t, a - 1, d, d2)); };
    case 15: name = "split"; return [=](const Tensor& t) { return ag::split(t, std::max<int64_t>(a, 1), d); };
    case 16: name = "chunk"; return [=](const Tensor& t) { return ag::chunk(t, std::max<int64_t>(b, 1), d); };
    case 17: name = "contiguous"; return [=](const Tensor& t) { return one(t.contiguous()); };
    case 18: name = "clone"; return [=](const Tensor& t) { return one(t.clone()); };
    case 19: name = "to(f64)"; return [=](const Tensor& t) { return one(t.to(DType::f64).to(DType::f32)); };
    case 20: name = "t"; return [=](const Tensor& t) { return one(t.t()); };
    default: name = "detach"; return [=](const Tensor& t) { return one(t.detach()); };
  }
}

// ---- in-place ops: (self, operand, mask) -> self -----------------------------------

struct InplaceOp {
  std::string name;
  bool uses_operand = false;
  std::function<void(Tensor&, const Tensor&, const Tensor&)> apply;
};

InplaceOp random_inplace_op() {
  const double s = double(pick(-3, 3)) / 2;
  switch (pick(0, 18)) {
    case 0: return {"fill_", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.fill_(s); }};
    case 1: return {"zero_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.zero_(); }};
    case 2: return {"copy_", true, [](Tensor& t, const Tensor& o, const Tensor&) { t.copy_(o); }};
    case 3: return {"add_", true, [s](Tensor& t, const Tensor& o, const Tensor&) { t.add_(o, s); }};
    case 4: return {"add_ scalar", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.add_(s); }};
    case 5: return {"sub_", true, [](Tensor& t, const Tensor& o, const Tensor&) { t.sub_(o); }};
    case 6: return {"sub_ scalar", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.sub_(s); }};
    case 7: return {"mul_", true, [](Tensor& t, const Tensor& o, const Tensor&) { t.mul_(o); }};
    case 8: return {"mul_ scalar", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.mul_(s); }};
    case 9: return {"div_", true, [](Tensor& t, const Tensor& o, const Tensor&) { t.div_(o); }};
    case 10: return {"div_ scalar", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.div_(s); }};
    case 11: return {"neg_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.neg_(); }};
    case 12: return {"exp_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.exp_(); }};
    case 13: return {"relu_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.relu_(); }};
    case 14: return {"sigmoid_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.sigmoid_(); }};
    case 15: return {"tanh_", false, [](Tensor& t, const Tensor&, const Tensor&) { t.tanh_(); }};
    case 16: return {"clamp_", false, [s](Tensor& t, const Tensor&, const Tensor&) { t.clamp_(s, s + 1); }};
    case 17: return {"masked_fill_", false, [s](Tensor& t, const Tensor&, const Tensor& m) { t.masked_fill_(m, s); }};
    default: return {"add_ same", true, [](Tensor& t, const Tensor&, const Tensor&) { t.add_(t); }};
  }
}

// Which error the library must raise for writing into `self` from `operand` (broadcast
// to self's shape): internal overlap, partial overlap, or none.
std::string expected_overlap(const Layout& self, const Layout* operand) {
  std::vector<int64_t> at = locations(self);
  if (at.empty()) return "";
  std::set<int64_t> seen(at.begin(), at.end());
  if (seen.size() != at.size()) return "more than one element of the written-to tensor";
  if (operand == nullptr) return "";
  // Broadcast the operand's layout to self's shape (right-aligned, stride 0 on new dims).
  Layout b{self.shape, Dims::filled(self.shape.size(), 0), operand->offset};
  const int64_t lead = self.shape.size() - operand->shape.size();
  for (int64_t i = 0; i < operand->shape.size(); ++i)
    if (operand->shape[i] == self.shape[i + lead]) b.strides[i + lead] = operand->strides[i];
  std::vector<int64_t> bt = locations(b);
  if (bt == at) return "";  // identical: allowed
  for (int64_t x : bt)
    if (seen.count(x)) return "some elements of the input tensor and the written-to tensor";
  return "";
}

}  // namespace

TEST_CASE("random layouts through every view op and in-place op: a typed error or the reference") {
  int64_t made = 0, refused_layouts = 0, view_calls = 0, inplace_calls = 0, overlap_refusals = 0;
  for (int c = 0; c < kCases; ++c) {
    CAPTURE(c);
    const int64_t storage_numel = pick(0, 40);
    std::vector<float> init(static_cast<std::size_t>(storage_numel));
    for (std::size_t i = 0; i < init.size(); ++i) init[i] = float(int64_t(i % 9) - 4) / 2;
    Tensor anchor = Tensor::from_vector(init);  // owns the storage
    const Layout l = random_layout(storage_numel);
    CAPTURE(str(l));
    Tensor v;
    std::string what;
    const Outcome made_ok =
        attempt([&] { v = Tensor(anchor.storage(), l.shape, l.strides, l.offset, DType::f32); }, what);
    REQUIRE_MESSAGE((made_ok == Outcome::ok) == valid(l, storage_numel), what);
    if (made_ok != Outcome::ok) {
      ++refused_layouts;
      continue;
    }
    ++made;
    // Its values, read here from the storage.
    std::vector<float> want;
    for (int64_t at : locations(l)) want.push_back(init[std::size_t(at)]);
    REQUIRE(same_values(v.to_vector<float>(), want));

    // A few view ops, chained (each on the previous result when it is a view).
    Tensor cur = v;
    for (int k = 0; k < 3; ++k) {
      std::string name;
      ViewOp op = random_view_op(cur, name);
      CAPTURE(name);
      std::vector<Tensor> got, ref;
      ++view_calls;
      // Both or neither throw: a view op's arguments are checked against the shape alone,
      // except view's, which also needs strides that allow it.
      const Tensor cc = cur.clone();
      const Outcome strided_outcome = attempt([&] { got = op(cur); }, what);
      std::string ref_what;
      const Outcome ref_outcome = attempt([&] { ref = op(cc); }, ref_what);
      if (strided_outcome == Outcome::error && ref_outcome == Outcome::ok)
        REQUIRE_MESSAGE(name == "view", "refused on the layout only: ", what);
      REQUIRE_MESSAGE(!(strided_outcome == Outcome::ok && ref_outcome == Outcome::error), ref_what);
      if (strided_outcome == Outcome::error) continue;
      REQUIRE(got.size() == ref.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].shape() == ref[i].shape());
        CHECK(same_values(got[i].to_vector<float>(), ref[i].to_vector<float>()));
        if (got[i].shares_storage(anchor)) {  // a view: its own layout reads the same values
          std::vector<float> through;
          for (int64_t at : locations(layout_of(got[i]))) through.push_back(init[std::size_t(at)]);
          CHECK(same_values(got[i].to_vector<float>(), through));
        }
      }
      if (!got.empty() && got[0].shares_storage(anchor)) cur = got[0];
    }

    // An in-place op on the layout (or on a view op's result), with an operand that is
    // sometimes another view of the same storage.
    for (const Tensor& self_in : {v, cur}) {
      Tensor self = self_in;
      if (!self.shares_storage(anchor)) continue;
      InplaceOp op = random_inplace_op();
      CAPTURE(op.name);
      const Layout sl = layout_of(self);
      Tensor operand = ag::full(self.shape(), 0.75);
      std::optional<Layout> ol;
      if (op.uses_operand && chance(70)) {
        Shape os = self.shape();
        while (os.size() > 0 && chance(25)) os.erase(0);  // broadcast from fewer dims
        for (int64_t i = 0; i < os.size(); ++i)
          if (chance(15)) os[i] = 1;
        ol = layout_with_shape(os, storage_numel);
        if (ol) operand = Tensor(anchor.storage(), ol->shape, ol->strides, ol->offset, DType::f32);
      }
      if (op.name == "add_ same") ol = sl;
      std::vector<float> coins(static_cast<std::size_t>(self.numel()));
      for (float& f : coins) f = float(pick(0, 1));
      Tensor mask = ag::lt(Tensor::from_vector(coins, self.shape()), 0.5);
      const std::vector<float> before = storage_values(anchor, storage_numel);
      // The reference: the same op on clones, taken before the write.
      Tensor ref = self.clone(), ref_operand = operand.clone();
      if (op.name == "add_ same")
        ref.mul_(2.0);
      else
        op.apply(ref, ref_operand, mask);
      const std::string overlap = expected_overlap(sl, ol ? &*ol : nullptr);
      ++inplace_calls;
      const Outcome o = attempt([&] { op.apply(self, operand, mask); }, what);
      const std::vector<float> after = storage_values(anchor, storage_numel);
      if (o == Outcome::error) {
        CHECK_MESSAGE(!overlap.empty(), "refused without an overlap: ", what);
        CHECK_MESSAGE(what.find(overlap) != std::string::npos, what);
        CHECK(same_values(after, before));  // nothing written
        ++overlap_refusals;
        continue;
      }
      CHECK_MESSAGE(overlap.empty(), "accepted an overlapping write: ", overlap);
      // Touched elements hold the reference, the others what they held.
      std::vector<float> want_after = before;
      const std::vector<int64_t> at = locations(sl);
      const std::vector<float> r = ref.to_vector<float>();
      for (std::size_t i = 0; i < at.size(); ++i) want_after[std::size_t(at[i])] = r[i];
      CHECK(same_values(after, want_after));
    }
  }
  MESSAGE("layouts made ", made, ", refused ", refused_layouts, "; view calls ", view_calls, ", in-place calls ",
          inplace_calls, " (", overlap_refusals, " refused for overlap)");
  CHECK(made > kCases / 3);
  CHECK(refused_layouts > kCases / 20);
  CHECK(overlap_refusals > 50);
}
