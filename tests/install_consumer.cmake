# Run by the CTest test `install_consumer` (see tests/CMakeLists.txt):
#   cmake -DAG_BUILD_DIR=... -DAG_CONFIG=... -DAG_CONSUMER_SOURCE_DIR=... -DAG_WORK_DIR=...
#         -DAG_GENERATOR=... [-DAG_MAKE_PROGRAM=...] [-DAG_CXX_COMPILER=...]
#         [-DAG_CXX_FLAGS=...] [-DAG_CXX_FLAGS_CONFIG=...] [-DAG_LIBDIR=lib]
#         [-DAG_INCLUDEDIR=include] [-DAG_BINDIR=bin] [-DAG_PROGRAMS=a,b,...]
#         -P install_consumer.cmake
# 1. cmake --install the attograd build into ${AG_WORK_DIR}/prefix and check that the
#    library, headers, CMake package, attograd.pc and the programs AG_PROGRAMS are there;
# 2. configure tests/consumer with CMAKE_PREFIX_PATH=<prefix>, build it, run it;
# 3. compile tests/consumer/main.cpp with `pkg-config --cflags --libs attograd` from
#    <prefix>, run it;
# 4. run every installed <prefix>/bin/attograd-* --help without LD_LIBRARY_PATH.
cmake_minimum_required(VERSION 3.21)

foreach(_var AG_BUILD_DIR AG_CONFIG AG_CONSUMER_SOURCE_DIR AG_WORK_DIR AG_GENERATOR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "install_consumer: ${_var} is not set")
  endif()
endforeach()

set(_prefix "${AG_WORK_DIR}/prefix")
set(_build "${AG_WORK_DIR}/build")

# Start clean: a stale prefix could hide a header that is no longer installed.
file(REMOVE_RECURSE "${_prefix}" "${_build}")
file(MAKE_DIRECTORY "${_prefix}" "${_build}")

function(ag_step what)
  message(STATUS "install_consumer: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${_rc})")
  endif()
endfunction()

ag_step("install ${AG_BUILD_DIR} (${AG_CONFIG}) into ${_prefix}"
  "${CMAKE_COMMAND}" --install "${AG_BUILD_DIR}" --config "${AG_CONFIG}"
                     --prefix "${_prefix}")

foreach(_var LIBDIR INCLUDEDIR BINDIR)
  string(TOLOWER "${_var}" _default)
  string(REPLACE "dir" "" _default "${_default}")
  if(NOT AG_${_var})
    set(AG_${_var} "${_default}")
  endif()
endforeach()
file(GLOB _lib "${_prefix}/${AG_LIBDIR}/libattograd.*")
set(_expected
  "${AG_INCLUDEDIR}/attograd/attograd.h" "${AG_INCLUDEDIR}/attograd/version.h"
  "${AG_LIBDIR}/cmake/attograd/attogradConfig.cmake"
  "${AG_LIBDIR}/cmake/attograd/attogradConfigVersion.cmake"
  "${AG_LIBDIR}/pkgconfig/attograd.pc")
string(REPLACE "," ";" _programs "${AG_PROGRAMS}")
foreach(_program IN LISTS _programs)
  list(APPEND _expected "${AG_BINDIR}/${_program}")
endforeach()
set(_missing "")
foreach(_file IN LISTS _expected)
  if(NOT EXISTS "${_prefix}/${_file}")
    list(APPEND _missing "${_file}")
  endif()
endforeach()
if(NOT _lib)
  list(APPEND _missing "${AG_LIBDIR}/libattograd.*")
endif()
if(_missing)
  message(FATAL_ERROR "install_consumer: not installed in ${_prefix}: ${_missing}")
endif()

