# Run by the CTest tests example_help_* (examples/CMakeLists.txt):
#   cmake -DAG_PROGRAM=<example> -DAG_EXPECT=<regex> -DAG_FOOTER=<text> -P example_help.cmake
# `<example> --help` must exit 0 and print both an option with its default value
# (AG_EXPECT, a regex) and the one-line usage example (AG_FOOTER, literal text).
cmake_minimum_required(VERSION 3.21)

foreach(_var AG_PROGRAM AG_EXPECT AG_FOOTER)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "example_help: ${_var} is not set")
  endif()
endforeach()

execute_process(COMMAND "${AG_PROGRAM}" --help
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "example_help: ${AG_PROGRAM} --help exited with ${_rc}\n${_out}${_err}")
endif()
if(NOT _out MATCHES "${AG_EXPECT}")
  message(FATAL_ERROR "example_help: ${AG_PROGRAM} --help does not show the default "
                      "'${AG_EXPECT}' (regex):\n${_out}")
endif()
string(FIND "${_out}" "${AG_FOOTER}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "example_help: ${AG_PROGRAM} --help has no usage example "
                      "'${AG_FOOTER}':\n${_out}")
endif()
message(STATUS "example_help: ${AG_PROGRAM} --help shows '${AG_EXPECT}' and '${AG_FOOTER}'")
