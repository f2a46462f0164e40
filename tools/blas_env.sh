# Sourced by tools/check, tools/demo and .ci/run. Debian's OpenBLAS (0.3.21) falls back to
# kernels without AVX2 on CPUs newer than itself (an Emerald Rapids), and products then
# run several times slower (tools/benchmarks/README.md, "OpenBLAS on a CPU it does not
# know").
# blas_env exports the OPENBLAS_CORETYPE that fixes it, unless one is set already or
# python3 (which asks OpenBLAS, tools/benchmarks/bench_common.py) is missing.
blas_env() {
  if [[ -n ${OPENBLAS_CORETYPE:-} ]] || ! command -v python3 >/dev/null 2>&1; then
    return 0
  fi
  local coretype
  coretype=$(python3 "$(dirname "${BASH_SOURCE[0]}")/benchmarks/bench_common.py" 2>/dev/null || true)
  if [[ -n $coretype ]]; then
    export OPENBLAS_CORETYPE=$coretype
    printf '==> OpenBLAS does not know this CPU: OPENBLAS_CORETYPE=%s\n' "$coretype"
  fi
}
