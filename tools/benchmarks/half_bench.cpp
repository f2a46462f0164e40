// half_bench: the reduced-precision GEMM engine, measured (issue 25). One JSON line per
// case; every case runs at each --threads count in the same process, engines interleaved
// repetition by repetition, so the ratios compare like with like.
//
//   half_bench [--reps R] [--threads 1,2] [--only ENGINE]
//
// Cases:
//   convert  Tensor::to between f32 and bf16 / f16 (both ways) at 1M and 16M elements:
//            GB/s = (bytes read + bytes written) / median time
//   matmul   the products of ag_bench workload 7's GPT step (B 32, T 64, E 128, 4 heads
//            of 32: B*T = 2048 rows): the linear layers (2048, 128) @ (128, 384 / 512 / 128)
//            with the weight read transposed (x @ W^T), the MLP's (2048, 512) @ (512, 128),
//            a weight gradient (128, 2048) @ (2048, 512) with the left operand transposed,
//            and attention's batched (128, 64, 32) @ (128, 32, 64) and (128, 64, 64) @
//            (128, 64, 32); and small products of decoding (workloads 8, 9): (32, 128)
//            @ (128, 384) and (1, 128) @ (128, 512), x @ W^T. Engines: "f32" (ag::matmul in f32: OpenBLAS sgemm),
//            "ag_bf16" / "ag_f16" (ag::matmul on 16-bit operands: what attograd does),
//            "ag_bf16_convert" (the same forced to convert to f32 around sgemm, the
//            engine before oneDNN's and the one on CPUs without AMX),
//            and, when CMake found oneDNN, "dnnl_bf16" / "dnnl_f16" (a oneDNN matmul
//            primitive, 16-bit in and out, f32 accumulation, created per call from
//            oneDNN's primitive cache as an integrated engine would; "_1t": on one
//            thread whatever --threads says, OpenMP's workers idle). GFLOP/s = 2 M N K
//            batch / median time; "ratio" = GFLOP/s over f32's at the same thread count.
//            "err" = max |engine - f32| / max |f32|, the f32 product taken on the same
//            16-bit-rounded operands (one bf16 rounding is <= 2^-9 of the magnitude);
//            "dnnl_vs_convert_bf16" = max |dnnl - ag_bf16_convert| / max |f32|.
#include <attograd/attograd.h>

#include "kernels/matmul_dnnl.h"  // kernels::set_half_gemm: the f32 conversion on demand

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#ifdef AG_HALF_BENCH_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using namespace ag;
using Clock = std::chrono::steady_clock;

double seconds(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void set_threads(int n) {
  ag::set_num_threads(n);
#ifdef AG_HALF_BENCH_DNNL
  omp_set_num_threads(n);  // oneDNN's CPU runtime here is OpenMP (Debian's build)
#endif
}

// Each engine: a name and a call; `reps` rounds, each round timing every engine once
// (`inner` calls), so a load change hits all engines alike. Median seconds per call.
std::string g_only;  // --only NAME: time the engines named NAME... (and f32, the reference) alone

std::map<std::string, double> time_engines(std::vector<std::pair<std::string, std::function<void()>>> engines, int reps,
                                           int inner) {
  if (!g_only.empty())
    std::erase_if(engines, [](const auto& e) { return e.first.rfind(g_only, 0) != 0 && e.first != "f32"; });
  for (auto& e : engines) e.second();  // warm-up (and oneDNN's primitive creation)
  std::map<std::string, std::vector<double>> t;
  for (int r = 0; r < reps; ++r)
    for (auto& e : engines)
      t[e.first].push_back(seconds([&] {
                             for (int i = 0; i < inner; ++i) e.second();
                           }) /
                           inner);
  std::map<std::string, double> m;
  for (auto& [k, v] : t) m[k] = median(v);
  return m;
}

#ifdef AG_HALF_BENCH_DNNL
// a (..., M, K) @ b (..., K, N) through a oneDNN matmul, both 16-bit of the same dtype,
// 2-D or 3-D with equal batch; any strides oneDNN reads (the transposed views here).
// one_thread: the call runs on the calling thread alone (OpenMP's pool left idle).
Tensor dnnl_matmul(const Tensor& a, const Tensor& b, bool one_thread = false) {
  using dnnl::memory;
  const int saved = omp_get_max_threads();
  if (one_thread) omp_set_num_threads(1);
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  static dnnl::stream strm(eng);
  const auto dt = a.dtype() == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f16;
  const int64_t d = a.dim();
  const int64_t N = b.size(d - 1);
  Shape os = a.shape();
  os[d - 1] = N;
  Tensor out = empty(os, a.dtype());
  auto md = [&](const Tensor& t) {
    memory::dims dims(t.shape().begin(), t.shape().end()), st(t.strides().begin(), t.strides().end());
    return memory::desc(dims, dt, st);
  };
  memory::desc amd = md(a), bmd = md(b), cmd = md(out);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), eng);
  dnnl::matmul prim(pd);
  auto ptr = [](const Tensor& t) {
    return t.dtype() == DType::bf16 ? static_cast<void*>(t.data<BFloat16>()) : static_cast<void*>(t.data<Half>());
  };
  memory am(amd, eng, ptr(a)), bm(bmd, eng, ptr(b)), cm(cmd, eng, ptr(out));
  prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  strm.wait();
  omp_set_num_threads(saved);
  return out;
}
#endif

