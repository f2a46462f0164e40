# Run by the CTest test `layer_include_refused` (tests/structure/CMakeLists.txt):
#   cmake -DAG_CXX_COMPILER=... -DAG_INCLUDE_DIRS="a|b" -DAG_SOURCE=... -DAG_HEADER=... -P compile_upward.cmake
# Compiles AG_SOURCE with one layer's include directories: with -DAG_FIXED it must
# compile (the setup is sound); as is it must fail because AG_HEADER is not found.
cmake_minimum_required(VERSION 3.21)
foreach(_var AG_CXX_COMPILER AG_INCLUDE_DIRS AG_SOURCE AG_HEADER)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "layer_include_refused: ${_var} is not set")
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
  message(FATAL_ERROR "layer_include_refused: the layer's own headers do not compile:\n${_out}")
endif()
execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} "${AG_SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "layer_include_refused: ${AG_HEADER} compiled with the lower layer's include directories")
endif()
string(FIND "${_out}" "${AG_HEADER}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "layer_include_refused: failed, but not for ${AG_HEADER}:\n${_out}")
endif()
message(STATUS "layer_include_refused: OK (${AG_HEADER} is not visible to the layer)")
