// Convolution through oneDNN (kernels/conv.h): forward, backward-data and
// backward-weights primitives, as LibTorch runs them on the CPU. The tensors stay NCHW;
// oneDNN picks its own (blocked) layouts and the reorders to and from them run inside
// each call. The batch is split over attograd's thread pool, one oneDNN call per part on
// its own thread (dnnl_threads.h says why); backward-weights sums the parts' gradients.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attograd/detail/parallel.h"
#include "attograd/runtime.h"
#include "kernels/conv.h"
#include "kernels/kernels.h"

#if ATTOGRAD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl_threads.h"
#endif

namespace ag::kernels {
namespace {
std::atomic<ConvEngine> g_conv_engine{ConvEngine::automatic};
}  // namespace

ConvEngine set_conv_engine(ConvEngine e) { return g_conv_engine.exchange(e); }
ConvEngine conv_engine() { return g_conv_engine.load(); }

#if !ATTOGRAD_HAVE_DNNL
Tensor conv2d_dnnl(const Tensor&, const Tensor&, const Tensor&, const ConvShape&) { return {}; }
Tensor conv2d_dnnl_backward_data(const Tensor&, const Tensor&, const ConvShape&) { return {}; }
std::pair<Tensor, Tensor> conv2d_dnnl_backward_weights(const Tensor&, const Tensor&, const ConvShape&, bool) {
  return {};
}
#else
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

memory::data_type dnnl_type(DType d) { return d == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32; }

// oneDNN's descriptors of one convolution over `n` samples (a part of the batch).
struct Descs {
  memory::desc src, wei, bias, dst;        // NCHW, (G,) OIHW, (O), NCHW: attograd's layouts
  memory::desc src_any, wei_any, dst_any;  // layouts left to oneDNN
  memory::dims strides, dilates, pad_l, pad_r;
};

Descs descs(const ConvShape& s, int64_t n, DType dtype) {
  const auto t = dnnl_type(dtype);
  Descs d;
  const memory::dims src{n, s.C, s.H, s.W}, dst{n, s.O, s.oH, s.oW};
  const memory::dims wei =
      s.G == 1 ? memory::dims{s.O, s.C, s.kH, s.kW} : memory::dims{s.G, s.O / s.G, s.C / s.G, s.kH, s.kW};
  d.src = memory::desc(src, t, Tag::nchw);
  d.dst = memory::desc(dst, t, Tag::nchw);
  d.wei = memory::desc(wei, t, s.G == 1 ? Tag::oihw : Tag::goihw);
  d.bias = memory::desc({s.O}, t, Tag::a);
  d.src_any = memory::desc(src, t, Tag::any);
  d.dst_any = memory::desc(dst, t, Tag::any);
  d.wei_any = memory::desc(wei, t, Tag::any);
  d.strides = {s.sH, s.sW};
  d.dilates = {s.dH - 1, s.dW - 1};  // oneDNN counts the gaps
  // oneDNN checks (in + l + r - span) / stride + 1 == out with C++ division: the
  // symmetric padding of PyTorch's floor formula satisfies it.
  d.pad_l = {s.pH, s.pW};
  d.pad_r = {s.pH, s.pW};
  return d;
}

dnnl::convolution_forward::primitive_desc forward_pd(const Descs& d, bool bias) {
  using F = dnnl::convolution_forward;
  const auto kind = dnnl::prop_kind::forward_training;
  const auto alg = dnnl::algorithm::convolution_direct;
  F::desc desc =
      bias ? F::desc(kind, alg, d.src_any, d.wei_any, d.bias, d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r)
           : F::desc(kind, alg, d.src_any, d.wei_any, d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r);
  return F::primitive_desc(desc, engine());
}

// A reference implementation is far slower than im2col + sgemm: decline it.
bool usable(const char* impl) { return std::string(impl).rfind("ref", 0) != 0; }

// A memory of layout `d` whose buffer comes from attograd's size-class cache and stays in
// `keep` until the call ends: oneDNN's own allocations of the reordered tensors were
// fresh mmap'd pages every call (page faults took a fifth of a CNN step).
memory buffer(const memory::desc& d, std::vector<Tensor>& keep) {
  keep.push_back(empty({int64_t(d.get_size())}, DType::u8, "conv2d"));
  return memory(d, engine(), keep.back().raw_data());
}

// `user` in the layout `want`: the user's memory itself, or a reordered copy.
memory in_layout(const memory& user, const memory::desc& want, dnnl::stream& strm, std::vector<Tensor>& keep) {
  if (user.get_desc() == want) return user;
  memory m = buffer(want, keep);
  dnnl::reorder(user, m).execute(strm, const_cast<memory&>(user), m);
  return m;
}

// The primitives of one shape, made once per thread (cleared past kMax shapes).
struct Prims {
  std::optional<dnnl::convolution_forward::primitive_desc> fwd_pd;
  std::optional<dnnl::convolution_forward> fwd;
  std::optional<dnnl::convolution_backward_data::primitive_desc> bwd_data_pd;
  std::optional<dnnl::convolution_backward_data> bwd_data;
  std::optional<dnnl::convolution_backward_weights::primitive_desc> bwd_w_pd;
  std::optional<dnnl::convolution_backward_weights> bwd_w;
  bool declined = false;
};

Prims& prims_for(const ConvShape& s, int64_t n, DType dtype, bool bias) {
  constexpr std::size_t kMax = 128;
  thread_local std::map<std::vector<int64_t>, Prims> cache;
  std::vector<int64_t> key{n,    s.C,  s.H,  s.W,  s.O,  s.kH, s.kW, s.oH,           s.oW,
                           s.sH, s.sW, s.pH, s.pW, s.dH, s.dW, s.G,  int64_t(dtype), bias};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() >= kMax) cache.clear();
  return cache[key];
}