double rel_err(const Tensor& x, const Tensor& ref) {
  Tensor r = ref.to(DType::f32);
  double scale = abs(r).max().item<double>();
  return (abs(x.to(DType::f32) - r)).max().item<double>() / scale;
}

void convert_cases(const std::vector<int>& threads, int reps) {
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    Tensor f = randn({n});
    Tensor h = f.to(DType::bf16), g = f.to(DType::f16);
    nlohmann::json j = {{"case", "convert"}, {"elements", n}};
    for (int th : threads) {
      set_threads(th);
      int inner = n < (1 << 22) ? 20 : 2;
      auto m = time_engines({{"f32->bf16", [&] { (void)f.to(DType::bf16); }},
                             {"bf16->f32", [&] { (void)h.to(DType::f32); }},
                             {"f32->f16", [&] { (void)f.to(DType::f16); }},
                             {"f16->f32", [&] { (void)g.to(DType::f32); }}},
                            reps, inner);
      nlohmann::json gbs;
      for (auto& [k, s] : m) gbs[k] = std::round(n * 6.0 / s / 1e9 * 10) / 10;  // 4 + 2 bytes per element
      j["GB_per_s"][std::to_string(th)] = gbs;
    }
    std::cout << j.dump() << std::endl;
  }
}

// ag::matmul through the f32 conversion around sgemm, whatever engine bf16 would pick.
Tensor converted(const Tensor& a, const Tensor& b) {
  const auto saved = kernels::set_half_gemm(kernels::HalfGemm::convert);
  Tensor r = matmul(a, b);
  kernels::set_half_gemm(saved);
  return r;
}

struct MatCase {
  std::string name;
  int64_t batch, M, K, N;
  bool ta, tb;  // operand stored transposed (read through a transposed view)
};

// (rows, cols) operand, random, rounded to 16 bits and back so every engine multiplies
// the same values; stored transposed when `trans`.
Tensor operand(int64_t batch, int64_t rows, int64_t cols, bool trans) {
  Shape s = trans ? Shape{cols, rows} : Shape{rows, cols};
  if (batch > 1) s.insert(0, batch);
  Tensor t = randn(s).to(DType::bf16).to(DType::f32);
  return trans ? t.transpose(-1, -2) : t;
}