set(_configure_args
  -S "${AG_CONSUMER_SOURCE_DIR}" -B "${_build}" -G "${AG_GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${_prefix}"
  "-DCMAKE_BUILD_TYPE=${AG_CONFIG}"
  # Only the freshly installed package, not one from the user package registry.
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(AG_MAKE_PROGRAM)
  list(APPEND _configure_args "-DCMAKE_MAKE_PROGRAM=${AG_MAKE_PROGRAM}")
endif()
if(AG_CXX_COMPILER)
  list(APPEND _configure_args "-DCMAKE_CXX_COMPILER=${AG_CXX_COMPILER}")
endif()
if(DEFINED AG_CXX_FLAGS)
  list(APPEND _configure_args "-DCMAKE_CXX_FLAGS=${AG_CXX_FLAGS}")
endif()
if(DEFINED AG_CXX_FLAGS_CONFIG AND NOT AG_CXX_FLAGS_CONFIG STREQUAL "")
  string(TOUPPER "${AG_CONFIG}" _config_uc)
  list(APPEND _configure_args "-DCMAKE_CXX_FLAGS_${_config_uc}=${AG_CXX_FLAGS_CONFIG}")
endif()

ag_step("configure the consumer" "${CMAKE_COMMAND}" ${_configure_args})
ag_step("build the consumer" "${CMAKE_COMMAND}" --build "${_build}" --config "${AG_CONFIG}")

# Find the executable (multi-config generators put it in a <config>/ subfolder).
set(_exe "")
foreach(_candidate "${_build}/attograd_consumer" "${_build}/${AG_CONFIG}/attograd_consumer"
                   "${_build}/attograd_consumer.exe"
                   "${_build}/${AG_CONFIG}/attograd_consumer.exe")
  if(EXISTS "${_candidate}")
    set(_exe "${_candidate}")
    break()
  endif()
endforeach()
if(NOT _exe)
  message(FATAL_ERROR "install_consumer: attograd_consumer was not built in ${_build}")
endif()
ag_step("run the consumer" "${_exe}")

# ---- the same program through pkg-config ----------------------------------------------
find_program(_pkg_config NAMES pkg-config pkgconf)
if(NOT _pkg_config)
  message(FATAL_ERROR "install_consumer: no pkg-config (apt-get install pkg-config)")
endif()
set(ENV{PKG_CONFIG_PATH} "${_prefix}/${AG_LIBDIR}/pkgconfig:$ENV{PKG_CONFIG_PATH}")
function(ag_pkg_config out)
  execute_process(COMMAND "${_pkg_config}" ${ARGN} attograd
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: pkg-config ${ARGN} attograd failed (${_rc}): ${_err}")
  endif()
  set(${out} "${_out}" PARENT_SCOPE)
endfunction()
ag_pkg_config(_pc_version --modversion)
# A static libattograd needs its private dependencies on the link line (Libs.private,
# Requires.private), which only --static prints.
set(_pc_static "")
if(NOT _lib MATCHES "\\.so")
  set(_pc_static --static)
endif()
ag_pkg_config(_pc_flags --cflags --libs ${_pc_static})
message(STATUS "install_consumer: pkg-config --cflags --libs ${_pc_static} attograd: ${_pc_flags}")
separate_arguments(_pc_flags UNIX_COMMAND "${_pc_flags}")
set(_cxx "${AG_CXX_COMPILER}")
if(NOT _cxx)
  set(_cxx c++)
endif()
separate_arguments(_cxx_flags UNIX_COMMAND "${AG_CXX_FLAGS} ${AG_CXX_FLAGS_CONFIG}")
set(_pc_exe "${_build}/attograd_consumer_pkg_config")
ag_step("compile the consumer with pkg-config (attograd ${_pc_version})"
  "${_cxx}" -std=c++20 ${_cxx_flags} "-DAG_EXPECTED_VERSION=\"${_pc_version}\""
  "${AG_CONSUMER_SOURCE_DIR}/main.cpp" ${_pc_flags} -o "${_pc_exe}")
# A shared libattograd outside the loader's paths: found through LD_LIBRARY_PATH.
ag_step("run the pkg-config consumer"
  "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${_prefix}/${AG_LIBDIR}" "${_pc_exe}")

# ---- the installed programs run from the prefix ---------------------------------------
file(GLOB _installed_programs "${_prefix}/${AG_BINDIR}/attograd-*")
foreach(_program IN LISTS _installed_programs)
  get_filename_component(_name "${_program}" NAME)
  # No LD_LIBRARY_PATH: the programs find libattograd through their rpath.
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${_program}" --help
    WORKING_DIRECTORY "${AG_WORK_DIR}"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "Example: ${_name} ")
    message(FATAL_ERROR "install_consumer: ${_program} --help failed (${_rc}):\n${_out}${_err}")
  endif()
  message(STATUS "install_consumer: ${AG_BINDIR}/${_name} --help runs")
endforeach()
message(STATUS "install_consumer: OK")
