# Finding attograd's dependencies, with an error that names the Debian package to
# install. Used by the build (CMakeLists.txt, tests/, examples/) and, for static
# builds, by the installed attogradConfig.cmake.
include_guard(GLOBAL)

# Debian package that provides each CMake package.
set(_ag_debian_package_spdlog        libspdlog-dev)
set(_ag_debian_package_nlohmann_json nlohmann-json3-dev)
set(_ag_debian_package_xtl           xtl-dev)
set(_ag_debian_package_xsimd         libxsimd-dev)
set(_ag_debian_package_xtensor       xtensor-dev)
set(_ag_debian_package_doctest       doctest-dev)
set(_ag_debian_package_CLI11         libcli11-dev)
set(_ag_debian_package_OpenBLAS      libopenblas-dev)

# ag_require_package(<name>...): find_package(<name>) each, or stop with
#   attograd needs <name>: apt-get install <debian package>
macro(ag_require_package)
  foreach(_ag_pkg IN ITEMS ${ARGN})
    if(_ag_pkg STREQUAL "xtensor")
      # Makes the xtensor target carry xsimd and XTENSOR_USE_XSIMD.
      set(XTENSOR_USE_XSIMD ON)
    endif()
    find_package(${_ag_pkg} QUIET)
    if(NOT ${_ag_pkg}_FOUND)
      message(FATAL_ERROR
        "attograd needs ${_ag_pkg}: apt-get install ${_ag_debian_package_${_ag_pkg}}")
    endif()
  endforeach()
endmacro()

# ag_require_plplot(): the imported target PkgConfig::PLplot (PLplot's C++ binding and
# its C library, found with pkg-config), for the examples' pictures (examples/common/
# plot.cpp) and their test, or stop naming the Debian packages. The pngcairo device is a
# run-time plugin (plplot-driver-cairo); plot.cpp checks for it when it draws.
macro(ag_require_plplot)
  if(NOT TARGET PkgConfig::PLplot)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(PLplot QUIET IMPORTED_TARGET GLOBAL plplot-c++ plplot)
    endif()
    if(NOT PLplot_FOUND)
      message(FATAL_ERROR
        "attograd's examples need PLplot: apt-get install libplplot-dev plplot-driver-cairo")
    endif()
  endif()
endmacro()

# ag_find_openblas([OPTIONAL]): defines the imported target attograd::OpenBLAS
# (libopenblas + the directory holding cblas.h). Tries pkg-config `openblas`, then
# FindBLAS with BLA_VENDOR=OpenBLAS plus a search for cblas.h. Without OPTIONAL a
# failure stops CMake; with it, ATTOGRAD_OPENBLAS_FOUND is set to FALSE.
function(ag_find_openblas)
  cmake_parse_arguments(PARSE_ARGV 0 _ag "OPTIONAL" "" "")
  if(TARGET attograd::OpenBLAS)
    set(ATTOGRAD_OPENBLAS_FOUND TRUE PARENT_SCOPE)
    return()
  endif()

  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(ATTOGRAD_OPENBLAS_PC QUIET IMPORTED_TARGET openblas)
  endif()
  if(ATTOGRAD_OPENBLAS_PC_FOUND)
    add_library(attograd::OpenBLAS INTERFACE IMPORTED)
    target_link_libraries(attograd::OpenBLAS INTERFACE PkgConfig::ATTOGRAD_OPENBLAS_PC)
    set(_ag_how "pkg-config, version ${ATTOGRAD_OPENBLAS_PC_VERSION}")
  else()
    set(BLA_VENDOR OpenBLAS)
    find_package(BLAS QUIET)
    # Debian's OpenBLASConfig.cmake (no target, only variables) is a good hint.
    find_package(OpenBLAS CONFIG QUIET)
    find_path(ATTOGRAD_CBLAS_INCLUDE_DIR cblas.h
      HINTS ${OpenBLAS_INCLUDE_DIRS}
      PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas)
    if(NOT BLAS_FOUND OR NOT ATTOGRAD_CBLAS_INCLUDE_DIR)
      set(ATTOGRAD_OPENBLAS_FOUND FALSE PARENT_SCOPE)
      set(_ag_msg "attograd needs OpenBLAS: apt-get install libopenblas-dev")
      if(_ag_OPTIONAL)
        message(STATUS "${_ag_msg}")
        return()
      endif()
      message(FATAL_ERROR "${_ag_msg}")
    endif()
    add_library(attograd::OpenBLAS INTERFACE IMPORTED)
    target_link_libraries(attograd::OpenBLAS INTERFACE BLAS::BLAS)
    target_include_directories(attograd::OpenBLAS INTERFACE "${ATTOGRAD_CBLAS_INCLUDE_DIR}")
    set(_ag_how "FindBLAS, cblas.h in ${ATTOGRAD_CBLAS_INCLUDE_DIR}")
  endif()
  if(NOT _ag_OPTIONAL)
    message(STATUS "attograd: OpenBLAS found (${_ag_how})")
  endif()
  set(ATTOGRAD_OPENBLAS_FOUND TRUE PARENT_SCOPE)
endfunction()
