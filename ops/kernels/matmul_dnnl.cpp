// bf16 matmul through oneDNN (kernels/matmul_dnnl.h). One matmul primitive per call,
// batch dims broadcast by oneDNN, operands read in place through their strides; oneDNN's
// primitive cache makes the repeated shapes of a training step cheap to set up
// (build/tools/benchmarks/half_bench's timings include that cost).
#include "kernels/matmul_dnnl.h"
#include "kernels/views.h"

#include "gemm.h"
#include "kernels/s8_gemm.h"
#include "attograd/detail/parallel.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#if ATTOGRAD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl_threads.h"
#endif

namespace ag::kernels {
namespace {
std::atomic<HalfGemm> g_engine{HalfGemm::automatic};
}  // namespace

HalfGemm set_half_gemm(HalfGemm e) { return g_engine.exchange(e); }
HalfGemm half_gemm() { return g_engine.load(); }
bool have_dnnl() { return ATTOGRAD_HAVE_DNNL != 0; }

// Under 16 rows or 2^18 multiply-adds oneDNN's per-call setup (a primitive descriptor,
// a cache lookup) outweighs its kernel: decoding's (B, 1, E) @ W^T at B1 took 17-38 ms
// per 63 tokens through oneDNN against 14-18 ms by conversion (ag_bench --workload 8
// --dtype bf16, 1 thread, two runs each, while another benchmark ran). A 2-D b's
// product counts all of a's rows: at B32 that step is one (32, E) product, and as 32
// products of one row it took the conversion path, which widens W on every call
// (workload 9 in bf16 ran at 0.8x f32 that way).
bool dnnl_worth_it(const Tensor& a, const Tensor& b) {
  if (a.dim() < 1 || b.dim() < 1 || a.numel() == 0) return false;
  const int64_t k = a.shape()[a.dim() - 1];
  const int64_t n = b.dim() >= 2 ? b.shape()[b.dim() - 1] : 1;
  int64_t m = a.dim() >= 2 ? a.shape()[a.dim() - 2] : 1;
  double batch = 1;
  for (int64_t i = 0; i + 2 < a.dim(); ++i) batch *= double(a.shape()[i]);
  if (b.dim() == 2 && k > 0) m = a.numel() / k, batch = 1;
  return m >= 16 && batch * double(m) * double(n) * double(k) >= double(1 << 18);
}

#if !ATTOGRAD_HAVE_DNNL
Tensor matmul_dnnl(const Tensor&, const Tensor&) { return {}; }
bool s8_matmul_dnnl(int32_t*, int64_t, const int8_t*, int64_t, int64_t, const int8_t*, int64_t) { return false; }
#else
namespace {

using dnnl::memory;

// oneDNN picks AMX kernels only where the CPU has them (and ONEDNN_MAX_CPU_ISA allows).
bool cpu_has_amx() {
  static const bool amx = [] {
    try {
      const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
      constexpr unsigned want = dnnl_cpu_isa_avx512_core_amx;  // a bit mask of the ISA's features
      return (isa & want) == want;
    } catch (const dnnl::error&) { return false; }
  }();
  return amx;
}

// t's dims and strides padded on the left to nd dims; a size-1 dim (padded or not) gets
// a stride past the whole tensor, as oneDNN expects of a dense layout.
memory::desc md_of(const Shape& shape, const Strides& strides, int64_t nd) {
  memory::dims dims(nd, 1), st(nd, 0);
  const int64_t lead = nd - shape.size();
  int64_t span = 1;
  for (int64_t i = 0; i < shape.size(); ++i) span = std::max(span, shape[i] * strides[i]);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t s = i < lead ? 1 : shape[i - lead];
    dims[i] = s;
    st[i] = s == 1 ? span : strides[i - lead];
  }
  return memory::desc(dims, memory::data_type::bf16, st);
}

// Whether oneDNN reads t in place: the last two dims row- or column-major, no batch dim
// broadcast by a zero stride (expand).
bool readable(const Tensor& t) {
  const int64_t d = t.dim();
  const int64_t r = t.shape()[d - 2], c = t.shape()[d - 1], s0 = t.strides()[d - 2], s1 = t.strides()[d - 1];
  bool ok = (c == 1 || s1 == 1) && (r == 1 || s0 >= c);
  ok = ok || ((r == 1 || s0 == 1) && (c == 1 || s1 >= r));
  for (int64_t i = 0; i + 2 < d; ++i) ok = ok && (t.shape()[i] == 1 || t.strides()[i] > 0);
  return ok;
}

// Each thread's matmul primitives by layout (dims and strides of a, b, out), or none where
// oneDNN declines: making the descriptor and the primitive anew cost 2-8 us a call more
// than reusing one, even with oneDNN's own primitive cache hitting (a (64, 128) @
// (128, 128) bf16 product, standalone, three rounds on a loaded machine: 15.7-19.3
// against 9.6-17.1 us a call), about a small product's whole kernel time. Bounded:
// cleared at kMaxPrims layouts.
std::optional<dnnl::matmul>* primitive_for(std::vector<int64_t> key, const memory::desc& amd, const memory::desc& bmd,
                                           const memory::desc& cmd, const dnnl::engine& eng) {
  constexpr std::size_t kMaxPrims = 256;
  thread_local std::map<std::vector<int64_t>, std::optional<dnnl::matmul> > prims;
  if (auto it = prims.find(key); it != prims.end()) return &it->second;
  if (prims.size() >= kMaxPrims) prims.clear();
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), eng);
  // A reference implementation (an odd layout) is slower than converting to f32.
  std::optional<dnnl::matmul> prim;
  if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) prim.emplace(pd);
  return &prims.emplace(std::move(key), std::move(prim)).first->second;
}

