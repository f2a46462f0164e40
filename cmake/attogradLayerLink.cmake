# The layered link: each layer's objects linked as a shared library of its own against
# the layers below it only, with -Wl,--no-undefined, so that a call from a layer into one
# above (which the include check cannot see when a lower header declares the function)
# fails to link and the linker names the symbol. Build-tree only (build/layer_link/); the
# installed product stays the one libattograd.
#
#   ag_add_layer_link(<private libraries>...)   targets ag_link_<layer>, built with ALL
#
# Not under sanitizers or libFuzzer: their runtimes leave symbols for the executable to
# define, which --no-undefined refuses in any shared library.
function(ag_add_layer_link)
  set(_below "")
  foreach(_layer IN LISTS AG_LAYERS)
    add_library(ag_link_${_layer} SHARED $<TARGET_OBJECTS:ag_${_layer}>)
    target_link_libraries(ag_link_${_layer} PRIVATE ${_below} ${ARGN})
    target_link_options(ag_link_${_layer} PRIVATE -Wl,--no-undefined)
    set_target_properties(ag_link_${_layer} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/layer_link")
    # Every layer below, not only the next: the linker resolves a symbol only from the
    # libraries on its command line (Debian's ld: --no-copy-dt-needed-entries).
    list(APPEND _below ag_link_${_layer})
  endforeach()
endfunction()
