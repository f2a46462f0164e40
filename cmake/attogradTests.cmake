# The doctest programs: ag_add_doctest() and the ag_test_main library it links. Included
# by tests/CMakeLists.txt (the library's tests, one folder per layer) and by
# examples/CMakeLists.txt (the examples' tests, beside each example), so that neither
# depends on the other being configured first. Needs the ag_internal target that the
# top-level CMakeLists.txt defines when ATTOGRAD_BUILD_TESTS is on.
#
# Every test program lands in <build>/tests/<name> and runs there, wherever its source
# sits (.ci/run and people run build/tests/test_xxx by hand).

include(attogradDependencies)   # ag_require_package()
# Again in each including directory: imported targets are visible only where found.
ag_require_package(doctest)

if(NOT TARGET ag_test_main)
  add_library(ag_test_main STATIC "${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp")
  target_link_libraries(ag_test_main PUBLIC doctest::doctest)
  target_compile_features(ag_test_main PUBLIC cxx_std_20)
  ag_set_warnings(ag_test_main)
  file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/tests/tmp")
endif()

# ag_test_setup(<target>): what every test program compiles with: the library, its
# internal view (ag_internal), doctest, tests/ on the include path, AG_FIXTURES_DIR and
# AG_TMP_DIR, our warnings, and the one precompiled header of all the tests.
#
# ATTOGRAD_TEST_PCH: parsing <attograd/attograd.h>, doctest and the standard headers
# took about 2 of a test source's median 6 seconds (GCC 12, -O2), in each of ~130
# sources; ag_test_pch parses them once, and every test program reuses its header
# (REUSE_FROM, which needs the same flags and definitions: hence one setup for all).
# A test source still includes what it uses: a build with the option OFF checks that.
option(ATTOGRAD_TEST_PCH "Compile the tests with one precompiled header" ON)
# The test programs' own code checks the library and is thin around its calls: it can
# compile at a lower level than the library (tools/check: -O1 beside the library's -O2,
# ~30% less compile time; .ci/run's sanitizer phase: -O0 beside -O1, ~60% less).
set(ATTOGRAD_TEST_OPTIMIZE "" CACHE STRING
    "Optimization flag for the test programs' own sources (e.g. -O1); empty: the build type's")
function(ag_test_setup target)
  target_link_libraries(${target} PRIVATE attograd::attograd ag_internal doctest::doctest)
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  target_compile_definitions(${target} PRIVATE
    AG_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures"
    AG_TMP_DIR="${PROJECT_BINARY_DIR}/tests/tmp")
  ag_set_warnings(${target})
  # AG_TESTS_AT_BUILD_OPTIMIZATION (tests/CMakeLists.txt): tests whose own code computes
  # large references keep the build type's level, and so their own copy of the headers.
  if(target IN_LIST AG_TESTS_AT_BUILD_OPTIMIZATION)
    return()
  endif()
  if(ATTOGRAD_TEST_OPTIMIZE)
    target_compile_options(${target} PRIVATE ${ATTOGRAD_TEST_OPTIMIZE})
  endif()
  if(ATTOGRAD_TEST_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # Through a precompiled header GCC 12 reports its false middle-end warnings inside
    # <string>'s operator+ (GCC bug 105651: -Warray-bounds, -Wstringop-overflow), which
    # it keeps silent in a system header reached by a plain #include.
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread
                                             -Wno-restrict)
  endif()
  if(ATTOGRAD_TEST_PCH AND NOT target STREQUAL "ag_test_pch")
    target_precompile_headers(${target} REUSE_FROM ag_test_pch)
  endif()
endfunction()
if(ATTOGRAD_TEST_PCH AND NOT TARGET ag_test_pch)
  add_library(ag_test_pch OBJECT "${PROJECT_SOURCE_DIR}/tests/test_pch.cpp")
  ag_test_setup(ag_test_pch)
  target_precompile_headers(ag_test_pch PRIVATE
    <doctest/doctest.h> <attograd/attograd.h>
    "${PROJECT_SOURCE_DIR}/tests/test_util.h" "${PROJECT_SOURCE_DIR}/tests/tensor_checks.h"
    <algorithm> <cmath> <cstdint> <functional> <limits> <map> <memory> <sstream> <string>
    <utility> <vector>)
endif()

# ag_add_doctest(<name> <source> LABEL <label>
#                [SOURCES <file>...] [LIBRARIES <target>...] [INCLUDE_DIRS <dir>...])
#   The executable <name> from <source> (+ SOURCES), linked with the library, its
#   internal view (ag_internal: "kernels/kernels.h", "kernels/dispatch.h"), doctest's main and
#   LIBRARIES, and the CTest test <name> labelled <label> (its layer, or `examples`):
#   `ctest -L <label>` runs one layer. It sees tests/ (test_util.h, tensor_checks.h),
#   AG_FIXTURES_DIR (tests/fixtures) and AG_TMP_DIR (<build>/tests/tmp).
function(ag_add_doctest name source)
  cmake_parse_arguments(PARSE_ARGV 2 _ag "" "LABEL" "SOURCES;LIBRARIES;INCLUDE_DIRS")
  if(NOT _ag_LABEL OR _ag_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ag_add_doctest(${name}): needs LABEL <layer>; unknown arguments: "
                        "${_ag_UNPARSED_ARGUMENTS}")
  endif()
  set(_tests_bin "${PROJECT_BINARY_DIR}/tests")
  add_executable(${name} "${source}" ${_ag_SOURCES})
  ag_test_setup(${name})
  target_link_libraries(${name} PRIVATE ag_test_main ${_ag_LIBRARIES})
  target_include_directories(${name} PRIVATE ${_ag_INCLUDE_DIRS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${_tests_bin}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    LABELS "${_ag_LABEL}"
    TIMEOUT 300
    WORKING_DIRECTORY "${_tests_bin}")
endfunction()