// out = a @ b by one oneDNN call on the calling thread; false when oneDNN declines (no
// kernel for this CPU or layout, or only its reference implementation).
bool run_bf16(const Tensor& a, const Tensor& b, const Tensor& out, int64_t nd) {
  OneThread one;  // before the primitive is made: oneDNN sizes its work split by the thread count
  try {
    static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    thread_local dnnl::stream strm(eng);
    const memory::desc amd = md_of(a.shape(), a.strides(), nd), bmd = md_of(b.shape(), b.strides(), nd),
                       cmd = md_of(out.shape(), out.strides(), nd);
    std::vector<int64_t> key{nd};  // the layout: what md_of made the descriptors from
    for (const Tensor* t : {&a, &b, &out})
      for (int64_t i = 0; i < t->dim(); ++i) key.push_back(t->shape()[i]), key.push_back(t->strides()[i]);
    const std::optional<dnnl::matmul>* prim = primitive_for(std::move(key), amd, bmd, cmd, eng);
    if (!prim->has_value()) return false;
    memory am(amd, eng, a.data<BFloat16>()), bm(bmd, eng, b.data<BFloat16>()), cm(cmd, eng, out.data<BFloat16>());
    (*prim)->execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    strm.wait();
  } catch (const dnnl::error&) { return false; }
  return true;
}

}  // namespace

Tensor matmul_dnnl(const Tensor& a_in, const Tensor& b_in) {
  const HalfGemm e = g_engine.load();
  if (e == HalfGemm::convert || a_in.dtype() != DType::bf16 || b_in.dtype() != DType::bf16) return {};
  if (e == HalfGemm::automatic && !cpu_has_amx()) return {};
  const int64_t nd = std::max(a_in.dim(), b_in.dim());
  if (nd > DNNL_MAX_NDIMS) return {};
  if (e == HalfGemm::automatic && !dnnl_worth_it(a_in, b_in)) return {};
  // x (..., n, K) @ W (K, N): one (rows, K) product, as dnnl_worth_it counts it.
  if (b_in.dim() == 2 && a_in.dim() > 2 && a_in.is_contiguous()) {
    const int64_t K = a_in.shape()[a_in.dim() - 1];
    Tensor r = matmul_dnnl(reshape_view(a_in, {a_in.numel() / K, K}), b_in);
    if (!r.defined()) return r;
    Shape out_shape = a_in.shape();
    out_shape[out_shape.size() - 1] = b_in.shape()[1];
    return reshape_view(r, out_shape);
  }
  Tensor a = readable(a_in) ? a_in : contiguous(a_in), b = readable(b_in) ? b_in : contiguous(b_in);
  // a (..., M, K), b (..., K, N) -> out (batch..., M, N), batch broadcast.
  Shape abatch, bbatch;
  for (int64_t i = 0; i + 2 < a.dim(); ++i) abatch.push_back(a.shape()[i]);
  for (int64_t i = 0; i + 2 < b.dim(); ++i) bbatch.push_back(b.shape()[i]);
  Shape out_shape = broadcast_shapes(abatch, bbatch, "matmul");
  out_shape.push_back(a.shape()[a.dim() - 2]);
  out_shape.push_back(b.shape()[b.dim() - 1]);
  Tensor out = empty(out_shape, DType::bf16, "matmul");
  // A 2-D product's rows split over the thread pool as gemm.h splits f32 products
  // (pool_parts, pool_cut), each part one oneDNN call on its own thread (OneThread). At
  // 2 threads oneDNN was a quarter of the busy thread's time in workload 7's bf16 step,
  // and the other thread idled through it. At 1 thread there is one call: each part
  // packs b again (4 fixed parts cost 3-8% of the 1-thread step). Like oneDNN's own
  // threading, the split can change a few roundings (a transposed a with K 2048: 1-10
  // of 32-65k outputs), so bf16 products are deterministic for a given thread count.
  if (nd == 2) {
    const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
    const int64_t parts = pool_parts(M, double(M) * double(N) * double(K));
    std::atomic<bool> ok{true};
    detail::parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t m0 = pool_cut(M, p, parts), m1 = pool_cut(M, p + 1, parts);
        if (!run_bf16(narrow_view(a, 0, m0, m1 - m0), b, narrow_view(out, 0, m0, m1 - m0), nd)) ok = false;
      }
    });
    return ok ? out : Tensor{};
  }
  return run_bf16(a, b, out, nd) ? out : Tensor{};
}

// Dynamic int8 (s8_gemm.h): acc (M, N) row stride ldc = xq (M, K) @ q (N, K)^T in exact int32,
// q read in place as a column-major (K, N) operand.
bool s8_matmul_dnnl(int32_t* acc, int64_t ldc, const int8_t* xq, int64_t M, int64_t K, const int8_t* q, int64_t N) {
  OneThread one;  // as matmul_dnnl: each call on its own thread
  try {
    static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    thread_local dnnl::stream strm(eng);
    const memory::desc amd({M, K}, memory::data_type::s8, memory::dims{K, 1}),
        bmd({K, N}, memory::data_type::s8, memory::dims{1, K}),
        cmd({M, N}, memory::data_type::s32, memory::dims{ldc, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), eng);
    // only oneDNN's VNNI / AMX kernels: exact int32 sums (no int16 saturation), and fast
    if (std::string(pd.impl_info_str()).find("brg") == std::string::npos) return false;
    dnnl::matmul prim(pd);
    memory am(amd, eng, const_cast<int8_t*>(xq)), bm(bmd, eng, const_cast<int8_t*>(q)), cm(cmd, eng, acc);
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    strm.wait();
  } catch (const dnnl::error&) {
    return false;  // no kernel for this CPU: the caller runs s8_gemm
  }
  return true;
}
#endif

}  // namespace ag::kernels
