# The library's layers, lowest first. Each layer may include its own headers and those
# of the layers below it, never one above: the build gives each layer's target only
# those include directories (an upward #include does not compile), and
# tools/check_layers.cmake (the CTest test `layer_check`) reads this same table to
# catch what the compiler cannot see (a relative path up into another folder).
#
#   layer     folder           public headers                   what
#   core      core/            core/include/attograd/           Tensor, Storage, dtype, shape, the tape
#                                                               (Node, record, Saved, grad mode), threads, RNG
#   kernels   ops/kernels/     ops/kernels/include/kernels/     raw compute, ISA dispatch (internal headers)
#   dist      core/dist/       core/dist/include/attograd/      the process group (MPI), raw collectives
#   ops       ops/             ops/include/attograd/            differentiable ops, factories, Tensor methods
#   autograd  core/autograd/   core/autograd/include/attograd/  the engine (backward, grad), gradcheck, anomaly
#   nn        nn/              nn/include/attograd/             modules, functional, data, DDP, tensor parallel
#   optim     optim/           optim/include/attograd/          optimizers, schedulers, clipping, checkpoints;
#                                                               the umbrella <attograd/attograd.h>
#
# A layer's folder holds its sources (*.cpp directly in it) and headers only its own
# sources use (included by relative path, "op_util.h"); a folder of a layer nested in
# another's (core/dist in core) belongs to the nested layer.
set(AG_LAYERS core kernels dist ops autograd nn optim)
set(AG_LAYER_core_DIR core)
set(AG_LAYER_kernels_DIR ops/kernels)
set(AG_LAYER_dist_DIR core/dist)
set(AG_LAYER_ops_DIR ops)
set(AG_LAYER_autograd_DIR core/autograd)
set(AG_LAYER_nn_DIR nn)
set(AG_LAYER_optim_DIR optim)
foreach(_layer IN LISTS AG_LAYERS)
  set(AG_LAYER_${_layer}_INCLUDE "${AG_LAYER_${_layer}_DIR}/include")
endforeach()
# Source folders beyond the layer's own (subfolders of one concern), relative to the root.
set(AG_LAYER_ops_EXTRA_DIRS ops/norm)

# The public include directories (installed): every layer's but the kernels', whose
# headers are internal to the library (they name xsimd and the ISA dispatch).
set(AG_PUBLIC_LAYERS core dist ops autograd nn optim)

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # ag_add_layer(<layer> [LIBRARIES <private libs>...]): an OBJECT library ag_<layer> of
  # the layer's sources that sees its own include directory and the ones below it.
  # Usage requirements flow upward through target_link_libraries, so linking the layer
  # just below is enough.
  function(ag_add_layer layer)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "LIBRARIES")
    set(_dirs "${AG_LAYER_${layer}_DIR}" ${AG_LAYER_${layer}_EXTRA_DIRS})
    set(_globs "")
    foreach(_d IN LISTS _dirs)
      list(APPEND _globs "${PROJECT_SOURCE_DIR}/${_d}/*.cpp")
    endforeach()
    file(GLOB _sources CONFIGURE_DEPENDS ${_globs})
    list(SORT _sources)
    add_library(ag_${layer} OBJECT ${_sources})
    target_include_directories(ag_${layer} PUBLIC
      "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/${AG_LAYER_${layer}_INCLUDE}>")
    list(FIND AG_LAYERS ${layer} _rank)
    if(_rank GREATER 0)
      math(EXPR _below "${_rank} - 1")
      list(GET AG_LAYERS ${_below} _lower)
      target_link_libraries(ag_${layer} PUBLIC ag_${_lower})
    endif()
    target_link_libraries(ag_${layer} PRIVATE ${ARG_LIBRARIES})
    target_compile_features(ag_${layer} PUBLIC cxx_std_20)
    set_target_properties(ag_${layer} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    ag_set_warnings(ag_${layer})
  endfunction()
endif()
