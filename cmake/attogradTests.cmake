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
  target_link_libraries(${name} PRIVATE
    attograd::attograd ag_internal ag_test_main doctest::doctest ${_ag_LIBRARIES})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests" ${_ag_INCLUDE_DIRS})
  target_compile_definitions(${name} PRIVATE
    AG_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures"
    AG_TMP_DIR="${_tests_bin}/tmp")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${_tests_bin}")
  ag_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    LABELS "${_ag_LABEL}"
    TIMEOUT 300
    WORKING_DIRECTORY "${_tests_bin}")
endfunction()
