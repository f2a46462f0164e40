# Run by the CTest test `compile_fail` (see tests/CMakeLists.txt):
#   cmake -DAG_CXX_COMPILER=... -DAG_INCLUDE_DIRS="a|b|c" -DAG_SOURCE=... -P compile_fail.cmake
# Compiles AG_SOURCE twice with -fsyntax-only: as is it must fail, and the compiler's
# output must carry ModuleHolder's message; with -DAG_FIXED (the `{nullptr}` form) it
# must compile, which shows that the failure comes from the holder, not the setup.
cmake_minimum_required(VERSION 3.21)

foreach(_var AG_CXX_COMPILER AG_INCLUDE_DIRS AG_SOURCE)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "compile_fail: ${_var} is not set")
  endif()
endforeach()

string(REPLACE "|" ";" _dirs "${AG_INCLUDE_DIRS}")
set(_flags -std=c++20 -fsyntax-only)
foreach(_d IN LISTS _dirs)
  list(APPEND _flags "-I${_d}")
endforeach()

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} -DAG_FIXED "${AG_SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "compile_fail: the fixed snippet does not compile:\n${_out}")
endif()

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} "${AG_SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "compile_fail: `nn::Linear head;` compiled; it must be refused")
endif()
set(_want "Declare module members as `nn::Linear head{nullptr};`")
string(FIND "${_out}" "${_want}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "compile_fail: the error does not say \"${_want}\":\n${_out}")
endif()
string(REGEX MATCHALL "error:" _errors "${_out}")
list(LENGTH _errors _n)
message(STATUS "compile_fail: OK (${_n} error line(s))")
