# The layer check (tools/check_layers, CTest `layer_check`): every #include in a layer's
# files must resolve to that layer or one below it (cmake/attogradLayers.cmake).
#   cmake -DAG_ROOT=<repo> [-DAG_INJECT="<file>|<line>;..."] -P attogradCheckLayers.cmake
# An include is resolved as the compiler would: a quoted one beside the including file
# first, then through the layers' include directories. The build already refuses an
# upward include through an include directory (each layer's target sees only its own
# and the lower ones); this check also sees relative paths ("../op_util.h") and headers
# no translation unit of the layer compiles. AG_INJECT adds lines to files, as if they
# were there, so tests can show the check failing without editing the tree.
cmake_minimum_required(VERSION 3.21)
if(NOT AG_ROOT)
  message(FATAL_ERROR "check_layers: pass -DAG_ROOT=<repository root>")
endif()
get_filename_component(AG_ROOT "${AG_ROOT}" ABSOLUTE)
include("${AG_ROOT}/cmake/attogradLayers.cmake")

# The layer owning a path: the longest layer folder that contains it ("" for none).
function(ag_owner path out)
  set(_best "")
  set(_best_len 0)
  foreach(_l IN LISTS AG_LAYERS)
    set(_d "${AG_ROOT}/${AG_LAYER_${_l}_DIR}/")
    string(LENGTH "${_d}" _len)
    string(FIND "${path}" "${_d}" _at)
    if(_at EQUAL 0 AND _len GREATER _best_len)
      set(_best ${_l})
      set(_best_len ${_len})
    endif()
  endforeach()
  set(${out} "${_best}" PARENT_SCOPE)
endfunction()

set(_chain "")
foreach(_l IN LISTS AG_LAYERS)
  string(APPEND _chain "${_chain_sep}${_l}")
  set(_chain_sep " -> ")
endforeach()

# Extra lines per file, from AG_INJECT.
foreach(_inj IN LISTS AG_INJECT)
  string(FIND "${_inj}" "|" _bar)
  string(SUBSTRING "${_inj}" 0 ${_bar} _f)
  math(EXPR _from "${_bar} + 1")
  string(SUBSTRING "${_inj}" ${_from} -1 _line)
  string(MAKE_C_IDENTIFIER "${_f}" _key)
  list(APPEND _injected_${_key} "${_line}")
endforeach()

set(_errors 0)
set(_files_checked 0)
set(_includes_checked 0)
foreach(_layer IN LISTS AG_LAYERS)
  list(FIND AG_LAYERS ${_layer} _rank)
  file(GLOB_RECURSE _files "${AG_ROOT}/${AG_LAYER_${_layer}_DIR}/*.h" "${AG_ROOT}/${AG_LAYER_${_layer}_DIR}/*.cpp"
                           "${AG_ROOT}/${AG_LAYER_${_layer}_DIR}/*.inl")
  list(SORT _files)
  foreach(_file IN LISTS _files)
    ag_owner("${_file}" _own)
    if(NOT _own STREQUAL _layer)
      continue()  # a nested layer's file: checked as that layer's
    endif()
    math(EXPR _files_checked "${_files_checked} + 1")
    file(RELATIVE_PATH _rel "${AG_ROOT}" "${_file}")
    file(STRINGS "${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]+[\">]")
    string(MAKE_C_IDENTIFIER "${_rel}" _key)
    list(APPEND _lines ${_injected_${_key}})
    get_filename_component(_here "${_file}" DIRECTORY)
    foreach(_line IN LISTS _lines)
      string(REGEX MATCH "#[ \t]*include[ \t]*([\"<])([^\">]+)[\">]" _m "${_line}")
      set(_quote "${CMAKE_MATCH_1}")
      set(_inc "${CMAKE_MATCH_2}")
      set(_candidates "")
      if(_quote STREQUAL "\"")
        list(APPEND _candidates "${_here}/${_inc}")
      endif()
      foreach(_l IN LISTS AG_LAYERS)
        list(APPEND _candidates "${AG_ROOT}/${AG_LAYER_${_l}_INCLUDE}/${_inc}")
      endforeach()
      foreach(_c IN LISTS _candidates)
        if(EXISTS "${_c}" AND NOT IS_DIRECTORY "${_c}")
          get_filename_component(_c "${_c}" ABSOLUTE)
          math(EXPR _includes_checked "${_includes_checked} + 1")
          ag_owner("${_c}" _target)
          if(_target)
            list(FIND AG_LAYERS ${_target} _trank)
            if(_trank GREATER _rank)
              file(RELATIVE_PATH _crel "${AG_ROOT}" "${_c}")
              message(SEND_ERROR "layer check: ${_rel} (layer ${_layer}) includes \"${_inc}\" = ${_crel} "
                                 "of layer ${_target}, above ${_layer} (${_chain})")
              math(EXPR _errors "${_errors} + 1")
            endif()
          endif()
          break()
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(_files_checked LESS 20)
  message(FATAL_ERROR "layer check: only ${_files_checked} files found under ${AG_ROOT}: wrong AG_ROOT?")
endif()
if(_errors GREATER 0)
  message(FATAL_ERROR "layer check: ${_errors} upward include(s); a layer may include only its own "
                      "headers and those of the layers below it (${_chain})")
endif()
message(STATUS "layer check: OK, ${_includes_checked} includes of ${_files_checked} files resolve "
               "within their layer or below (${_chain})")
