# Run by the CTest test `install_consumer` (see tests/CMakeLists.txt):
#   cmake -DAG_BUILD_DIR=... -DAG_CONFIG=... -DAG_CONSUMER_SOURCE_DIR=... -DAG_WORK_DIR=...
#         -DAG_GENERATOR=... [-DAG_MAKE_PROGRAM=...] [-DAG_CXX_COMPILER=...]
#         [-DAG_CXX_FLAGS=...] [-DAG_CXX_FLAGS_CONFIG=...] -P install_consumer.cmake
# 1. cmake --install the attograd build into ${AG_WORK_DIR}/prefix
# 2. configure tests/consumer with CMAKE_PREFIX_PATH=<prefix>, build it, run it.
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
message(STATUS "install_consumer: OK")
