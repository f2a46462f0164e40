#pragma once
// oneDNN on attograd's threads (matmul_dnnl.cpp, conv_dnnl.cpp). Internal header; only
// for sources built with ATTOGRAD_HAVE_DNNL.
#include <dlfcn.h>

namespace ag::kernels {

// Debian's oneDNN runs on OpenMP. Each call runs on the calling thread alone (a product
// uses more threads by splitting its rows over attograd's pool, matmul_dnnl below): with
// OpenMP's threads, its spinning workers and OpenBLAS's (f32 products between the bf16
// ones) fought for the cores and a product took 10-100x longer (half_bench, "_1t"). The
// OpenMP calls are looked up at run time (libgomp comes with libdnnl), so the library
// needs no -fopenmp.
struct OmpThreads {
  using Set = void (*)(int);
  using Get = int (*)();
  Set set = nullptr;
  Get get = nullptr;
  OmpThreads() {
    set = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  }
};

// Sets the calling thread's OpenMP thread count to 1 for its lifetime.
class OneThread {
 public:
  OneThread() {
    static const OmpThreads omp;
    if (omp.set && omp.get) set_ = omp.set, saved_ = omp.get(), set_(1);
  }
  ~OneThread() {
    if (set_) set_(saved_);
  }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  OmpThreads::Set set_ = nullptr;
  int saved_ = 1;
};

}  // namespace ag::kernels
