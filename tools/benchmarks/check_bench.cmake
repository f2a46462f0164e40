# CTest's check of one bench program (ag_bench, libtorch_bench): runs
# `EXE --workload W --threads 1 --reps 2 --warmup 0 EXTRA` and fails unless it exits
# with 0 and prints one JSON line with the workload, two positive times, a peak RSS, and
# (workloads 8, 9 of ag_bench, f32) cached decoding equal to recomputation, (15) two
# positive bandwidths, (16) the fashion example's default CNN (412,666 parameters: the
# sides build the same net) and, under --autocast, two times of the interleaved f32 step,
# (18, 19) the 2-layer LSTM and GRU of width 512 (4,202,496 and 3,151,872 parameters).
#   cmake -DEXE=path/ag_bench -DWORKLOAD=8 ["-DEXTRA=--L 128 --B 2"] -P this
separate_arguments(_extra UNIX_COMMAND "${EXTRA}")
execute_process(COMMAND "${EXE}" --workload ${WORKLOAD} --threads 1 --reps 2 --warmup 0 ${_extra}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${_rc}:\n${_err}")
endif()
string(REGEX MATCHALL "{[^\n]*}" _lines "${_out}")
list(LENGTH _lines _n)
if(NOT _n EQUAL 1)
  message(FATAL_ERROR "${EXE}: expected one JSON line, got ${_n}:\n${_out}\n${_err}")
endif()
macro(field var)
  string(JSON ${var} ERROR_VARIABLE _jerr GET "${_lines}" ${ARGN})
  if(_jerr)
    message(FATAL_ERROR "${EXE}: JSON field ${ARGN}: ${_jerr}\n${_lines}")
  endif()
endmacro()
field(_w workload)
string(JSON _ntimes LENGTH "${_lines}" times)
field(_t0 times 0)
field(_t1 times 1)
field(_peak peak_rss_kb)
if(NOT _w EQUAL WORKLOAD OR NOT _ntimes EQUAL 2 OR NOT _t0 GREATER 0 OR NOT _t1 GREATER 0 OR NOT _peak GREATER 0)
  message(FATAL_ERROR "${EXE}: workload ${_w}, ${_ntimes} times (${_t0}, ${_t1}), peak ${_peak} KiB:\n${_lines}")
endif()
# workload 15: a bandwidth for each repetition, above zero
string(JSON _gbs ERROR_VARIABLE _nogbs GET "${_lines}" info gb_per_s 1)
if(WORKLOAD EQUAL 15 AND (_nogbs OR NOT _gbs GREATER 0))
  message(FATAL_ERROR "${EXE}: workload 15 without two positive info.gb_per_s:\n${_lines}")
endif()
# workload 16: the example's net on every side; under autocast, the f32 companion timed
if(WORKLOAD EQUAL 16)
  field(_params info parameters)
  if(NOT _params EQUAL 412666)
    message(FATAL_ERROR "${EXE}: workload 16's CNN has ${_params} parameters, not the fashion example's "
                        "412666 (examples/fashion/model.h's default): update the bench's twin\n${_lines}")
  endif()
  string(JSON _f32 ERROR_VARIABLE _nof32 GET "${_lines}" extra f32 1)
  if(EXTRA MATCHES "--autocast" AND (_nof32 OR NOT _f32 GREATER 0))
    message(FATAL_ERROR "${EXE}: workload 16 under autocast without two f32 times in extra.f32:\n${_lines}")
  endif()
endif()
# workloads 18, 19: every side's LSTM / GRU of the same size
if(WORKLOAD EQUAL 18 OR WORKLOAD EQUAL 19)
  field(_params info parameters)
  if(WORKLOAD EQUAL 18)
    set(_want 4202496)
  else()
    set(_want 3151872)
  endif()
  if(NOT _params EQUAL _want)
    message(FATAL_ERROR "${EXE}: workload ${WORKLOAD}'s network has ${_params} parameters, not ${_want} "
                        "(2 layers, input and hidden 512)\n${_lines}")
  endif()
endif()
string(JSON _same ERROR_VARIABLE _none GET "${_lines}" info cache_equals_no_cache)
if(NOT _none AND NOT _same)
  message(FATAL_ERROR "${EXE}: decoding with the KV cache differs from recomputation:\n${_lines}")
endif()
