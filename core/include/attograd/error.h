#pragma once
/// \file
/// Typed errors. Messages follow "op: what is wrong", then every shape and dtype
/// involved, e.g. "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)".
#include <sstream>
#include <stdexcept>
#include <string>

namespace ag {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ShapeError : Error {
  using Error::Error;
};  ///< incompatible shapes or dims
struct DTypeError : Error {
  using Error::Error;
};  ///< unsupported or mismatched dtypes
struct IndexError : Error {
  using Error::Error;
};  ///< index or id out of range
/// A name already taken (PyTorch's KeyError "attribute 'w' already exists").
struct KeyError : Error {
  using Error::Error;
};
struct ValueError : Error {
  using Error::Error;
};  ///< a bad argument value
struct IOError : Error {
  using Error::Error;
};  ///< files: missing, truncated, malformed
struct AutogradError : Error {
  using Error::Error;
};  ///< misuse of the graph (freed, no grad)
/// An allocation the system cannot satisfy (PyTorch: RuntimeError "not enough memory").
struct MemoryError : Error {
  using Error::Error;
};
/// A collective that failed or was called inconsistently across ranks (ag::dist).
struct DistError : Error {
  using Error::Error;
};
struct VersionError : AutogradError {
  using AutogradError::AutogradError;
};  ///< in-place after save

namespace detail {
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace ag

/// `AG_CHECK(cond, ShapeError, "matmul: shapes ", a, " and ", b, " ...")` throws the typed
/// error with the concatenated message when cond is false.
#define AG_CHECK(cond, ErrorType, ...) \
  do { \
    if (!(cond)) throw ::ag::ErrorType(::ag::detail::cat(__VA_ARGS__)); \
  } while (0)

/// Internal invariants: a failure is a bug in attograd, not in the caller's input.
#define AG_ASSERT(cond, ...) \
  do { \
    if (!(cond)) \
      throw ::ag::Error(::ag::detail::cat("internal error (", __FILE__, ":", __LINE__, "): ", __VA_ARGS__)); \
  } while (0)
