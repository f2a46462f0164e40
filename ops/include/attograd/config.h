#pragma once
/// \file
/// What this build runs on this machine, as at::show_config(): the version, the vector
/// kernels' instruction set, the f32 GEMM engine and why (OpenBLAS or oneDNN, issue 43),
/// the BLAS and oneDNN builds, the thread count.
#include <string>

namespace ag {

/// A few lines naming what runs here, e.g.
///   attograd 0.2.0
///     vector kernels: avx2 (this CPU: sse2, avx2)
///     f32 products: OpenBLAS's sgemm (Zen kernels, chosen by OpenBLAS for this CPU)
///     OpenBLAS: OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64
///     oneDNN: oneDNN 2.7.3
///     threads: 2
/// ATTOGRAD_SGEMM=openblas|onednn in the environment forces the f32 engine.
std::string show_config();

}  // namespace ag
