// Anomaly mode's reporting side (torch.autograd.detect_anomaly): a backward closure that
// returns nan or inf throws, naming the op and where it was created (recorded by
// core/anomaly.cpp). The call chain comes from glibc's backtrace() and is symbolized with dladdr() and
// abi::__cxa_demangle only when an error is reported. GCC 12's <stacktrace> would give
// file:line but needs -std=c++23 and libstdc++_libbacktrace (experimental in GCC 12);
// dladdr sees only exported symbols, so a program links with -rdynamic (CMake's
// ENABLE_EXPORTS) to see its own function names, as test_anomaly does.
#include "anomaly.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "attograd/error.h"

namespace ag {
namespace detail {

namespace {

std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : name;
  std::free(d);
  return s;
}

std::string basename_of(const char* path) {
  const char* slash = path ? std::strrchr(path, '/') : nullptr;
  return slash ? slash + 1 : (path ? path : "?");
}

// One line per frame after ag::record, up to and including main.
void append_frames(std::ostringstream& os, const std::vector<void*>& frames) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  std::string record_lib;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    Dl_info info{};
    std::string line;
    if (dladdr(frames[i], &info) && info.dli_sname) {
      line = demangled(info.dli_sname) + " (" + basename_of(info.dli_fname) + ")";
    } else if (info.dli_fname) {
      std::ostringstream off;
      off << "0x" << std::hex << (reinterpret_cast<uintptr_t>(frames[i]) - reinterpret_cast<uintptr_t>(info.dli_fbase));
      line = "? (" + basename_of(info.dli_fname) + "+" + off.str() + ")";
    } else {
      line = "?";
    }
    if (start == 0 && line.rfind("ag::record(", 0) == 0) {
      start = lines.size() + 1;
      record_lib = " (" + basename_of(info.dli_fname) + ")";
    } else if (start == lines.size() && start > 0 &&
               (line.rfind("ag::record<", 0) == 0 ||
                (line.rfind("? (", 0) == 0 &&
                 line.find(record_lib.substr(2, record_lib.size() - 3) + "+") != std::string::npos))) {
      // record's template overload (autograd.h), a frame of its own when not inlined
      // and unnamed for dladdr: part of record, not of the op.
      start = lines.size() + 1;
    }
    const bool is_main = line.rfind("main (", 0) == 0;
    lines.push_back(std::move(line));
    if (is_main) break;
  }
  if (start >= lines.size()) start = 0;  // record() not found (inlined): show everything
  for (std::size_t i = start; i < lines.size(); ++i) os << "\n  #" << (i - start) << ' ' << lines[i];
}

}  // namespace

std::string describe_creation(const Node& n) {
  if (!n.anomaly) return "";
  std::ostringstream os;
  os << "\n'" << n.name << "' was created at:";
  append_frames(os, n.anomaly->frames);
  for (const AnomalyTrace* t = n.anomaly.get(); t && t->parent_name; t = t->parent.get()) {
    os << "\nwhile running the backward of '" << t->parent_name << "'";
    if (!t->parent) break;
    os << ", which was created at:";
    append_frames(os, t->parent->frames);
  }
  return os.str();
}

void check_gradients(const Node& n, const Grads& grads, const std::vector<bool>& needs) {
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!needs[i] || !g.defined() || !is_floating(g.dtype())) continue;
    int64_t nans = 0, infs = 0;
    {
      NoGradGuard no_grad;  // a create_graph gradient is read, not differentiated
      for (double v : g.to_vector<double>()) {
        nans += std::isnan(v);
        infs += std::isinf(v);
      }
    }
    if (nans == 0 && infs == 0) continue;
    std::ostringstream shapes;
    for (std::size_t k = 0; k < n.input_shapes.size(); ++k) shapes << (k ? ", " : "") << n.input_shapes[k];
    throw AutogradError(cat("anomaly: the backward of '", n.name, "' returned ", nans ? "nan" : "inf",
                            " values in its gradient for input ", i, " (", nans, " nan and ", infs, " inf of ",
                            g.numel(), " elements, shape ", g.shape(), "); the op's inputs have shapes ", shapes.str(),
                            describe_creation(n)));
  }
}

}  // namespace detail
}  // namespace ag