void matmul_cases(const std::vector<int>& threads, int reps) {
  const std::vector<MatCase> cases = {
      {"qkv x@W^T (2048,128)@(128,384)", 1, 2048, 128, 384, false, true},
      {"fc x@W^T (2048,128)@(128,512)", 1, 2048, 128, 512, false, true},
      {"proj x@W^T (2048,512)@(512,128)", 1, 2048, 512, 128, false, true},
      {"out x@W^T (2048,128)@(128,128)", 1, 2048, 128, 128, false, true},
      {"dW g^T@x (128,2048)@(2048,512)", 1, 128, 2048, 512, true, false},
      {"scores (128,64,32)@(128,32,64)", 128, 64, 32, 64, false, true},
      {"attn@V (128,64,64)@(128,64,32)", 128, 64, 64, 32, false, false},
      {"decode B32 x@W^T (32,128)@(128,384)", 1, 32, 128, 384, false, true},
      {"decode B1 x@W^T (1,128)@(128,512)", 1, 1, 128, 512, false, true},
  };
  for (const MatCase& c : cases) {
    manual_seed(3);
    Tensor a = operand(c.batch, c.M, c.K, c.ta), b = operand(c.batch, c.K, c.N, c.tb);
    Tensor ab = a.to(DType::bf16), bb = b.to(DType::bf16), ah = a.to(DType::f16), bh = b.to(DType::f16);
    // Tensor::to keeps a transposed view's layout? Make the 16-bit operands read the same way.
    if (c.ta)
      ab = ab.transpose(-1, -2).contiguous().transpose(-1, -2),
      ah = ah.transpose(-1, -2).contiguous().transpose(-1, -2);
    if (c.tb)
      bb = bb.transpose(-1, -2).contiguous().transpose(-1, -2),
      bh = bh.transpose(-1, -2).contiguous().transpose(-1, -2);
    const double flops = 2.0 * c.batch * c.M * c.N * c.K;
    Tensor ref = matmul(a, b);
    std::vector<std::pair<std::string, std::function<void()>>> engines = {
        {"f32", [&] { (void)matmul(a, b); }},
        {"ag_bf16", [&] { (void)matmul(ab, bb); }},
        {"ag_bf16_convert", [&] { (void)converted(ab, bb); }},
        {"ag_f16", [&] { (void)matmul(ah, bh); }},
    };
    nlohmann::json err = {{"ag_bf16", rel_err(matmul(ab, bb), ref)},
                          {"ag_bf16_convert", rel_err(converted(ab, bb), ref)},
                          {"ag_f16", rel_err(matmul(ah, bh), ref)}};
    nlohmann::json unavailable = nlohmann::json::object();
#ifdef AG_HALF_BENCH_DNNL
    for (auto [name, x, y] : {std::tuple{"dnnl_bf16", ab, bb}, std::tuple{"dnnl_f16", ah, bh}}) {
      try {
        Tensor r = dnnl_matmul(x, y);
        err[name] = rel_err(r, ref);
        if (std::string(name) == "dnnl_bf16") err["dnnl_vs_convert_bf16"] = rel_err(r, converted(ab, bb));
        engines.push_back({name, [x = x, y = y] { (void)dnnl_matmul(x, y); }});
        engines.push_back({std::string(name) + "_1t", [x = x, y = y] { (void)dnnl_matmul(x, y, true); }});
      } catch (const dnnl::error& e) { unavailable[name] = e.what(); }
    }
#endif
    nlohmann::json j = {{"case", "matmul"}, {"shape", c.name}, {"err", err}};
    if (!unavailable.empty()) j["unavailable"] = unavailable;
    const int inner = std::max(1, static_cast<int>(2e8 / flops));
    for (int th : threads) {
      set_threads(th);
      auto m = time_engines(engines, reps, inner);
      nlohmann::json g, r;
      for (auto& [k, s] : m) {
        g[k] = std::round(flops / s / 1e9 * 10) / 10;
        r[k] = std::round(m["f32"] / s * 100) / 100;
      }
      j["GFLOP_per_s"][std::to_string(th)] = g;
      j["ratio"][std::to_string(th)] = r;
    }
    std::cout << j.dump() << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::vector<int> threads = {1, 2};
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (k == "--reps" && !v.empty()) {
      reps = std::stoi(v);
    } else if (k == "--only" && !v.empty()) {
      g_only = v;
    } else if (k == "--threads" && !v.empty()) {
      threads.clear();
      std::stringstream ss(v);
      for (std::string x; std::getline(ss, x, ',');) threads.push_back(std::stoi(x));
    } else {
      std::cerr << "usage: half_bench [--reps R] [--threads 1,2] [--only ENGINE]\n";
      return 2;
    }
  }
#ifdef AG_HALF_BENCH_DNNL
  const dnnl_version_t* v = dnnl_version();
  std::cout << nlohmann::json{{"case", "engine"},
                              {"dnnl", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                           std::to_string(v->patch)},
                              {"dnnl_isa", static_cast<int>(dnnl::get_effective_cpu_isa())}}
                   .dump()
            << std::endl;
#else
  std::cout << R"({"case":"engine","dnnl":null})" << std::endl;
#endif
  convert_cases(threads, reps);
  matmul_cases(threads, reps);
}
