// show_config(): what runs on this machine (attograd/config.h).
#include "attograd/config.h"

#include <cblas.h>

#include <sstream>

#include "attograd/runtime.h"
#include "attograd/version.h"
#include "kernels/dispatch.h"
#include "kernels/sgemm.h"

namespace ag {

std::string show_config() {
  std::ostringstream os;
  os << "attograd " << version << "\n  vector kernels: " << kernels::to_string(kernels::simd_level()) << " (this CPU:";
  const auto levels = kernels::available_simd_levels();
  for (std::size_t i = 0; i < levels.size(); ++i) os << (i ? ", " : " ") << kernels::to_string(levels[i]);
  const char* blas = openblas_get_config();
  os << ")\n  f32 products: " << kernels::sgemm_choice().reason << "\n  OpenBLAS: " << (blas ? blas : "?")
     << "\n  oneDNN: " << kernels::dnnl_description() << "\n  threads: " << get_num_threads() << "\n";
  return os.str();
}

}  // namespace ag
