# attograd.pc for users who do not use CMake, from cmake/attograd.pc.in, installed to
# <libdir>/pkgconfig. Included by CMakeLists.txt after the library target exists.
#
# A shared libattograd links its private dependencies itself, so the .pc names only
# spdlog (in the public headers). A static one also lists what a static link needs:
# OpenBLAS, zlib, oneDNN when built with it, and, when ag::dist runs on it, MPI (Requires.private, or Libs.private when
# OpenBLAS was found without pkg-config).

# The prefix from the .pc's own folder, so the file stays right after
# `cmake --install --prefix <other>` (pkg-config sets ${pcfiledir}).
set(_ag_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH AG_PC_RELATIVE_PREFIX "/prefix/${_ag_pc_dir}" "/prefix")
string(REGEX REPLACE "/$" "" AG_PC_RELATIVE_PREFIX "${AG_PC_RELATIVE_PREFIX}")
foreach(_ag_kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_ag_kind}}")
    set(AG_PC_${_ag_kind} "${CMAKE_INSTALL_${_ag_kind}}")
  else()
    set(AG_PC_${_ag_kind} "\${prefix}/${CMAKE_INSTALL_${_ag_kind}}")
  endif()
endforeach()

set(AG_PC_REQUIRES_PRIVATE "")
set(AG_PC_LIBS_PRIVATE "")
if(NOT ATTOGRAD_SHARED)
  set(_ag_requires "")
  # ag_find_openblas() wraps the pkg-config target when `openblas` has a .pc.
  get_target_property(_ag_blas_libs attograd::OpenBLAS INTERFACE_LINK_LIBRARIES)
  if("PkgConfig::ATTOGRAD_OPENBLAS_PC" IN_LIST _ag_blas_libs)
    list(APPEND _ag_requires openblas)
  else()
    list(APPEND AG_PC_LIBS_PRIVATE -lopenblas)
  endif()
  list(APPEND _ag_requires zlib)   # gzip-compressed IDX files (ag::data::read_idx)
  if(ATTOGRAD_HAVE_MPI)
    # Debian's alternatives name the installed MPI's C library mpi-c (Open MPI, MPICH).
    list(APPEND _ag_requires mpi-c)
  endif()
  if(ATTOGRAD_HAVE_DNNL)
    list(APPEND AG_PC_LIBS_PRIVATE -ldnnl)   # oneDNN ships no .pc
  endif()
  list(JOIN _ag_requires ", " AG_PC_REQUIRES_PRIVATE)
  list(APPEND AG_PC_LIBS_PRIVATE -pthread)   # the thread pool (core/runtime.cpp)
  list(JOIN AG_PC_LIBS_PRIVATE " " AG_PC_LIBS_PRIVATE)
endif()

configure_file("${PROJECT_SOURCE_DIR}/cmake/attograd.pc.in"
               "${PROJECT_BINARY_DIR}/attograd.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/attograd.pc" DESTINATION "${_ag_pc_dir}")
