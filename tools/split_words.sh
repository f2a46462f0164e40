# Sourced by tools/check and .ci/run.
# split_words <array> <variable>: the variable's value split like a shell command line
# (quotes respected, nothing run) into the array; exits 1 naming the variable when its
# quotes do not balance. For ATTOGRAD_CMAKE_ARGS and ATTOGRAD_CTEST_ARGS.
split_words() {
  local -n _out=$1
  _out=()
  [[ -n ${!2:-} ]] || return 0
  if ! xargs printf '%.0s' <<<"${!2}" >/dev/null; then
    echo "attograd: cannot parse $2 (unbalanced quotes?)" >&2
    exit 1
  fi
  mapfile -d '' -t _out < <(xargs printf '%s\0' <<<"${!2}")
}
