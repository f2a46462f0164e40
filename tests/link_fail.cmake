# Run by the CTest test layer_link_refused (tests/structure/CMakeLists.txt):
#   cmake -DAG_CXX_COMPILER=... -DAG_INCLUDE_DIRS="a|b" -DAG_SOURCE=... -DAG_LIBRARY=<lib.so>
#         -DAG_EXPECT=... -DAG_WORK_DIR=... -P link_fail.cmake
# Compiles AG_SOURCE into a shared library linked with -Wl,--no-undefined against
# AG_LIBRARY only, twice: with -DAG_FIXED it must link, which shows that the setup is
# sound; as is it must fail, and the linker's output must carry AG_EXPECT (the symbol
# from the layer above), which shows that it fails for the reason the test is about.
cmake_minimum_required(VERSION 3.21)

foreach(_var AG_CXX_COMPILER AG_INCLUDE_DIRS AG_SOURCE AG_LIBRARY AG_EXPECT AG_WORK_DIR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "link_fail: ${_var} is not set")
  endif()
endforeach()

string(REPLACE "|" ";" _dirs "${AG_INCLUDE_DIRS}")
set(_flags -std=c++20 -fPIC -shared -Wl,--no-undefined)
foreach(_d IN LISTS _dirs)
  list(APPEND _flags "-I${_d}")
endforeach()
file(MAKE_DIRECTORY "${AG_WORK_DIR}")

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} -DAG_FIXED "${AG_SOURCE}" "${AG_LIBRARY}"
                        -o "${AG_WORK_DIR}/fixed.so"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "link_fail: the fixed snippet does not link:\n${_out}")
endif()

execute_process(COMMAND "${AG_CXX_COMPILER}" ${_flags} "${AG_SOURCE}" "${AG_LIBRARY}" -o "${AG_WORK_DIR}/upward.so"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "link_fail: ${AG_SOURCE} linked; it must be refused")
endif()
string(FIND "${_out}" "${AG_EXPECT}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "link_fail: the linker does not say \"${AG_EXPECT}\":\n${_out}")
endif()
message(STATUS "link_fail: refused as expected: ${AG_EXPECT}")
