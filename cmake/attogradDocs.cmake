# The API reference: `cmake --build build --target docs` runs Doxygen over the public
# headers (and the design documents) into <build>/docs/html. Any warning fails it,
# among them a public symbol without a comment. Without Doxygen there is no target.
find_package(Doxygen 1.9)   # 1.9 for WARN_AS_ERROR = FAIL_ON_WARNINGS
if(NOT DOXYGEN_FOUND)
  message(STATUS "attograd: Doxygen (>= 1.9) not found: no `docs` target and no "
                 "docs_reference test (apt-get install doxygen)")
  return()
endif()
message(STATUS "attograd: API reference by Doxygen ${DOXYGEN_VERSION}: "
               "cmake --build <build> --target docs")

set(AG_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs")
set(_ag_docs_pages
  "${PROJECT_SOURCE_DIR}/cmake/doxygen/mainpage.md"
  "${PROJECT_SOURCE_DIR}/cmake/doxygen/namespaces.dox"
  "${PROJECT_SOURCE_DIR}/core/AUTOGRAD.md"
  "${PROJECT_SOURCE_DIR}/nn/ATTENTION.md"
  "${PROJECT_SOURCE_DIR}/nn/MASKS.md"
  "${PROJECT_SOURCE_DIR}/ops/kernels/FLASH_ATTENTION.md"
  "${PROJECT_SOURCE_DIR}/optim/CHECKPOINTS.md"
  "${PROJECT_SOURCE_DIR}/core/DISTRIBUTED.md")
set(AG_DOCS_MAINPAGE "${PROJECT_SOURCE_DIR}/cmake/doxygen/mainpage.md")
# Doxyfile lists are space separated, each path quoted.
set(AG_DOCS_INPUT "")
set(AG_DOCS_STRIP_PATHS "")
# version.h is generated from the project version into the build tree.
foreach(_path IN LISTS _ag_public_include_dirs _ag_generated_include_dir _ag_docs_pages)
  string(APPEND AG_DOCS_INPUT " \"${_path}\"")
endforeach()
foreach(_path IN LISTS _ag_public_include_dirs _ag_generated_include_dir)
  string(APPEND AG_DOCS_STRIP_PATHS " \"${_path}\"")
endforeach()
string(APPEND AG_DOCS_STRIP_PATHS " \"${PROJECT_SOURCE_DIR}\"")

configure_file("${PROJECT_SOURCE_DIR}/cmake/doxygen/Doxyfile.in"
               "${AG_DOCS_OUTPUT_DIR}/Doxyfile" @ONLY)

set(_ag_public_header_globs "")
foreach(_dir IN LISTS _ag_public_include_dirs)
  list(APPEND _ag_public_header_globs "${_dir}/*.h")
endforeach()
file(GLOB_RECURSE _ag_public_headers CONFIGURE_DEPENDS ${_ag_public_header_globs})
add_custom_command(
  OUTPUT "${AG_DOCS_OUTPUT_DIR}/html/index.html"
  COMMAND "${CMAKE_COMMAND}" -E remove_directory "${AG_DOCS_OUTPUT_DIR}/html"
  COMMAND Doxygen::doxygen "${AG_DOCS_OUTPUT_DIR}/Doxyfile"
  DEPENDS "${AG_DOCS_OUTPUT_DIR}/Doxyfile" "${PROJECT_SOURCE_DIR}/cmake/doxygen/examples.awk"
          ${_ag_public_headers} ${_ag_docs_pages}
  WORKING_DIRECTORY "${AG_DOCS_OUTPUT_DIR}"
  COMMENT "Doxygen: API reference in ${AG_DOCS_OUTPUT_DIR}/html"
  VERBATIM)
add_custom_target(docs DEPENDS "${AG_DOCS_OUTPUT_DIR}/html/index.html")

# CI: the reference builds with no warning (an undocumented public symbol fails it).
if(ATTOGRAD_BUILD_TESTS)
  add_test(NAME docs_reference
    COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}" --target docs)
  set_tests_properties(docs_reference PROPERTIES TIMEOUT 300 LABELS docs)
endif()
