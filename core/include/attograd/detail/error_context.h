#pragma once
// A composite op names itself in the errors of the ops it calls, as PyTorch's "in linear"
// context: "linear: matmul: shapes [2, 3] and [4, 5] ...". Internal (ops/, nn/).
//
//   Tensor linear(...) try {                  // a function-try-block: the body unchanged
//     ...
//   } catch (const Error& e) {
//     detail::rethrow_in_op("linear", e);
//   }
//
// or in_op("DecoderKVCache.append", [&] { ... }) around a block. The error keeps its type:
// each ag::Error subclass of error.h is rethrown as itself with "op: " in front; a
// subclass declared elsewhere passes unchanged. A message that already starts with
// "op:" (the composite's own checks, or the same name nested) is left alone.
#include <cstring>
#include <string>
#include <typeinfo>
#include <utility>

#include "attograd/error.h"

namespace ag::detail {

inline std::string with_op(const char* op, const char* what) {
  const std::size_t n = std::strlen(op);
  if (std::strncmp(what, op, n) == 0 && what[n] == ':') return what;
  return cat(op, ": ", what);
}

// Throws E with the prefix when e's dynamic type is exactly E; else returns false.
template <class E>
bool rethrow_as(const Error& e, const char* op) {
  if (typeid(e) != typeid(E)) return false;
  throw E(with_op(op, e.what()));
}

// Call only inside a catch handler for e (it rethrows the exception being handled when
// e's type is not one of error.h's).
[[noreturn]] inline void rethrow_in_op(const char* op, const Error& e) {
  (void)(rethrow_as<ShapeError>(e, op) || rethrow_as<DTypeError>(e, op) || rethrow_as<IndexError>(e, op) ||
         rethrow_as<ValueError>(e, op) || rethrow_as<IOError>(e, op) || rethrow_as<AutogradError>(e, op) ||
         rethrow_as<VersionError>(e, op) || rethrow_as<MemoryError>(e, op) || rethrow_as<DistError>(e, op) ||
         rethrow_as<KeyError>(e, op) || rethrow_as<Error>(e, op));
  throw;
}

template <class F>
decltype(auto) in_op(const char* op, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) { rethrow_in_op(op, e); }
}

}  // namespace ag::detail
