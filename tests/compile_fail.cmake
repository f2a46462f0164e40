# Run by CTest tests of code that must not compile (tests/CMakeLists.txt: compile_fail;
# tests/structure/CMakeLists.txt: layer_include_refused):
#   cmake -DAG_CXX_COMPILER=... -DAG_INCLUDE_DIRS="a|b|c" -DAG_SOURCE=... -DAG_EXPECT=...
#         [-DAG_NAME=<test name>] -P compile_fail.cmake
# Compiles AG_SOURCE twice with -fsyntax-only: with -DAG_FIXED it must compile, which
# shows that the setup is sound; as is it must fail, and the compiler's output must
# carry AG_EXPECT, which shows that it fails for the reason the test is about.
cmake_minimum_required(VERSION 3.21)

foreach(_var AG_CXX_COMPILER AG_INCLUDE_DIRS AG_SOURCE AG_EXPECT)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "compile_fail: ${_var} is not set")
  endif()
endforeach()
if(NOT AG_NAME)
  set(AG_NAME compile_fail)
endif()

string(REPLACE "|" ";" _dirs "${AG_INCLUDE_DIRS}")
set(_flags -std=c++20 -fsyntax-only)
foreach(_d IN LISTS _dirs)
  list(APPEND _flags "-I${_d}")
endforeach()

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} -DAG_FIXED "${AG_SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${AG_NAME}: the fixed snippet does not compile:\n${_out}")
endif()

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} "${AG_SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "${AG_NAME}: ${AG_SOURCE} compiled; it must be refused")
endif()
string(FIND "${_out}" "${AG_EXPECT}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "${AG_NAME}: the error does not say \"${AG_EXPECT}\":\n${_out}")
endif()
string(REGEX MATCHALL "error:" _errors "${_out}")
list(LENGTH _errors _n)
message(STATUS "${AG_NAME}: OK (${_n} error line(s), saying \"${AG_EXPECT}\")")