// Splits [0, N) over the pool and runs fn(n0, n1) for each part on its own thread with
// one OpenMP thread; false if any part returned false.
template <class F>
bool over_batch(int64_t N, double work, F&& fn) {
  const int64_t parts = std::clamp<int64_t>(work < 2e6 ? 1 : get_num_threads(), 1, std::max<int64_t>(N, 1));
  std::atomic<bool> ok{true};
  detail::parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      OneThread one;
      try {
        if (!fn(p, N * p / parts, N * (p + 1) / parts)) ok = false;
      } catch (const dnnl::error&) { ok = false; }
    }
  });
  return ok;
}

double macs(const ConvShape& s) { return double(s.N) * s.O * s.oH * s.oW * (double(s.C) / s.G) * s.kH * s.kW; }

template <class T>
T* at(const Tensor& t, int64_t offset) {
  return static_cast<T*>(t.raw_data()) + offset;
}

}  // namespace

Tensor conv2d_dnnl(const Tensor& x, const Tensor& w, const Tensor& b, const ConvShape& s) {
  const DType dt = x.dtype();
  const int64_t isz = itemsize(dt);
  Tensor out = empty({s.N, s.O, s.oH, s.oW}, dt, "conv2d");
  const bool ok = over_batch(s.N, macs(s), [&](int64_t, int64_t n0, int64_t n1) {
    const int64_t n = n1 - n0;
    if (n == 0) return true;
    Prims& p = prims_for(s, n, dt, b.defined());
    if (p.declined) return false;
    const Descs d = descs(s, n, dt);
    if (!p.fwd) {
      p.fwd_pd = forward_pd(d, b.defined());
      if (!usable(p.fwd_pd->impl_info_str())) return p.declined = true, false;
      p.fwd.emplace(*p.fwd_pd);
    }
    thread_local dnnl::stream strm(engine());
    memory src(d.src, engine(), static_cast<char*>(x.raw_data()) + n0 * s.C * s.H * s.W * isz);
    memory wei(d.wei, engine(), w.raw_data());
    memory dst(d.dst, engine(), static_cast<char*>(out.raw_data()) + n0 * s.O * s.oH * s.oW * isz);
    std::vector<Tensor> keep;
    memory src_m = in_layout(src, p.fwd_pd->src_desc(), strm, keep);
    memory wei_m = in_layout(wei, p.fwd_pd->weights_desc(), strm, keep);
    memory dst_m = p.fwd_pd->dst_desc() == d.dst ? dst : buffer(p.fwd_pd->dst_desc(), keep);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
    if (b.defined()) args.insert({DNNL_ARG_BIAS, memory(d.bias, engine(), b.raw_data())});
    p.fwd->execute(strm, args);
    if (dst_m != dst) dnnl::reorder(dst_m, dst).execute(strm, dst_m, dst);
    strm.wait();
    return true;
  });
  return ok ? out : Tensor{};
}

Tensor conv2d_dnnl_backward_data(const Tensor& g, const Tensor& w, const ConvShape& s) {
  const DType dt = g.dtype();
  const int64_t isz = itemsize(dt);
  Tensor dx = empty({s.N, s.C, s.H, s.W}, dt, "conv2d_backward");
  const bool ok = over_batch(s.N, macs(s), [&](int64_t, int64_t n0, int64_t n1) {
    const int64_t n = n1 - n0;
    if (n == 0) return true;
    Prims& p = prims_for(s, n, dt, false);
    if (p.declined) return false;
    const Descs d = descs(s, n, dt);
    if (!p.bwd_data) {
      if (!p.fwd_pd) p.fwd_pd = forward_pd(d, false);
      using B = dnnl::convolution_backward_data;
      B::desc desc(dnnl::algorithm::convolution_direct, d.src_any, d.wei_any, d.dst_any, d.strides, d.dilates, d.pad_l,
                   d.pad_r);
      p.bwd_data_pd.emplace(desc, engine(), *p.fwd_pd);
      if (!usable(p.bwd_data_pd->impl_info_str())) return p.declined = true, false;
      p.bwd_data.emplace(*p.bwd_data_pd);
    }
    thread_local dnnl::stream strm(engine());
    memory gd(d.dst, engine(), static_cast<char*>(g.raw_data()) + n0 * s.O * s.oH * s.oW * isz);
    memory wei(d.wei, engine(), w.raw_data());
    memory out(d.src, engine(), static_cast<char*>(dx.raw_data()) + n0 * s.C * s.H * s.W * isz);
    std::vector<Tensor> keep;
    memory g_m = in_layout(gd, p.bwd_data_pd->diff_dst_desc(), strm, keep);
    memory w_m = in_layout(wei, p.bwd_data_pd->weights_desc(), strm, keep);
    memory out_m = p.bwd_data_pd->diff_src_desc() == d.src ? out : buffer(p.bwd_data_pd->diff_src_desc(), keep);
    p.bwd_data->execute(strm, {{DNNL_ARG_DIFF_DST, g_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_DIFF_SRC, out_m}});
    if (out_m != out) dnnl::reorder(out_m, out).execute(strm, out_m, out);
    strm.wait();
    return true;
  });
  return ok ? dx : Tensor{};
}

std::pair<Tensor, Tensor> conv2d_dnnl_backward_weights(const Tensor& x, const Tensor& g, const ConvShape& s,
                                                       bool bias) {
  const DType dt = x.dtype();
  const int64_t isz = itemsize(dt);
  const Shape wshape{s.O, s.C / s.G, s.kH, s.kW};
  // Each part's gradients, summed below (part 0's are the result).
  const int64_t parts_max = std::max<int64_t>(1, get_num_threads());
  std::vector<Tensor> dws(static_cast<std::size_t>(parts_max)), dbs(static_cast<std::size_t>(parts_max));
  const bool ok = over_batch(s.N, macs(s), [&](int64_t part, int64_t n0, int64_t n1) {
    const int64_t n = n1 - n0;
    if (n == 0) return true;
    Prims& p = prims_for(s, n, dt, bias);
    if (p.declined) return false;
    const Descs d = descs(s, n, dt);
    if (!p.bwd_w) {
      if (!p.fwd_pd) p.fwd_pd = forward_pd(d, bias);
      using B = dnnl::convolution_backward_weights;
      const auto alg = dnnl::algorithm::convolution_direct;
      B::desc desc = bias
                         ? B::desc(alg, d.src_any, d.wei_any, d.bias, d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r)
                         : B::desc(alg, d.src_any, d.wei_any, d.dst_any, d.strides, d.dilates, d.pad_l, d.pad_r);
      p.bwd_w_pd.emplace(desc, engine(), *p.fwd_pd);
      if (!usable(p.bwd_w_pd->impl_info_str())) return p.declined = true, false;
      p.bwd_w.emplace(*p.bwd_w_pd);
    }
    thread_local dnnl::stream strm(engine());
    Tensor dw = empty(wshape, dt, "conv2d_backward"), db = bias ? empty({s.O}, dt, "conv2d_backward") : Tensor{};
    memory src(d.src, engine(), static_cast<char*>(x.raw_data()) + n0 * s.C * s.H * s.W * isz);
    memory gd(d.dst, engine(), static_cast<char*>(g.raw_data()) + n0 * s.O * s.oH * s.oW * isz);
    memory dwm(d.wei, engine(), dw.raw_data());
    std::vector<Tensor> keep;
    memory src_m = in_layout(src, p.bwd_w_pd->src_desc(), strm, keep);
    memory g_m = in_layout(gd, p.bwd_w_pd->diff_dst_desc(), strm, keep);
    memory dw_m = p.bwd_w_pd->diff_weights_desc() == d.wei ? dwm : buffer(p.bwd_w_pd->diff_weights_desc(), keep);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_m}, {DNNL_ARG_DIFF_DST, g_m}, {DNNL_ARG_DIFF_WEIGHTS, dw_m}};
    if (bias) args.insert({DNNL_ARG_DIFF_BIAS, memory(d.bias, engine(), db.raw_data())});
    p.bwd_w->execute(strm, args);
    if (dw_m != dwm) dnnl::reorder(dw_m, dwm).execute(strm, dw_m, dwm);
    strm.wait();
    dws[size_t(part)] = dw;
    dbs[size_t(part)] = db;
    return true;
  });
  if (!ok) return {};
  Tensor dw, db;
  for (std::size_t i = 0; i < dws.size(); ++i) {
    if (!dws[i].defined()) continue;
    dw = dw.defined() ? binary(Binary::add, dw, dws[i], "conv2d_backward") : dws[i];
    if (bias) db = db.defined() ? binary(Binary::add, db, dbs[i], "conv2d_backward") : dbs[i];
  }
  return {dw, db};
}
#endif

}  // namespace ag::kernels
